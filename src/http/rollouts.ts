// Routes for rollouts (issue 38): start one (admin), read it with its history (read), act on it (admin:
// approve, pause, resume, rollback).
import Type from 'typebox';
import type { Actor } from '../core/events.js';
import type { Principal } from '../core/keys.js';
import { REGRESSION_ACTIONS, ROLLOUT_ACTIONS, ROLLOUT_STATES } from '../core/rollout.js';
import type { RolloutService } from '../services/rollouts.js';
import { type Route, route } from './route.js';
import { conflictResponse, errorResponses, JsonObjectSchema, SlugParams } from './schemas/common.js';

const literals = <const T extends readonly string[]>(values: T, description: string) =>
  Type.Enum([...values] as T[number][], { type: 'string', description });

export const StepSchema = Type.Object(
  {
    percent: Type.Number({
      exclusiveMinimum: 0,
      maximum: 100,
      description: 'The share of units served the variant',
    }),
    minMinutes: Type.Optional(
      Type.Number({
        minimum: 0,
        description: 'Minutes the step is held before the next (default 60; 0 at 100%)',
      }),
    ),
    minUnits: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
        description: 'Units in the variant before the next step (default: no minimum)',
      }),
    ),
    approval: Type.Optional(Type.Boolean({ description: "Entering this step waits for a person's approve" })),
  },
  { additionalProperties: false },
);

export const GuardrailSchema = Type.Object(
  {
    metric: Type.String({ description: 'A metric the experiment declares with role "guardrail"' }),
    threshold: Type.Number({
      minimum: 0,
      description:
        'The relative loss tolerated, a fraction (0.05: 5% worse); a regression is an interval beyond it',
    }),
  },
  { additionalProperties: false },
);

const EXAMPLE = {
  id: '0193a4c2-7d1e-7c3a-9f00-5b2d7e1c4a10',
  experimentVersion: 1,
  variant: 'B',
  control: 'A',
  state: 'running',
  step: 1,
  percent: 25,
  steps: [
    { percent: 5, minMinutes: 60, minUnits: null, approval: false },
    { percent: 25, minMinutes: 60, minUnits: null, approval: false },
    { percent: 50, minMinutes: 60, minUnits: null, approval: false },
    { percent: 100, minMinutes: 0, minUnits: null, approval: false },
  ],
  guardrails: [{ metric: 'latency_ms', threshold: 0.05 }],
  onRegression: 'rollback',
  seed: 'checkout-prompt:rollout:B',
  approved: -1,
  stepStartedAt: '2025-06-02T10:00:00.000Z',
  reason: null,
  stepCounts: { calls: 9120, users: { variant: 212, control: 4031 } },
  createdAt: '2025-06-02T09:00:00.000Z',
  updatedAt: '2025-06-02T10:00:00.000Z',
  history: [],
};

const RolloutSchema = Type.Object(
  {
    id: Type.String(),
    experimentVersion: Type.Integer({
      description: "The experiment's version it ramps (a new version leaves it)",
    }),
    variant: Type.String({ description: 'The variant rolled out' }),
    control: Type.String({ description: 'What every other unit is served' }),
    state: literals(ROLLOUT_STATES, 'pending → running ⇄ paused → completed | rolled_back'),
    step: Type.Integer({ description: 'The current step (index into steps)' }),
    percent: Type.Number({ description: 'The share served the variant now (0 pending or rolled back)' }),
    steps: Type.Array(
      Type.Object({
        percent: Type.Number(),
        minMinutes: Type.Number(),
        minUnits: Type.Union([Type.Integer(), Type.Null()]),
        approval: Type.Boolean(),
      }),
    ),
    guardrails: Type.Array(Type.Object({ metric: Type.String(), threshold: Type.Number() })),
    onRegression: literals(REGRESSION_ACTIONS, 'What a proven regression does: rollback (default) or pause'),
    seed: Type.String({
      description: 'The membership hash seed: a unit in the variant stays in it as the ramp grows',
    }),
    approved: Type.Integer({ description: 'The highest step approved (-1: none)' }),
    stepStartedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it is paused or rolled back' }),
    stepCounts: Type.Optional(
      Type.Union(
        [
          Type.Object({
            calls: Type.Integer({ description: 'Assign calls of the variant and the control' }),
            users: Type.Union(
              [Type.Object({ variant: Type.Integer(), control: Type.Integer() }), Type.Null()],
              {
                description: 'Distinct users seen in each arm (sticky experiments); null for random ones',
              },
            ),
          }),
          Type.Null(),
        ],
        {
          description:
            "The traffic counted at the monitor's first round in the current step: the traffic checks (no calls: the step is held; too few users gained by the variant at the step's share: a sample ratio mismatch) count from here; null until then",
        },
      ),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    history: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String(),
        at: Type.String({ format: 'date-time' }),
        actor: JsonObjectSchema,
        experiment: Type.Union([Type.String(), Type.Null()]),
        data: JsonObjectSchema,
      }),
      { description: 'Every move, oldest first, with who made it (a key, the monitor or the schedule)' },
    ),
  },
  { title: 'Rollout', examples: [EXAMPLE] },
);

