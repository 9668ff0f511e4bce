// The time series as answered: one TypeBox declaration from which the OpenAPI schema (http/timeseries.ts)
// and the TypeScript types (`SeriesPeriod`, what cumulativeSeries makes, and `Timeseries`, what the
// service answers) both come, so a field cannot exist in one only.
import { type Static, Type } from 'typebox';
import { Better, Effect, Nullable, Test, Worse } from './schema-parts.js';

const SeriesVariantSchema = Type.Object(
  {
    key: Type.String({ description: "The variant's key" }),
    n: Type.Integer({ description: 'Values of the metric from the start up to the end of this period' }),
    mean: Nullable('Their mean (the share of true, for a proportion); null when n = 0'),
    quantile: Type.Optional(
      Nullable("A quantile statistic: the variant's quantile as of the period, what the effects compare"),
    ),
    absolute: Type.Optional(
      Effect('Cumulative treatment mean minus control mean, in the metric’s unit. Absent for the control'),
    ),
    relative: Type.Optional(
      Effect('Cumulative lift: (treatment − control) / |control mean|; 0.05 is +5 %. Absent for the control'),
    ),
    test: Type.Optional(
      Test("The test that produced this period's intervals (the analysis' own test on the data so far)"),
    ),
    significant: Type.Optional(
      Type.Boolean({ description: 'As of this period, the deciding test rejects (p < alpha)' }),
    ),
    better: Better,
    worse: Worse,
    chanceToWin: Type.Optional(
      Nullable(
        'bayesian: the probability that this treatment is better; null otherwise and without a direction',
      ),
    ),
  },
  { description: 'One variant as of the end of the period; a treatment with its cumulative effect' },
);

const SeriesPeriodSchema = Type.Object(
  {
    start: Type.String({ description: 'The start of the UTC hour or day, ISO 8601' }),
    exposures: Type.Record(Type.String(), Type.Integer(), {
      description: 'Assignments per variant key in this period alone (not cumulative)',
    }),
    variants: Type.Array(SeriesVariantSchema, {
      description: "Every variant, in the experiment's order, cumulative up to the end of this period",
    }),
  },
  { description: 'One hour or day' },
);

const TIMESERIES_EXAMPLE = {
  slug: 'checkout-prompt',
  metric: 'latency_ms',
  kind: 'mean',
  direction: 'decrease',
  unit: 'call',
  statistic: 'mean',
  interval: 'day',
  control: 'A',
  method: 'frequentist',
  alpha: 0.05,
  sided: 'two',
  periods: [
    {
      start: '2025-06-02T00:00:00.000Z',
      exposures: { A: 104, B: 101 },
      variants: [
        { key: 'A', n: 98, mean: 921 },
        {
          key: 'B',
          n: 95,
          mean: 874,
          absolute: { estimate: -47, ci: [-113.2, 19.2], stdError: 33.6, pValue: 0.163 },
          relative: { estimate: -0.051, ci: [-0.1218, 0.0198], stdError: 0.0361, pValue: 0.159 },
          significant: false,
          better: false,
          worse: false,
          chanceToWin: null,
        },
      ],
    },
    {
      start: '2025-06-03T00:00:00.000Z',
      exposures: { A: 110, B: 104 },
      variants: [
        { key: 'A', n: 210, mean: 910 },
        {
          key: 'B',
          n: 198,
          mean: 862,
          absolute: { estimate: -48, ci: [-93.74, -2.257], stdError: 23.27, pValue: 0.03977 },
          relative: { estimate: -0.05275, ci: [-0.1017, -0.003805], stdError: 0.0249, pValue: 0.03473 },
          significant: true,
          better: true,
          worse: false,
          chanceToWin: null,
        },
      ],
    },
  ],
  warnings: [],
};

export const TimeseriesSchema = Type.Object(
  {
    slug: Type.String({ description: "The experiment's slug" }),
    metric: Type.String({ description: 'The metric' }),
    kind: Type.String({ description: 'mean (numbers) or proportion (true/false, the share of true)' }),
    direction: Type.Union([Type.String(), Type.Null()], {
      description: "The declared direction ('increase' or 'decrease' is better); null: undeclared",
    }),
    unit: Type.String({
      description:
        'user: a sticky experiment whose values all belong to users: each user one unit, the same ratio of sums ' +
        'and delta method as the analysis (its last period equals the analysis); call: each result one unit',
    }),
    statistic: Type.String({
      description: "What the effects compare: mean, or the metric definition's quantile (p50, p90, p95, p99)",
    }),
    interval: Type.String({ description: 'day, hour or minute' }),
    control: Type.String({ description: 'The variant the others are compared with' }),
    method: Type.String({ description: 'frequentist, bayesian or sequential' }),
    alpha: Type.Number({ description: 'The significance level used' }),
    sided: Type.String({ description: 'The alternative tested: two, greater or less' }),
    periods: Type.Array(SeriesPeriodSchema, {
      description:
        'Oldest first; only hours or days with exposures or values of the metric. The last period is the ' +
        'analysis of all the data (per call, every version pooled with the current variants)',
    }),
    warnings: Type.Array(Type.String(), {
      description:
        "About the data as a whole and the latest period's comparisons, prefixed with metric/variant",
    }),
  },
  {
    title: 'Timeseries',
    description:
      "A metric's cumulative effect, hour by hour or day by day: how the estimate and its interval settled",
    examples: [TIMESERIES_EXAMPLE],
  },
);

export type SeriesVariant = Static<typeof SeriesVariantSchema>;
export type SeriesPeriod = Static<typeof SeriesPeriodSchema>;
export type Timeseries = Static<typeof TimeseriesSchema>;
