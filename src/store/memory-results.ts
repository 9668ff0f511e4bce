// The memory store's committed results (memory-store.ts), and their pages as sql-reads.ts reads them.
import type { JsonObject } from '../core/json.js';
import type { NewResult } from '../core/writes.js';
import type { Result, ResultPage, ResultQuery } from './store.js';

/** A committed result and its position (the SQL store's `seq`: commit order, across experiments). */
export interface Committed {
  seq: number;
  result: NewResult;
  /** Its metric names the cap left out (ADR 0014), as the SQL store's `metrics_over_cap`. */
  metricsOverCap: string[] | null;
}

function parse(text: string | null): JsonObject | null {
  return text === null ? null : (JSON.parse(text) as JsonObject);
}

function toResult({ result: r }: Committed): Result {
  return {
    logId: r.logId,
    variantKey: r.variantKey,
    knownVariant: r.knownVariant,
    userId: r.userId,
    assignmentId: r.assignmentId,
    assignedVariant: r.assignedVariant ?? null,
    input: parse(r.input),
    output: parse(r.output),
    metrics: parse(r.metrics),
    context: parse(r.context),
    timestamp: r.timestamp,
    createdAt: r.createdAt,
    experimentVersion: r.version,
  };
}

/** A page of results, in commit order, as the SQL store's listResults. */
export function resultPage(results: readonly Committed[], q: ResultQuery): ResultPage {
  const matching: Committed[] = [];
  for (const c of results) {
    const r = c.result;
    if (r.experimentId !== q.experimentId) continue;
    if (q.afterSeq !== undefined && c.seq <= q.afterSeq) continue;
    if (q.uptoSeq !== undefined && c.seq > q.uptoSeq) continue;
    if (q.variantKey !== undefined && r.variantKey !== q.variantKey) continue;
    if (q.since !== undefined && r.createdAt < q.since) continue;
    if (q.until !== undefined && r.createdAt >= q.until) continue;
    matching.push(c);
    if (matching.length > q.limit) break;
  }
  const hasMore = matching.length > q.limit;
  const page = hasMore ? matching.slice(0, q.limit) : matching;
  return { results: page.map(toResult), lastSeq: page.at(-1)?.seq ?? null, hasMore };
}