export const StartBody = Type.Object(
  {
    variant: Type.String({ description: 'The variant to ramp to everyone' }),
    steps: Type.Optional(
      Type.Array(StepSchema, {
        minItems: 1,
        maxItems: 20,
        description: 'The ramp, increasing, ending at 100 (default 5 → 25 → 50 → 100%, an hour a step)',
      }),
    ),
    guardrails: Type.Optional(
      Type.Array(GuardrailSchema, {
        maxItems: 50,
        description: "Default: the experiment's guardrails and thresholds",
      }),
    ),
    onRegression: Type.Optional(
      literals(REGRESSION_ACTIONS, 'rollback (default): everyone back to control at once'),
    ),
  },
  { additionalProperties: false, examples: [{ variant: 'B', steps: [{ percent: 10 }, { percent: 100 }] }] },
);

const ActionBody = Type.Object(
  {
    action: literals(ROLLOUT_ACTIONS, 'approve the step waiting next, pause, resume, or roll back'),
    reason: Type.Optional(Type.String({ maxLength: 2000, description: 'Why (kept in the event)' })),
  },
  { additionalProperties: false, examples: [{ action: 'pause', reason: 'support tickets up' }] },
);

export function rolloutRoutes(rollouts: RolloutService, actorOf: (p: Principal) => Actor): Route[] {
  const tags = ['rollouts'];
  return [
    route({
      method: 'POST',
      url: '/experiment/:slug/rollout',
      scope: 'admin',
      schema: {
        tags,
        summary: 'Ramp a variant to everyone in steps, watched by the guardrail monitor',
        params: SlugParams,
        body: StartBody,
        response: {
          200: RolloutSchema,
          ...errorResponses,
          409: conflictResponse(
            'the experiment has a live rollout already: roll it back or let it complete first',
          ),
        },
      },
      handle: ({ params, body, principal }) => rollouts.start(params.slug, body, actorOf(principal)),
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug/rollout',
      scope: 'read',
      schema: {
        tags,
        summary: "The experiment's newest rollout: its state, step, share served and history",
        params: SlugParams,
        response: { 200: RolloutSchema, ...errorResponses },
      },
      handle: ({ params }) => rollouts.get(params.slug),
    }),
    route({
      method: 'PATCH',
      url: '/experiment/:slug/rollout',
      scope: 'admin',
      schema: {
        tags,
        summary: 'Approve the next step, pause, resume or roll back the rollout',
        params: SlugParams,
        body: ActionBody,
        response: {
          200: RolloutSchema,
          ...errorResponses,
          409: conflictResponse('cannot resume a rollout that is running; allowed: approve, pause, rollback'),
        },
      },
      handle: ({ params, body, principal }) =>
        rollouts.act(params.slug, body.action, actorOf(principal), body.reason ?? null),
    }),
  ];
}
