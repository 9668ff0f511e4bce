// `agentsplit rollout show|simulate|start|approve|pause|resume|rollback <slug>` (issue 38): ship a variant
// with a guarded ramp, try it first (a dry run), read where it stands, and move it. show and simulate need
// a read key, the others an admin key.
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

const SIMULATE_HELP = `
Examples:
  agentsplit rollout simulate checkout-prompt --variant B                   (the experiment's own numbers)
  agentsplit rollout simulate checkout-prompt --variant B --effect cost_usd=0.1 --units-per-hour 500
`;

interface Share {
  chance: number;
  ci: [number, number];
}

interface Scenario {
  rollback: Share;
  completed: Share;
  minutesToFull: { mean: number; p10: number; p50: number; p90: number } | null;
}

interface Simulation {
  variant: string;
  control: string;
  runs: number;
  unitsPerHour: number;
  monitorIntervalSeconds: number;
  guardrails: Array<{ metric: string; threshold: number; effect: number; effectFrom: string }>;
  identicalArms: Scenario;
  withEffects: Scenario;
  assumptions: string[];
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
const share = (s: Share) => `${pct(s.chance)} (95%: ${pct(s.ci[0])}–${pct(s.ci[1])})`;
const minutes = (m: Scenario['minutesToFull']) =>
  m === null ? 'never, within the horizon' : `${m.p50} min (p10 ${m.p10}, p90 ${m.p90})`;

/** The dry run for people: the false-rollback chance, then with the effects, then what it assumed. */
export function describeSimulation(s: Simulation): string {
  const effects = s.guardrails.map(
    (g) => `${g.metric} ${g.effect >= 0 ? '+' : ''}${pct(g.effect)} (${g.effectFrom})`,
  );
  return details([
    [
      'ramp',
      `${s.variant} (the rest: ${s.control}), ${s.runs} runs, ${Math.round(s.unitsPerHour)} units/h, a round every ${s.monitorIntervalSeconds} s`,
    ],
    ['false rollback', `${share(s.identicalArms.rollback)} with identical arms`],
    ['time to 100%', minutes(s.identicalArms.minutesToFull)],
    ['with effects', effects.join(', ') || 'none'],
    ['rolled back', share(s.withEffects.rollback)],
    ['reaches 100%', `${share(s.withEffects.completed)}, ${minutes(s.withEffects.minutesToFull)}`],
    ...s.assumptions.map((a): [string, string] => ['assumes', a]),
  ]);
}

/** --effect cost_usd=0.1,error=0.05 as {cost_usd: 0.1, error: 0.05}. */
function effectsOf(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of commaList(text)) {
    const [metric, value] = part.split('=');
    const n = Number(value);
    if (!metric || value === undefined || !Number.isFinite(n)) {
      throw new CliError(`--effect: '${part}' is not metric=relative-change (cost_usd=0.1 is 10% higher)`);
    }
    out[metric] = n;
  }
  return out;
}

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

/** The options a start and a dry run share: the variant and the ramp. */
function rampOptions(command: Command): Command {
  return command
    .argument('<slug>', "the experiment's slug")
    .requiredOption('--variant <key>', 'the variant to ship')
    .option('--steps <percents>', 'the shares, increasing, ending at 100 (default 5,25,50,100)')
    .option('--minutes <n>', 'minutes each step is held before the next (default 60)')
    .option('--approve <percents>', 'the steps that wait for `agentsplit rollout approve`')
    .option('--min-units <n>', 'units in the variant before each next step')
    .option('--on-regression <action>', 'rollback (default) or pause');
}

/** The body of a start (and a dry run) from those options. */
function rampBody(options: Record<string, string | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = { variant: options.variant };
  const approve = options.approve === undefined ? [] : numberList(options.approve, '--approve');
  if (options.steps !== undefined || options.minutes !== undefined || options.approve || options.minUnits) {
    const percents = options.steps === undefined ? [5, 25, 50, 100] : numberList(options.steps, '--steps');
    body.steps = percents.map((percent) => ({
      percent,
      ...(options.minutes === undefined ? {} : { minMinutes: Number(options.minutes) }),
      ...(options.minUnits === undefined ? {} : { minUnits: Number(options.minUnits) }),
      ...(approve.includes(percent) ? { approval: true } : {}),
    }));
  }
  if (options.onRegression !== undefined) body.onRegression = options.onRegression;
  return body;
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

  rampOptions(rollout.command('start').description('ramp a variant of a running experiment to everyone'))
    .addHelpText('after', START_HELP)
    .action(async (slug: string, options: Record<string, string | undefined>, command: Command) => {
      const { api, json, out } = session(command);
      const { value, text } = await api.json<Rollout>('POST', path(slug), rampBody(options));
      out(json ? `${text}\n` : describeRollout(value));
    });

  rampOptions(
    rollout
      .command('simulate')
      .description('a dry run: the chance of a false rollback and the time to 100%, nothing started'),
  )
    .option('--effect <metric=change,...>', "the variant's relative change per guardrail (default: observed)")
    .option('--units-per-hour <n>', 'units entering per hour (default: observed)')
    .option('--runs <n>', 'ramps played per scenario (default 1000)')
    .option('--seed <n>', 'the same seed answers the same numbers (default 1)')
    .addHelpText('after', SIMULATE_HELP)
    .action(async (slug: string, options: Record<string, string | undefined>, command: Command) => {
      const { api, json, out } = session(command);
      const body = rampBody(options);
      if (options.effect !== undefined) body.effects = effectsOf(options.effect);
      for (const [option, field] of [
        ['unitsPerHour', 'unitsPerHour'],
        ['runs', 'runs'],
        ['seed', 'seed'],
      ] as const) {
        if (options[option] !== undefined) body[field] = Number(options[option]);
      }
      const { value, text } = await api.json<Simulation>('POST', `${path(slug)}/simulate`, body);
      out(json ? `${text}\n` : describeSimulation(value));
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
