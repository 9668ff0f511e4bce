// GET /experiment/:slug/analysis/timeseries — one metric's cumulative effect per hour or day, from the
// hourly rollups; GET /experiment/:slug/versions — the variant definitions of every version.
import { Type } from 'typebox';
import type { TimeseriesService } from '../services/timeseries.js';
import { Better, comparisonQuery, Effect, Nullable, Worse } from '../stats/schema-parts.js';
import { type Route, route } from './route.js';
import { errorResponses, SlugParams } from './schemas/common.js';
import { VariantSchema } from './schemas/experiments.js';

const TimeseriesQuery = Type.Object({
  metric: Type.String({
    minLength: 1,
    maxLength: 128,
    description: 'The metric, as named in the logged metrics',
    examples: ['latency_ms'],
  }),
  interval: Type.Optional(
    Type.Enum(['day', 'hour'], {
      type: 'string',
      default: 'day',
      description: 'The bucket: a UTC day (the sum of its 24 hours) or a UTC hour',
    }),
  ),
  method: Type.Optional(
    Type.Enum(['frequentist', 'bayesian', 'sequential'], {
      type: 'string',
      default: 'frequentist',
      description:
        'As in the analysis. Looking at a fixed-horizon test bucket after bucket inflates false positives: ' +
        'sequential is the method whose intervals stay valid however often they are read',
    }),
  ),
  ...comparisonQuery,
});

const SeriesVariant = Type.Object(
  {
    key: Type.String({ description: "The variant's key" }),
    n: Type.Integer({ description: 'Values of the metric from the start up to the end of this bucket' }),
    mean: Nullable('Their mean (the share of true, for a proportion); null when n = 0'),
    quantile: Type.Optional(
      Nullable("A quantile statistic: the variant's quantile as of the bucket, what the effects compare"),
    ),
    absolute: Type.Optional(
      Effect('Cumulative treatment mean minus control mean, in the metric’s unit. Absent for the control'),
    ),
    relative: Type.Optional(
      Effect('Cumulative lift: (treatment − control) / |control mean|; 0.05 is +5 %. Absent for the control'),
    ),
    significant: Type.Optional(
      Type.Boolean({ description: 'As of this bucket, p < alpha (bayesian: chanceToWin beyond 1 − alpha)' }),
    ),
    better: Better,
    worse: Worse,
    chanceToWin: Type.Optional(
      Nullable(
        'bayesian: the probability that this treatment is better; null otherwise and without a direction',
      ),
    ),
  },
  { description: 'One variant as of the end of the bucket; a treatment with its cumulative effect' },
);

const SeriesBucket = Type.Object(
  {
    bucket: Type.String({ description: 'The start of the UTC hour or day, ISO 8601' }),
    exposures: Type.Record(Type.String(), Type.Integer(), {
      description: 'Assignments per variant key in this bucket alone (not cumulative)',
    }),
    variants: Type.Array(SeriesVariant, {
      description: "Every variant, in the experiment's order, cumulative up to the end of this bucket",
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
  buckets: [
    {
      bucket: '2025-06-02T00:00:00.000Z',
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
      bucket: '2025-06-03T00:00:00.000Z',
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

const TimeseriesResponse = Type.Object(
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
        'and delta method as the analysis (its last bucket equals the analysis); call: each result one unit',
    }),
    statistic: Type.String({
      description: "What the effects compare: mean, or the metric definition's quantile (p50, p90, p95, p99)",
    }),
    interval: Type.String({ description: 'day or hour' }),
    control: Type.String({ description: 'The variant the others are compared with' }),
    method: Type.String({ description: 'frequentist, bayesian or sequential' }),
    alpha: Type.Number({ description: 'The significance level used' }),
    sided: Type.String({ description: 'The alternative tested: two, greater or less' }),
    buckets: Type.Array(SeriesBucket, {
      description:
        'Oldest first; only hours or days with exposures or values of the metric. The last bucket is the ' +
        'analysis of all the data (per call, every version pooled with the current variants)',
    }),
    warnings: Type.Array(Type.String(), {
      description:
        "About the data as a whole and the latest bucket's comparisons, prefixed with metric/variant",
    }),
  },
  {
    title: 'Timeseries',
    description:
      "A metric's cumulative effect, hour by hour or day by day: how the estimate and its interval settled",
    examples: [TIMESERIES_EXAMPLE],
  },
);

const VersionsResponse = Type.Object(
  {
    versions: Type.Array(
      Type.Object(
        {
          version: Type.Integer({
            description: 'Results and exposures carry the version they were made under',
          }),
          createdAt: Type.String({ format: 'date-time', description: 'When these variants took effect' }),
          variants: Type.Array(VariantSchema, { description: 'The variants as they were in this version' }),
        },
        { description: 'One variant definition' },
      ),
      { description: 'Oldest first; a new version starts whenever the variants change' },
    ),
  },
  {
    title: 'VersionList',
    description: 'Every variant definition (payloads and traffic) the experiment has had',
    examples: [
      {
        versions: [
          {
            version: 1,
            createdAt: '2025-06-02T09:14:03.512Z',
            variants: [
              { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
              { key: 'B', payload: { prompt: 'You are a concise assistant.' }, trafficPercent: 50 },
            ],
          },
          {
            version: 2,
            createdAt: '2025-06-04T16:02:44.907Z',
            variants: [
              { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
              { key: 'B', payload: { prompt: 'You are a concise, friendly assistant.' }, trafficPercent: 50 },
            ],
          },
        ],
      },
    ],
  },
);

export function timeseriesRoutes(timeseries: TimeseriesService): Route[] {
  return [
    route({
      method: 'GET',
      url: '/experiment/:slug/analysis/timeseries',
      scope: 'read',
      schema: {
        tags: ['analysis'],
        summary: "One metric's cumulative effect per day or hour",
        description:
          'From the hourly rollups kept at write time: the cost grows with the buckets and variants, not the ' +
          'results. Per call even for sticky experiments. See docs/statistics.md for the methods.',
        params: SlugParams,
        querystring: TimeseriesQuery,
        response: { 200: TimeseriesResponse, ...errorResponses },
      },
      handle: ({ params, query }) => timeseries.timeseries(params.slug, query),
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug/versions',
      scope: 'read',
      schema: {
        tags: ['experiments'],
        summary: 'Every version of the variants: payloads and traffic, and when each took effect',
        params: SlugParams,
        response: { 200: VersionsResponse, ...errorResponses },
      },
      handle: ({ params }) => timeseries.versions(params.slug),
    }),
  ];
}
