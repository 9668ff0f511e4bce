// `agentsplit rollout show|start|approve|pause|resume|rollback <slug>` (issue 38): ship a variant with a
// guarded ramp, read where it stands, and move it. show needs a read key, the others an admin key.
import type { Command } from 'commander';
import { CliError } from './api.js';
import { commaList, session } from './session.js';
import { details, table } from './table.js';

interface Step {
  percent: number;
  minMinutes: number;
  minUnits: number | null;
  approval: boolean;
}

interface Rollout {
  variant: string;
  control: string;
  state: string;
  step: number;
  percent: number;
  steps: Step[];
  guardrails: Array<{ metric: string; threshold: number }>;
  onRegression: string;
  approved: number;
  stepStartedAt: string | null;
  reason: string | null;
  history: Array<{
    type: string;
    at: string;
    actor: { kind: string; name?: string };
    data: { percent?: number };
  }>;
}

const START_HELP = `
Examples:
  agentsplit rollout start checkout-prompt --variant B                      (5 → 25 → 50 → 100%, an hour a step)
  agentsplit rollout start checkout-prompt --variant B --steps 10,50,100 --minutes 30 --approve 100
  agentsplit rollout pause checkout-prompt --reason 'support tickets up'
`;

function actor(a: Rollout['history'][number]['actor']): string {
  if (a.kind === 'key') return `key ${a.name ?? ''}`.trim();
  return a.kind;
}

/** The rollout for people: where it stands, its steps (the current one marked) and its moves. */
export function describeRollout(r: Rollout): string {
  const lines = [
    details([
      ['variant', `${r.variant} (the rest: ${r.control})`],
      ['state', r.reason ? `${r.state}: ${r.reason}` : r.state],
      ['served', `${r.percent}%`],
      ['on regression', r.onRegression],
      ['guardrails', r.guardrails.map((g) => `${g.metric} (${g.threshold * 100}%)`).join(', ') || 'none'],
    ]),
    table(
      ['', 'step', 'percent', 'held', 'units', 'approval'],
      r.steps.map((s, i) => [
        i === r.step && r.state !== 'pending' ? '→' : '',
        String(i),
        `${s.percent}%`,
        `${s.minMinutes} min`,
        s.minUnits === null ? '' : String(s.minUnits),
        s.approval ? (r.approved >= i ? 'approved' : 'needed') : '',
      ]),
    ),
    table(
      ['at', 'move', 'by', 'percent'],
      r.history.map((e) => [
        e.at,
        e.type.replace(/^rollout\./, ''),
        actor(e.actor),
        `${e.data.percent ?? ''}%`,
      ]),
    ),
  ];
  return lines.join('\n');
}

function numberList(text: string, what: string): number[] {
  return commaList(text).map((x) => {
    const n = Number(x);
    if (!Number.isFinite(n)) throw new CliError(`${what}: '${x}' is not a number`);
    return n;
  });
}

export function registerRollout(program: Command): void {
  const rollout = program
    .command('rollout')
    .description('ship a variant with a guarded ramp (show needs a read key, the others admin)');
  const path = (slug: string) => `/experiment/${encodeURIComponent(slug)}/rollout`;

  rollout
    .command('show')
    .description("the experiment's rollout: state, share served, steps and moves")
    .argument('<slug>', "the experiment's slug")
    .action(async (slug: string, _options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const { value, text } = await api.json<Rollout>('GET', path(slug));
      out(json ? `${text}\n` : describeRollout(value));
    });

  rollout
    .command('start')
    .description('ramp a variant of a running experiment to everyone')
    .argument('<slug>', "the experiment's slug")
    .requiredOption('--variant <key>', 'the variant to ship')
    .option('--steps <percents>', 'the shares, increasing, ending at 100 (default 5,25,50,100)')
    .option('--minutes <n>', 'minutes each step is held before the next (default 60)')
    .option('--approve <percents>', 'the steps that wait for `agentsplit rollout approve`')
    .option('--min-units <n>', 'units in the variant before each next step')
    .option('--on-regression <action>', 'rollback (default) or pause')
    .addHelpText('after', START_HELP)
    .action(async (slug: string, options: Record<string, string | undefined>, command: Command) => {
      const { api, json, out } = session(command);
      const body: Record<string, unknown> = { variant: options.variant };
      const approve = options.approve === undefined ? [] : numberList(options.approve, '--approve');
      if (
        options.steps !== undefined ||
        options.minutes !== undefined ||
        options.approve ||
        options.minUnits
      ) {
        const percents =
          options.steps === undefined ? [5, 25, 50, 100] : numberList(options.steps, '--steps');
        body.steps = percents.map((percent) => ({
          percent,
          ...(options.minutes === undefined ? {} : { minMinutes: Number(options.minutes) }),
          ...(options.minUnits === undefined ? {} : { minUnits: Number(options.minUnits) }),
          ...(approve.includes(percent) ? { approval: true } : {}),
        }));
      }
      if (options.onRegression !== undefined) body.onRegression = options.onRegression;
      const { value, text } = await api.json<Rollout>('POST', path(slug), body);
      out(json ? `${text}\n` : describeRollout(value));
    });

  for (const [action, what] of [
    ['approve', 'approve the step waiting for an approval'],
    ['pause', 'hold the current share'],
    ['resume', 'go on (the step is held its minutes again)'],
    ['rollback', 'everyone back to the control at once'],
  ] as const) {
    rollout
      .command(action)
      .description(what)
      .argument('<slug>', "the experiment's slug")
      .option('--reason <text>', 'why (kept in the history)')
      .action(async (slug: string, options: { reason?: string }, command: Command) => {
        const { api, json, out } = session(command);
        const body = options.reason === undefined ? { action } : { action, reason: options.reason };
        const { value, text } = await api.json<Rollout>('PATCH', path(slug), body);
        out(json ? `${text}\n` : describeRollout(value));
      });
  }
}
