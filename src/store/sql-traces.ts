// The store of traces (issue 39, ADR 0045) for both databases: spans kept by (trace, span) for the trace
// window, a row per trace for the sweep, and a row per run that became a result. The SQL store only (the
// runtime's store); the memory fake keeps no traces.
import { sql } from 'kysely';
import type { RunValues, TraceSummary } from '../core/trace-result.js';
import type { TraceSpan } from '../core/trace-run.js';
import type { SqlDatabase } from './database.js';
import { translatingErrors } from './sql-errors.js';

/** A run that became a result, as stored. */
export interface StoredTraceRun {
  traceId: string;
  /** core/trace-run.ts keyText. */
  runKey: string;
  experimentId: number;
  logId: string;
  /** Spans in the run at its last reading. */
  spanCount: number;
  /** The values last written as feedback. */
  reading: RunValues;
  summary: TraceSummary;
  /** Its trace's spans left the window: later spans no longer change it. */
  sealed: boolean;
}

/** What one export's traces hold once its spans are kept. */
export interface KeptTraces {
  /** Spans this export added (not kept before, not repeated in it). */
  added: number;
  /** Every kept span of each trace the export touched, and its runs that became results, by run key. */
  traces: Map<string, { spans: TraceSpan[]; runs: Map<string, StoredTraceRun> }>;
}

export interface TraceStore {
  /** Keeps the spans not kept yet (by trace and span id) in one transaction, and reads their traces back. */
  keepSpans(spans: readonly TraceSpan[], at: string): Promise<KeptTraces>;
  /** Inserts or replaces runs' rows, in one transaction. */
  putRuns(runs: readonly StoredTraceRun[], at: string): Promise<void>;
  /** The trace summaries of an experiment's results among `logIds`, by log id. */
  summariesOf(experimentId: number, logIds: readonly string[]): Promise<Map<string, TraceSummary>>;
  /**
   * Drops the spans of up to `limit` traces no export touched since `before`, and seals their runs, in one
   * transaction. Answers how many traces went, and how many of their spans never joined a run.
   */
  sweep(before: string, limit: number): Promise<{ traces: number; unjoined: number }>;
}

