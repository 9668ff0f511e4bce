// GET /experiment/:slug/analysis/timeseries — one metric's cumulative effect per hour or day, from the
// hourly rollups; GET /experiment/:slug/versions — the variant definitions of every version.
import { Type } from 'typebox';
import { MAX_ANSWER_FIGURES } from '../core/answer-bounds.js';
import type { AnalysisPool } from '../services/analysis-pool.js';
import type { TimeseriesService } from '../services/timeseries.js';
import { comparisonQuery } from '../stats/schema-parts.js';
import { TimeseriesSchema } from '../stats/timeseries-schema.js';
import { JsonBody, type Route, route } from './route.js';
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
    Type.Enum(['day', 'hour', 'minute'], {
      type: 'string',
      default: 'day',
      description:
        "The period: a UTC day (the sum of its 24 hours), a UTC hour, or a UTC minute (read from the raw rows: an experiment's first 6 hours only, per-call mean and proportion metrics)",
    }),
  ),
  method: Type.Optional(
    Type.Enum(['frequentist', 'bayesian', 'sequential'], {
      type: 'string',
      default: 'frequentist',
      description:
        'As in the analysis. Looking at a fixed-horizon test period after period inflates false positives: ' +
        'sequential is the method whose intervals stay valid however often they are read',
    }),
  ),
  ...comparisonQuery,
});

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

export function timeseriesRoutes(
  timeseries: Pick<TimeseriesService, 'versions'>,
  pool: Pick<AnalysisPool, 'timeseriesJson'>,
): Route[] {
  return [
    route({
      method: 'GET',
      url: '/experiment/:slug/analysis/timeseries',
      scope: 'read',
      schema: {
        tags: ['analysis'],
        summary: "One metric's cumulative effect per day or hour",
        description:
          'From the hourly rollups kept at write time: the cost grows with the periods and variants, not the ' +
          'results. Run like the analysis: in a worker thread within a time budget, cached until the rollups ' +
          `change; at most ${MAX_ANSWER_FIGURES} points (periods × variants) an answer, past it 422. ` +
          'See docs/statistics.md for the methods.',
        params: SlugParams,
        querystring: TimeseriesQuery,
        response: { 200: TimeseriesSchema, ...errorResponses },
      },
      handle: async ({ params, query }) => new JsonBody(await pool.timeseriesJson(params.slug, query)),
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
