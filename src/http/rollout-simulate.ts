// Route of a rollout's dry run (issue 38, item 7): POST /experiment/:slug/rollout/simulate plays the ramp a
// start would make, many times, through the monitor's rules, and answers how often a guardrail would stop it
// with identical arms (a false rollback) and with the effects, and how long it takes to reach 100%.
import Type from 'typebox';
import type { RolloutSimulator } from '../services/rollout-simulate.js';
import { StartBody } from './rollouts.js';
import { type Route, route } from './route.js';
import { errorResponses, SlugParams } from './schemas/common.js';

const Share = Type.Object(
  {
    chance: Type.Number({ description: 'The share of runs' }),
    ci: Type.Array(Type.Number(), { description: '95% Wilson interval of the chance' }),
  },
  { additionalProperties: false },
);

const Spread = Type.Union(
  [
    Type.Object({ mean: Type.Number(), p10: Type.Number(), p50: Type.Number(), p90: Type.Number() }),
    Type.Null(),
  ],
  { description: 'Minutes, over the runs that got there (null: none did)' },
);

const Scenario = Type.Object({
  rollback: Type.Intersect([Share], {
    description:
      'The monitor stopped the ramp on a guardrail (rolled back, or paused with onRegression pause)',
  }),
  completed: Type.Intersect([Share], { description: 'The ramp reached 100% within the horizon' }),
  minutesToFull: Spread,
  minutesToRollback: Spread,
});

const SimulateBody = Type.Object(
  {
    ...StartBody.properties,
    effects: Type.Optional(
      Type.Record(Type.String(), Type.Number(), {
        description:
          "Per guardrail: the variant's mean relative to the control's (0.3: 30% higher); default: the observed lift",
      }),
    ),
    baseline: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          { mean: Type.Number(), stdDev: Type.Optional(Type.Number({ minimum: 0 })) },
          { additionalProperties: false },
        ),
        {
          description:
            "Per guardrail: the control's mean and standard deviation per unit (no stdDev: a true/false metric, mean its share of true); default: the control's results",
        },
      ),
    ),
    unitsPerHour: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: 'Units entering per hour; default: observed' }),
    ),
    monitorIntervalSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86400,
        description: "Default: the server's MONITOR_INTERVAL_SECONDS",
      }),
    ),
    runs: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10000, description: 'Ramps per scenario (default 1000)' }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2 ** 31 - 1,
        description: 'Default 1: the same plan answers the same numbers',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ variant: 'B', effects: { cost_usd: 0 }, runs: 1000 }],
  },
);

const share = (chance: number, ci: [number, number]) => ({ chance, ci });
const EXAMPLE = {
  variant: 'B',
  control: 'A',
  runs: 1000,
  seed: 1,
  monitorIntervalSeconds: 60,
  unitsPerHour: 300,
  minimumUnits: 100,
  alpha: 0.05,
  steps: [5, 25, 50, 100].map((percent) => ({
    percent,
    minMinutes: percent === 100 ? 0 : 60,
    minUnits: null,
    approval: false,
  })),
  onRegression: 'rollback',
  guardrails: [
    {
      metric: 'cost_usd',
      threshold: 0,
      direction: 'decrease',
      kind: 'mean',
      mean: 1.45,
      stdDev: 0.29,
      effect: 0.3,
      baseline: 'observed',
      effectFrom: 'observed',
    },
  ],
  startUnits: { control: 301, variant: 299 },
  identicalArms: {
    rollback: share(0.004, [0.0016, 0.0102]),
    completed: share(0.996, [0.9898, 0.9984]),
    minutesToFull: { mean: 180, p10: 180, p50: 180, p90: 180 },
    minutesToRollback: { mean: 95, p10: 61, p50: 90, p90: 140 },
  },
  withEffects: {
    rollback: share(1, [0.9962, 1]),
    completed: share(0, [0, 0.0038]),
    minutesToFull: null,
    minutesToRollback: { mean: 1, p10: 1, p50: 1, p90: 1 },
  },
  assumptions: [
    'units arrive at a steady rate (Poisson), each a new unit; a metric is normal per unit (a mean) or true/false (a proportion)',
  ],
};

const SimulationSchema = Type.Object(
  {
    variant: Type.String(),
    control: Type.String(),
    runs: Type.Integer({ description: 'Runs played per scenario' }),
    seed: Type.Integer(),
    monitorIntervalSeconds: Type.Number(),
    unitsPerHour: Type.Number(),
    minimumUnits: Type.Integer({ description: 'Units each arm needs before a guardrail is judged' }),
    alpha: Type.Number({ description: "The monitor's one-sided level for each guardrail" }),
    steps: StartBody.properties.steps,
    onRegression: Type.String(),
    guardrails: Type.Array(
      Type.Object({
        metric: Type.String(),
        threshold: Type.Number(),
        direction: Type.String(),
        kind: Type.String({ description: 'mean or proportion' }),
        mean: Type.Number({ description: "The control's mean per unit" }),
        stdDev: Type.Number(),
        effect: Type.Number({ description: "The variant's relative change used by withEffects" }),
        baseline: Type.String({ description: 'observed (the results) or stated (the request)' }),
        effectFrom: Type.String({ description: 'observed, stated, or none (no data: 0)' }),
      }),
    ),
    startUnits: Type.Object({ control: Type.Integer(), variant: Type.Integer() }),
    identicalArms: Type.Intersect([Scenario], {
      description: 'The variant exactly like the control: its rollback chance is the false-rollback rate',
    }),
    withEffects: Type.Intersect([Scenario], {
      description: "The variant moved by each guardrail's effect; starting from the data already there",
    }),
    assumptions: Type.Array(Type.String()),
  },
  { title: 'RolloutSimulation', examples: [EXAMPLE] },
);

export function rolloutSimulateRoutes(simulator: RolloutSimulator): Route[] {
  return [
    route({
      method: 'POST',
      url: '/experiment/:slug/rollout/simulate',
      scope: 'read',
      schema: {
        tags: ['rollouts'],
        summary:
          'Dry run: the chance of a false rollback and the time to 100%, by playing the ramp many times',
        params: SlugParams,
        body: SimulateBody,
        response: { 200: SimulationSchema, ...errorResponses },
      },
      handle: ({ params, body }) => simulator.simulate(params.slug, body),
    }),
  ];
}
