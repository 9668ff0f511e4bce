// Reading results back (ResultService's list and export): a page of results with its cursor, and every
// result committed when an export began, page by page, giving the event loop turns.
import { ValidationError } from '../core/errors.js';
import { decodeCursor, encodeCursor } from '../core/result-cursor.js';
import { searchText } from '../core/search.js';
import { normalizeTime } from '../core/time.js';
import type { Result } from '../store/result-types.js';
import type { TraceStore } from '../store/sql-traces.js';
import type { Store } from '../store/store.js';
import type { LiveExperiment } from './experiment-cache.js';

/**
 * Results per export page. On SQLite a page is read on the main thread, synchronously: reading and
 * parsing take about 5 µs a row (250 rows 1.45 ms, measured), so a page holds the event loop under 1 ms.
 * On PostgreSQL pages of 1,000 exported 20% faster but parsed each answer in one 5 ms block.
 */
const EXPORT_PAGE = 128;

/**
 * An export gives the event loop back at least this often (ms): the caller serializes and writes each
 * result as it is yielded, which costs more than reading it.
 */
const EXPORT_SLICE_MS = 0.5;

/** Resolves on the next turn of the event loop, after pending I/O has been handled. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

type ResultReadStore = Pick<Store, 'listResults' | 'lastResultSeq' | 'readRollups'>;
type TraceSummaries = Pick<TraceStore, 'summariesOf'> | undefined;

export interface ResultListQuery {
  limit?: number;
  cursor?: string;
  variant?: string;
  since?: string;
  until?: string;
  order?: 'asc' | 'desc';
  metric?: string;
  min?: number;
  max?: number;
  sort?: 'time' | 'metric';
  /** Only results whose input, output or a comment on them holds this text, ignoring case. */
  q?: string;
  /** One offline run's results (issue 40); absent: online results only. */
  run?: string;
}

/** One page of an experiment's results and the cursor of the next; the query is checked before `experiment` is looked up. */
export async function listPage(
  deps: { store: ResultReadStore; traces?: TraceSummaries },
  q: ResultListQuery,
  experiment: () => Promise<LiveExperiment>,
): Promise<{ results: Result[]; nextCursor: string | null }> {
  const order = q.order ?? 'asc';
  const byValue = q.sort === 'metric';
  if (q.metric === undefined && (q.min !== undefined || q.max !== undefined || byValue)) {
    throw new ValidationError(
      `${byValue ? 'sort=metric' : 'min and max'} need metric=<name>: the metric to compare`,
    );
  }
  if (q.min !== undefined && q.max !== undefined && q.min > q.max) {
    throw new ValidationError(`min (${q.min}) is greater than max (${q.max}): no value could match`);
  }
  const search = q.q === undefined ? undefined : searchText(q.q);
  const sortedBy = byValue ? q.metric : undefined;
  const position = q.cursor === undefined ? undefined : decodeCursor(q.cursor, order, sortedBy);
  const live = await experiment();
  const page = await deps.store.listResults({
    experimentId: live.id,
    afterSeq: position?.seq,
    afterValue: position?.metric?.value,
    order,
    metric: q.metric === undefined ? undefined : { name: q.metric, min: q.min, max: q.max, byValue },
    variantKey: q.variant,
    since: q.since === undefined ? undefined : normalizeTime(q.since, 'since'),
    until: q.until === undefined ? undefined : normalizeTime(q.until, 'until'),
    ...(search === undefined ? {} : { search }),
    ...(q.run === undefined ? {} : { runId: q.run }),
    limit: q.limit ?? 100,
  });
  let nextCursor: string | null = null;
  if (page.hasMore && page.lastSeq !== null) {
    const value = page.lastValue;
    nextCursor = encodeCursor({
      order,
      seq: page.lastSeq,
      ...(sortedBy !== undefined && typeof value === 'number' ? { metric: { name: sortedBy, value } } : {}),
    });
  }
  return { results: await withTraces(deps.traces, live.id, page.results), nextCursor };
}

/** Results read from traces get their trace's summary (one read per page; none without a trace store). */
async function withTraces(
  traces: TraceSummaries,
  experimentId: number,
  results: Result[],
): Promise<Result[]> {
  if (traces === undefined || results.length === 0) return results;
  const found = await traces.summariesOf(
    experimentId,
    results.map((r) => r.logId),
  );
  if (found.size === 0) return results;
  return results.map((r) => {
    const trace = found.get(r.logId);
    return trace === undefined ? r : { ...r, trace };
  });
}

/** Every result of the experiment committed now, as a generator, and its analysed metrics' names. */
export async function exportResults(
  store: ResultReadStore,
  live: LiveExperiment,
): Promise<{ metricNames: string[]; results: AsyncGenerator<Result> }> {
  const upto = await store.lastResultSeq(live.id);
  const { metrics } = await store.readRollups(live.id);
  const metricNames = [...new Set(metrics.map((m) => m.metric))].sort();
  // Kysely's awaits are only microtasks, and a SQLite read is synchronous: without turns of the event
  // loop, an export ran page after page while every other request waited (a /healthz 5 s behind 200k
  // rows). So: a turn between pages, and one whenever a slice of work is used up.
  const results = (async function* () {
    let after = 0;
    let sliceStart = performance.now();
    for (;;) {
      const page = await store.listResults({
        experimentId: live.id,
        afterSeq: after,
        uptoSeq: upto,
        limit: EXPORT_PAGE,
      });
      for (const result of page.results) {
        if (performance.now() - sliceStart > EXPORT_SLICE_MS) {
          await nextTurn();
          sliceStart = performance.now();
        }
        yield result;
      }
      if (!page.hasMore || page.lastSeq === null) return;
      after = page.lastSeq;
      await nextTurn();
      sliceStart = performance.now();
    }
  })();
  return { metricNames, results };
}
