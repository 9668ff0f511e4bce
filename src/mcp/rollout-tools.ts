// The rollout tools (issue 38): read a rollout, try one (a dry run), start one, move one. Starting and moving
// change what live users are served: refused unless `confirm` repeats the slug exactly, as
// update_experiment's traffic changes. The dry run changes nothing.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod/v4';
import { type Call, ok, run, Slug, send, slugPart, ToolError } from './tool-kit.js';

const Confirm = z.string().optional().describe('The slug again: required, since live users are affected');

function confirmed(slug: string, confirm: string | undefined, what: string): void {
  if (confirm !== slug) {
    throw new ToolError(
      `${what} of '${slug}' changes what live users are served: call again with confirm: '${slug}'`,
    );
  }
}

/** One line a person reads first: the state, the share served, and why it stopped. */
function summary(r: {
  variant: string;
  control: string;
  state: string;
  percent: number;
  reason?: string | null;
}) {
  const why = r.reason ? ` (${r.reason})` : '';
  return `Rollout of ${r.variant}: ${r.state}, ${r.percent}% served ${r.variant}, the rest ${r.control}${why}.`;
}

type Rollout = Parameters<typeof summary>[0];

export function registerRolloutTools(server: McpServer, call: Call): void {
  const path = (slug: string) => `/experiment/${slugPart(slug)}/rollout`;
  const answer = (r: unknown) => ok(r, `${summary(r as Rollout)}\n${JSON.stringify(r, null, 2)}`);

  server.registerTool(
    'get_rollout',
    {
      title: "Read an experiment's rollout",
      description:
        'The newest rollout of an experiment: its state (pending, running, paused, completed, rolled_back), ' +
        'the step and the share served the variant, the steps, guardrails and the history of its moves ' +
        '(who made each: a key, the monitor, or the schedule). Needs a read key.',
      inputSchema: { slug: Slug },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ slug }) => run(async () => answer(await send(call, 'GET', path(slug)))),
  );

  server.registerTool(
    'start_rollout',
    {
      title: 'Ship a variant with a guarded ramp',
      description:
        'Ramps a variant of a running experiment to everyone in steps (default 5 → 25 → 50 → 100%, an hour ' +
        "each); the rest get the control (the experiment's defaultVariant or first variant). The monitor " +
        'starts each step once its time, units and approval are met, and rolls back (or pauses) when a ' +
        'guardrail is proven worse than its threshold. Refused unless confirm repeats the slug. Needs an admin key.',
      inputSchema: {
        slug: Slug,
        variant: z.string().describe('The variant to ship, e.g. the winner of the analysis'),
        steps: z
          .array(
            z.object({
              percent: z.number().describe('Share of units served the variant, increasing, the last 100'),
              minMinutes: z.number().optional().describe('Minutes held before the next step (default 60)'),
              minUnits: z.number().int().optional().describe('Units in the variant before the next step'),
              approval: z
                .boolean()
                .optional()
                .describe('This step waits for a person (change_rollout approve)'),
            }),
          )
          .optional(),
        onRegression: z.enum(['rollback', 'pause']).optional().describe('Default rollback'),
        confirm: Confirm,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ slug, confirm, ...body }) =>
      run(async () => {
        confirmed(slug, confirm, `starting a rollout of ${body.variant}`);
        return answer(await send(call, 'POST', path(slug), body));
      }),
  );

  server.registerTool(
    'simulate_rollout',
    {
      title: 'Dry-run a rollout',
      description:
        "Plays the ramp start_rollout would make many times through the monitor's own rules and answers the " +
        'chance of a false rollback (identical arms), the minutes to 100%, and with the effects (stated per ' +
        "guardrail as a relative change, else the experiment's observed lift) the chance it is rolled back. " +
        "Uses the experiment's results for the baseline and rate unless unitsPerHour is given. Starts nothing. " +
        'Needs a read key.',
      inputSchema: {
        slug: Slug,
        variant: z.string().describe('The variant to ship'),
        effects: z
          .record(z.string(), z.number())
          .optional()
          .describe("Per guardrail metric, the variant's relative change (0.1: 10% higher)"),
        unitsPerHour: z
          .number()
          .positive()
          .optional()
          .describe('Units entering per hour (default: observed)'),
        runs: z.number().int().min(1).max(10000).optional().describe('Ramps per scenario (default 1000)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ slug, ...body }) =>
      run(async () => {
        const s = (await send(call, 'POST', `${path(slug)}/simulate`, body)) as {
          runs: number;
          identicalArms: { rollback: { chance: number }; minutesToFull: { p50: number } | null };
          withEffects: { rollback: { chance: number } };
        };
        const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
        const full = s.identicalArms.minutesToFull;
        const line =
          `Dry run of ${body.variant} over ${s.runs} ramps: a false rollback in ${pct(s.identicalArms.rollback.chance)}` +
          `${full ? `, 100% after ${full.p50} min` : ''}; with the effects, rolled back in ${pct(s.withEffects.rollback.chance)}.`;
        return ok(s, `${line}\n${JSON.stringify(s, null, 2)}`);
      }),
  );

  server.registerTool(
    'change_rollout',
    {
      title: 'Approve, pause, resume or roll back a rollout',
      description:
        'approve: the step waiting for an approval may start; pause: hold the current share; resume: go on ' +
        '(the step is held its minutes again); rollback: everyone back to the control at once. Refused ' +
        'unless confirm repeats the slug. Needs an admin key.',
      inputSchema: {
        slug: Slug,
        action: z.enum(['approve', 'pause', 'resume', 'rollback']),
        reason: z.string().max(2000).optional().describe('Why (kept in the history)'),
        confirm: Confirm,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ slug, confirm, ...body }) =>
      run(async () => {
        confirmed(slug, confirm, `${body.action} on the rollout`);
        return answer(await send(call, 'PATCH', path(slug), body));
      }),
  );
}
