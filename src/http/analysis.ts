// GET /experiment/:slug/analysis — statistics from the write-time rollups.
import { Type } from 'typebox';
import { MAX_ANSWER_FIGURES } from '../core/answer-bounds.js';
import { TOP_SEGMENTS } from '../core/segments.js';
import type { AnalysisPool } from '../services/analysis-pool.js';
import { AnalysisSchema } from '../stats/analysis-schema.js';
import { comparisonQuery } from '../stats/schema-parts.js';
import { JsonBody, type Route, route } from './route.js';
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
        '(the top segmentValues by units, the rest as one "(other)"), read from rollups kept at write time. ' +
        'Exploratory: no verdict per segment',
      examples: ['plan'],
    }),
  ),
  segmentValues: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: TOP_SEGMENTS,
      default: TOP_SEGMENTS,
      description:
        `With segment: how many values are analysed one by one, those with most units (users of a sticky ` +
        `experiment, calls of a random one); the rest are merged as "(other)". An answer holds at most ` +
        `${MAX_ANSWER_FIGURES} figures (metrics × variants × values): past it, 422 says how to narrow it`,
    }),
  ),
});

export function analysisRoutes(analysis: Pick<AnalysisPool, 'analysisJson'>): Route[] {
  return [
    route({
      method: 'GET',
      url: '/experiment/:slug/analysis',
      scope: 'read',
      schema: {
        tags: ['analysis'],
        summary: 'Which variant wins: per-variant statistics and effects against the control',
        description:
          'Computed from rollups maintained at write time, so it answers in constant time at any volume, in a ' +
          'worker thread within a time budget (503 with Retry-After when the workers are busy or the budget ' +
          "runs out), and cached until the experiment's rollups change. An answer holds at most " +
          `${MAX_ANSWER_FIGURES} figures (metrics × variants × segment values): past it, 422 says how to ` +
          'narrow it. See docs/statistics.md for the methods.',
        params: SlugParams,
        querystring: AnalysisQuery,
        response: { 200: AnalysisSchema, ...errorResponses },
      },
      handle: async ({ params, query }) => {
        const { metrics, ...rest } = query;
        const json = await analysis.analysisJson(params.slug, {
          ...rest,
          metrics: metrics === undefined ? undefined : [...new Set(metrics.split(',').map((m) => m.trim()))],
        } as Parameters<AnalysisPool['analysisJson']>[1]);
        return new JsonBody(json);
      },
    }),
  ];
}
