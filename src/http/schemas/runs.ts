// The schemas of offline runs (issue 40): opening one, reading it, and its paired comparison.
import { Type } from 'typebox';
import { MAX_TRIALS } from '../../core/offline-runs.js';

const RUN_ID = '019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b';

export const OpenRunBody = Type.Object(
  {
    dataset: Type.String({ minLength: 1, maxLength: 200, description: "The dataset's name" }),
    version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'The dataset version (default: its newest)' }),
    ),
    variants: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
        minItems: 2,
        maxItems: 50,
        description:
          "The variants to run (default: every variant); the first is the comparison's default control",
      }),
    ),
    trials: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TRIALS,
        description: 'Runs of each variant on each item (default 1)',
      }),
    ),
  },
  { examples: [{ dataset: 'support-questions', variants: ['A', 'B'], trials: 3 }] },
);

const RUN_EXAMPLE = {
  id: RUN_ID,
  experiment: 'checkout-prompt',
  dataset: 'support-questions',
  version: 2,
  variants: ['A', 'B'],
  trials: 3,
  items: 200,
  createdAt: '2026-11-29T09:00:00.000Z',
};

export const RunSchema = Type.Object(
  {
    id: Type.String(),
    experiment: Type.String({ description: "The experiment's slug" }),
    dataset: Type.String(),
    version: Type.Integer({ description: 'The dataset version whose items the run answers' }),
    variants: Type.Array(Type.String()),
    trials: Type.Integer(),
    items: Type.Integer({ description: 'Items in that dataset version' }),
    createdAt: Type.String(),
  },
  { title: 'Run', description: 'An offline run: variants over one dataset version', examples: [RUN_EXAMPLE] },
);

export const RunListResponse = Type.Object(
  {
    runs: Type.Array(RunSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass back as cursor for older runs; null on the last page',
    }),
  },
  { description: 'Newest first', examples: [{ runs: [RUN_EXAMPLE], nextCursor: null }] },
);

export const RunListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Runs per page', examples: [20] }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 64, description: "The previous page's nextCursor", examples: [RUN_ID] }),
  ),
});

export const RunParams = Type.Object({ id: Type.String({ maxLength: 64, examples: [RUN_ID] }) });

export const ComparisonQuery = Type.Object({
  control: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: "Default: the run's first variant" }),
  ),
  alpha: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 0.5, description: 'Default 0.05' })),
  metrics: Type.Optional(
    Type.String({ maxLength: 4000, description: 'Comma-separated metric names (default: all)' }),
  ),
});

const Num = Type.Number();
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Interval = Type.Tuple([Num, Num]);

const ComparisonOfVariant = Type.Object({
  variant: Type.String(),
  items: Type.Integer({ description: 'Items with values in both variants' }),
  unpaired: Type.Integer({ description: 'Items with values in only one of them (left out)' }),
  control: Type.Object({ mean: Num }),
  treatment: Type.Object({ mean: Num }),
  difference: Type.Object({
    estimate: Num,
    ci: Nullable(Interval),
    se: Nullable(Num),
    pValue: Nullable(Num),
  }),
  adjustedPValue: Nullable(Num),
  significant: Type.Boolean(),
  better: Nullable(Type.Boolean()),
  wilcoxon: Nullable(
    Type.Object({
      statistic: Num,
      pValue: Num,
      method: Type.Union([Type.Literal('exact'), Type.Literal('permutation'), Type.Literal('normal')]),
      n: Type.Integer(),
    }),
  ),
  bootstrap: Nullable(Type.Object({ ci: Interval, resamples: Type.Integer() })),
  mcnemar: Nullable(Type.Object({ b: Type.Integer(), c: Type.Integer(), pValue: Num })),
  wins: Type.Integer({
    description:
      "Items where the variant did better than the control (lower for a metric whose direction is 'decrease'; higher when none is declared)",
  }),
  ties: Type.Integer(),
  losses: Type.Integer({ description: 'Items where it did worse' }),
  variance: Nullable(Type.Object({ generation: Num, items: Num })),
  itemsNeeded: Nullable(Type.Integer()),
});

export const ComparisonResponse = Type.Object(
  {
    run: RunSchema,
    control: Type.String(),
    alpha: Num,
    items: Type.Integer(),
    variants: Type.Array(Type.Object({ key: Type.String(), results: Type.Integer(), items: Type.Integer() })),
    metrics: Type.Array(
      Type.Object({
        name: Type.String(),
        kind: Type.Union([Type.Literal('mean'), Type.Literal('proportion')]),
        direction: Nullable(Type.Union([Type.Literal('increase'), Type.Literal('decrease')])),
        comparisons: Type.Array(ComparisonOfVariant),
      }),
    ),
    verdict: Type.Object({ summary: Type.String(), sentences: Type.Array(Type.String()) }),
    changed: Type.Array(
      Type.Object({
        itemId: Type.String(),
        metric: Type.String(),
        variant: Type.String(),
        difference: Num,
        control: Type.Object({ mean: Num, output: Type.Unknown() }),
        treatment: Type.Object({ mean: Num, output: Type.Unknown() }),
      }),
    ),
  },
  {
    title: 'RunComparison',
    description: 'Every variant against the control over the items both answered, per metric',
    examples: [
      {
        run: RUN_EXAMPLE,
        control: 'A',
        alpha: 0.05,
        items: 200,
        variants: [
          { key: 'A', results: 600, items: 200 },
          { key: 'B', results: 600, items: 200 },
        ],
        metrics: [],
        verdict: {
          summary:
            'B beats A on `correct`: +6.0 points [+2.1, +9.8] over 200 items, 41 wins / 29 losses (p = 0.0031)',
          sentences: [],
        },
        changed: [],
      },
    ],
  },
);
