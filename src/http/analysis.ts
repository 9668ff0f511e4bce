// GET /experiment/:slug/analysis — statistics from the write-time rollups.
import { Type } from 'typebox';
import type { AnalysisService } from '../services/analysis.js';
import { AnalysisSchema } from '../stats/analysis-schema.js';
import { comparisonQuery } from '../stats/schema-parts.js';
import { type Route, route } from './route.js';
import { errorResponses, SlugParams } from './schemas/common.js';

const AnalysisQuery = Type.Object({
  ...comparisonQuery,
  metrics: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'Comma-separated metric names, as logged in metrics. Default: every metric with data',
      examples: ['latency_ms,rating'],
    }),
  ),
  method: Type.Optional(
    Type.Enum(['frequentist', 'bayesian', 'sequential'], {
      type: 'string',
      default: 'frequentist',
      description:
        "frequentist: Welch's t-test at a fixed horizon (fix the sample size, look once); sequential: " +
        'always-valid confidence sequences (look as often as you like); bayesian: chance to win and risk, ' +
        'flat prior',
    }),
  ),
  correction: Type.Optional(
    Type.Enum(['none', 'holm', 'bh'], {
      type: 'string',
      description:
        'Multiple-comparison correction (p-values and intervals together): holm controls the family-wise ' +
        'error rate, bh (Benjamini–Hochberg) the false discovery rate. Asked for, it covers every metric × ' +
        'treatment but guardrails. Absent: bh across the secondary and undeclared metrics only',
    }),
  ),
  version: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Only results and exposures made under this version of the variants. Default: all, pooled',
    }),
  ),
  segment: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'A context key the experiment declares in segments: the answer adds segments, the analysis per value ' +
        '(top 50 by results, the rest as one "(other)"), read from rollups kept at write time. Exploratory: ' +
        'no verdict per segment',
      examples: ['plan'],
    }),
  ),
});

export function analysisRoutes(analysis: AnalysisService): Route[] {
  return [
    route({
      method: 'GET',
      url: '/experiment/:slug/analysis',
      scope: 'read',
      schema: {
        tags: ['analysis'],
        summary: 'Which variant wins: per-variant statistics and effects against the control',
        description:
          'Computed from rollups maintained at write time, so it answers in constant time at any volume. ' +
          'See docs/statistics.md for the methods.',
        params: SlugParams,
        querystring: AnalysisQuery,
        response: { 200: AnalysisSchema, ...errorResponses },
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
