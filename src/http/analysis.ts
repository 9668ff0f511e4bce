// GET /experiment/:slug/analysis — statistics from the write-time rollups.
import { Type } from 'typebox';
import type { AnalysisService } from '../services/analysis.js';
import { type Route, route } from './route.js';
import { errorResponses, SlugParams } from './schemas.js';

const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);
const Num = Type.Number();
const Estimate = Type.Object({
  estimate: Nullable(Num),
  ci: Type.Array(Nullable(Num), { minItems: 2, maxItems: 2 }),
  stdError: Nullable(Num),
  pValue: Nullable(Num),
});

const AnalysisQuery = Type.Object({
  control: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Default: the first variant' }),
  ),
  metrics: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2000, description: 'Comma-separated metric names. Default: all' }),
  ),
  alpha: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 0.5, default: 0.05 })),
  method: Type.Optional(
    Type.Enum(['frequentist', 'bayesian', 'sequential'], { type: 'string', default: 'frequentist' }),
  ),
  sided: Type.Optional(Type.Enum(['two', 'greater', 'less'], { type: 'string', default: 'two' })),
  correction: Type.Optional(Type.Enum(['none', 'holm', 'bh'], { type: 'string', default: 'none' })),
  version: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Only this version. Default: all versions' }),
  ),
  nStar: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, description: 'Sequential tuning N*. Default 5000' }),
  ),
});

const AnalysisResponse = Type.Object({
  slug: Type.String(),
  control: Type.String(),
  method: Type.String(),
  alpha: Num,
  sided: Type.String(),
  correction: Type.String(),
  version: Type.Union([Type.Integer(), Type.Null()]),
  exposures: Type.Record(Type.String(), Type.Integer()),
  srm: Type.Object({ chiSquare: Nullable(Num), pValue: Nullable(Num), mismatch: Type.Boolean() }),
  metrics: Type.Array(
    Type.Object({
      name: Type.String(),
      kind: Type.String(),
      variants: Type.Array(
        Type.Object({
          key: Type.String(),
          n: Type.Integer(),
          mean: Nullable(Num),
          stdDev: Nullable(Num),
          absolute: Type.Optional(Estimate),
          relative: Type.Optional(Estimate),
          adjustedPValue: Type.Optional(Nullable(Num)),
          chanceToWin: Type.Optional(Nullable(Num)),
          risk: Type.Optional(Type.Array(Nullable(Num), { minItems: 2, maxItems: 2 })),
          significant: Type.Optional(Type.Boolean()),
        }),
      ),
    }),
  ),
  warnings: Type.Array(Type.String()),
});

export function analysisRoutes(analysis: AnalysisService): Route[] {
  return [
    route({
      method: 'GET',
      url: '/experiment/:slug/analysis',
      schema: {
        tags: ['analysis'],
        summary: 'Which variant wins: per-variant statistics and effects against the control',
        description:
          'Computed from rollups maintained at write time, so it answers in constant time at any volume. ' +
          'See docs/statistics.md for the methods.',
        params: SlugParams,
        querystring: AnalysisQuery,
        response: { 200: AnalysisResponse, ...errorResponses },
      },
      handle: ({ params, query }) => {
        const { metrics, ...rest } = query;
        return analysis.analyze(params.slug, {
          ...rest,
          metrics: metrics === undefined ? undefined : [...new Set(metrics.split(',').map((m) => m.trim()))],
        } as Parameters<AnalysisService['analyze']>[1]);
      },
    }),
  ];
}
