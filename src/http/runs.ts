// Offline runs (issue 40): open a run of an experiment's variants over a dataset version, list and read
// runs, and compare a run's variants item by item (GET /runs/:id/comparison). A run's results are logged
// with POST /experiment/:slug/log (or /logs) with runId, itemId and trial.
import { ForbiddenError } from '../core/errors.js';
import type { Actor } from '../core/events.js';
import type { Principal } from '../core/keys.js';
import type { OfflineRun } from '../core/offline-runs.js';
import type { RunService } from '../services/runs.js';
import { refusal } from './auth.js';
import { type Route, route } from './route.js';
import { errorResponses, SlugParams } from './schemas/common.js';
import {
  ComparisonQuery,
  ComparisonResponse,
  OpenRunBody,
  RunListQuery,
  RunListResponse,
  RunParams,
  RunSchema,
} from './schemas/runs.js';

const shown = (run: OfflineRun, slug: string) => ({
  id: run.id,
  experiment: slug,
  dataset: run.dataset,
  version: run.version,
  variants: run.variants,
  trials: run.trials,
  items: run.items,
  createdAt: run.createdAt,
});

export function runRoutes(runs: RunService, actorOf: (p: Principal) => Actor): Route[] {
  const tags = ['runs'];

  /** The run, once the key may read its experiment (a key limited to others: 403, as on its routes). */
  async function readable(id: string, principal: Principal) {
    const found = await runs.get(id);
    const problem = refusal(principal, { scope: 'read' }, { slug: found.slug });
    if (problem !== null) throw new ForbiddenError(problem);
    return found;
  }

  return [
    route({
      method: 'POST',
      url: '/experiment/:slug/runs',
      scope: 'log',
      status: 201,
      schema: {
        tags,
        summary: "Open an offline run of the experiment's variants over a dataset",
        description:
          'The client then runs each variant on each item of that dataset version `trials` times and logs ' +
          'each outcome with POST /experiment/{slug}/log (or /logs) carrying runId, itemId and trial. Those ' +
          'results never count in the online analysis; GET /runs/{id}/comparison compares them item by item.',
        params: SlugParams,
        body: OpenRunBody,
        response: { 201: RunSchema, ...errorResponses },
      },
      handle: async ({ params, body, principal }) =>
        shown(await runs.open(params.slug, body, actorOf(principal)), params.slug),
    }),
    route({
      method: 'GET',
      url: '/experiment/:slug/runs',
      scope: 'read',
      schema: {
        tags,
        summary: "The experiment's offline runs, newest first",
        params: SlugParams,
        querystring: RunListQuery,
        response: { 200: RunListResponse, ...errorResponses },
      },
      handle: async ({ params, query }) => {
        const page = await runs.list(params.slug, { limit: query.limit ?? 50, cursor: query.cursor });
        return { runs: page.runs.map((r) => shown(r, params.slug)), nextCursor: page.nextCursor };
      },
    }),
    route({
      method: 'GET',
      url: '/runs/:id',
      scope: 'read',
      schema: {
        tags,
        summary: 'An offline run',
        params: RunParams,
        response: { 200: RunSchema, ...errorResponses },
      },
      handle: async ({ params, principal }) => {
        const { run, slug } = await readable(params.id, principal);
        return shown(run, slug);
      },
    }),
    route({
      method: 'GET',
      url: '/runs/:id/comparison',
      scope: 'read',
      schema: {
        tags,
        summary: "A run's variants compared item by item against the control",
        description:
          'Per metric, over the items both variants answered (each item the mean of its trials): the mean ' +
          'difference with a paired t interval, the Wilcoxon signed-rank p-value, a bootstrap interval over ' +
          "items (trials resampled within them), McNemar's exact test for pass/fail metrics with one trial, " +
          'wins, ties and losses, Holm-adjusted p-values across the metrics of each variant; with repeated ' +
          'trials, the share of variance from generations against items; the items needed for the observed ' +
          'difference; a verdict sentence; the items whose score changed most, with both outputs.',
        params: RunParams,
        querystring: ComparisonQuery,
        response: { 200: ComparisonResponse, ...errorResponses },
      },
      handle: async ({ params, query, principal }) => {
        const { run, slug } = await readable(params.id, principal);
        const metrics = query.metrics
          ?.split(',')
          .map((m) => m.trim())
          .filter((m) => m !== '');
        const comparison = await runs.compare(run, slug, {
          ...(query.control === undefined ? {} : { control: query.control }),
          ...(query.alpha === undefined ? {} : { alpha: query.alpha }),
          ...(metrics === undefined ? {} : { metrics }),
        });
        return { run: shown(run, slug), ...comparison };
      },
    }),
  ];
}