/** Ids per IN list and rows per INSERT (well within both engines' parameter limits). */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export class SqlTraces implements TraceStore {
  constructor(private readonly db: SqlDatabase) {}

  private run<T>(work: () => Promise<T>): Promise<T> {
    return translatingErrors(this.db, work);
  }

  keepSpans(spans: readonly TraceSpan[], at: string): Promise<KeptTraces> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const traceIds = [...new Set(spans.map((s) => s.traceId))];
        const traces = new Map<string, { spans: TraceSpan[]; runs: Map<string, StoredTraceRun> }>();
        const kept = new Set<string>();
        for (const id of traceIds) traces.set(id, { spans: [], runs: new Map() });
        for (const ids of chunks(traceIds)) {
          const rows = await trx
            .selectFrom('trace_spans')
            .select(['trace_id', 'span_id', 'span'])
            .where('trace_id', 'in', ids)
            .execute();
          for (const r of rows) {
            kept.add(`${r.trace_id}/${r.span_id}`);
            traces.get(r.trace_id)!.spans.push(JSON.parse(r.span) as TraceSpan);
          }
        }
        const fresh: TraceSpan[] = [];
        const addedTo = new Map<string, number>();
        for (const s of spans) {
          const id = `${s.traceId}/${s.spanId}`;
          if (kept.has(id)) continue;
          kept.add(id);
          fresh.push(s);
          traces.get(s.traceId)!.spans.push(s);
          addedTo.set(s.traceId, (addedTo.get(s.traceId) ?? 0) + 1);
        }
        for (const part of chunks(fresh)) {
          await trx
            .insertInto('trace_spans')
            .values(part.map((s) => ({ trace_id: s.traceId, span_id: s.spanId, span: JSON.stringify(s) })))
            .onConflict((oc) => oc.columns(['trace_id', 'span_id']).doNothing())
            .execute();
        }
        for (const part of chunks(traceIds)) {
          await trx
            .insertInto('traces')
            .values(part.map((id) => ({ trace_id: id, spans: addedTo.get(id) ?? 0, last_at: at })))
            .onConflict((oc) =>
              oc.column('trace_id').doUpdateSet({
                spans: sql`traces.spans + excluded.spans`,
                last_at: sql`excluded.last_at`,
              }),
            )
            .execute();
        }
        for (const ids of chunks(traceIds)) {
          const rows = await trx.selectFrom('trace_runs').selectAll().where('trace_id', 'in', ids).execute();
          for (const r of rows) {
            traces.get(r.trace_id)!.runs.set(r.run_key, {
              traceId: r.trace_id,
              runKey: r.run_key,
              experimentId: Number(r.experiment_id),
              logId: r.log_id,
              spanCount: Number(r.span_count),
              reading: JSON.parse(r.reading) as RunValues,
              summary: JSON.parse(r.summary) as TraceSummary,
              sealed: Number(r.sealed) === 1,
            });
          }
        }
        return { added: fresh.length, traces };
      }),
    );
  }

  putRuns(runs: readonly StoredTraceRun[], at: string): Promise<void> {
    const rows = runs.map((r) => ({
      trace_id: r.traceId,
      run_key: r.runKey,
      experiment_id: r.experimentId,
      log_id: r.logId,
      span_count: r.spanCount,
      reading: JSON.stringify(r.reading),
      summary: JSON.stringify(r.summary),
      sealed: r.sealed ? 1 : 0,
      updated_at: at,
    }));
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        for (const part of chunks(rows)) {
          await trx
            .insertInto('trace_runs')
            .values(part)
            .onConflict((oc) =>
              oc.columns(['trace_id', 'run_key']).doUpdateSet({
                span_count: sql`excluded.span_count`,
                reading: sql`excluded.reading`,
                summary: sql`excluded.summary`,
                updated_at: sql`excluded.updated_at`,
              }),
            )
            .execute();
        }
      }),
    );
  }

  summariesOf(experimentId: number, logIds: readonly string[]): Promise<Map<string, TraceSummary>> {
    return this.run(async () => {
      const found = new Map<string, TraceSummary>();
      for (const ids of chunks(logIds)) {
        const rows = await this.db.readOnly
          .selectFrom('trace_runs')
          .select(['log_id', 'summary'])
          .where('experiment_id', '=', experimentId)
          .where('log_id', 'in', ids)
          .execute();
        for (const r of rows) found.set(r.log_id, JSON.parse(r.summary) as TraceSummary);
      }
      return found;
    });
  }

  sweep(before: string, limit: number): Promise<{ traces: number; unjoined: number }> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const old = await trx
          .selectFrom('traces')
          .select(['trace_id', 'spans'])
          .where('last_at', '<', before)
          .orderBy('last_at')
          .limit(limit)
          .execute();
        if (old.length === 0) return { traces: 0, unjoined: 0 };
        const ids = old.map((r) => r.trace_id);
        const joined = new Map<string, number>();
        const rows = await trx
          .selectFrom('trace_runs')
          .select(['trace_id', 'span_count'])
          .where('trace_id', 'in', ids)
          .where('sealed', '=', 0)
          .execute();
        for (const r of rows) joined.set(r.trace_id, (joined.get(r.trace_id) ?? 0) + Number(r.span_count));
        let unjoined = 0;
        for (const r of old) unjoined += Math.max(0, Number(r.spans) - (joined.get(r.trace_id) ?? 0));
        await trx.deleteFrom('trace_spans').where('trace_id', 'in', ids).execute();
        await trx.deleteFrom('traces').where('trace_id', 'in', ids).execute();
        await trx.updateTable('trace_runs').set({ sealed: 1 }).where('trace_id', 'in', ids).execute();
        return { traces: ids.length, unjoined };
      }),
    );
  }
}
