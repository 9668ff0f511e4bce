// The rows a batch writes whatever is stored already (rowStatements): its results (and how a rebuild reads
// one back), its exposure batches and their counts, its Idempotency-Key answers; and the statement of the
// feedback rows batch-statements.ts plans. In the shape of row-statements.ts, whose upserts they use.
import type { Insertable } from 'kysely';
import type { FeedbackRow } from '../core/feedback.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import { type RolledResult, rollUpExposures } from '../core/rollups.js';
import type { ExposureBatch, NewResult, WriteBatch } from '../core/writes.js';
import {
  countStatement,
  exposureRollupStatement,
  type RowStatement,
  upsertStatement,
} from './row-statements.js';
import type { ResultsTable } from './schema.js';
import type { SegmentRecord } from './segment-plan.js';

function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/**
 * A stored results row as the rollups see it (a rebuild reads these back): with the names it was not
 * rolled up under when it was written, so the rebuild sums exactly what the live rollups summed.
 */
export function rolledResultRow(
  r: Pick<
    ResultsTable,
    'experiment_id' | 'experiment_version' | 'variant_key' | 'metrics' | 'metrics_over_cap'
  >,
): RolledResult {
  return {
    experimentId: Number(r.experiment_id),
    version: Number(r.experiment_version),
    variantKey: r.variant_key,
    metrics: r.metrics === null ? null : json<JsonObject>(r.metrics),
    overCap: r.metrics_over_cap === null ? null : new Set(json<string[]>(r.metrics_over_cap)),
  };
}

/** The row of a result: JSON as text, the flag as 0/1 (every key always present, in one order). */
function resultRow(
  r: NewResult,
  overCap: string[] | null,
  segments: SegmentRecord | null,
): Insertable<ResultsTable> {
  return {
    log_id: r.logId,
    experiment_id: r.experimentId,
    experiment_version: r.version,
    variant_key: r.variantKey,
    known_variant: r.knownVariant ? 1 : 0,
    user_id: r.userId,
    assignment_id: r.assignmentId,
    input: r.input,
    output: r.output,
    metrics: r.metrics,
    context: r.context,
    client_timestamp: r.timestamp,
    created_at: r.createdAt,
    metrics_over_cap: overCap ? JSON.stringify(overCap) : null,
    assigned_variant: r.assignedVariant ?? null,
    segments: segments === null ? null : JSON.stringify(segments),
    run_id: r.offline?.runId ?? null,
    item_id: r.offline?.itemId ?? null,
    trial: r.offline?.trial ?? null,
  };
}

/** Exposures as one row per batch: a JSON array of their stored forms, in the order they were assigned (ADR 0006). */
export function exposureBatchStatement(batches: ExposureBatch[]): RowStatement {
  return {
    name: 'exposure_batches',
    rows: batches.map((b) => ({
      experiment_id: b.experimentId,
      experiment_version: b.version,
      count: b.count,
      exposures: b.json,
    })),
    chunk: 100,
    build: (db, rows) => db.insertInto('exposure_batches').values(rows as never),
  };
}

/** Feedback rows, each the latest value of its target and metric (planned by core/feedback.ts). */
export function feedbackStatement(rows: FeedbackRow[]): RowStatement {
  return upsertStatement(
    'feedback',
    rows.map((f) => ({
      experiment_id: f.experimentId,
      target: f.target,
      metric: f.metric,
      feedback_id: f.feedbackId,
      experiment_version: f.version,
      variant_key: f.variantKey,
      user_id: f.userId,
      kind: f.kind,
      value: f.value,
      over_cap: f.overCap ? 1 : 0,
      comment: f.comment,
      created_at: f.createdAt,
      updated_at: f.updatedAt,
      segments: f.segments === null ? null : JSON.stringify(f.segments),
    })),
  );
}

/**
 * Idempotency-Key answers, replacing a claim or an expired row for the same owner and key (ADR 0016).
 * Written in the transaction of the data they describe, so a retry finds both or neither.
 */
export function idempotencyRecordStatement(answers: IdempotencyRecord[]): RowStatement {
  return upsertStatement(
    'idempotency_keys',
    answers.map((a) => ({
      owner: a.owner,
      key: a.key,
      fingerprint: a.fingerprint,
      state: 'done',
      status: a.status,
      answer: a.answer,
      created_at: a.createdAt,
    })),
  );
}

/**
 * The rows a batch writes whatever is stored already: results (with `overCap`, the cap's decision for each,
 * and `segments`, the segment values that counted each: segment-plan.ts), exposures and their counts,
 * Idempotency-Key answers. The rollups that depend on stored values follow (batch-plan.ts); all commit in
 * one transaction.
 */
export function rowStatements(
  batch: WriteBatch,
  overCap: Array<string[] | null>,
  segments: ReadonlyArray<SegmentRecord | null> = [],
): RowStatement[] {
  const statements: RowStatement[] = [
    {
      name: 'results',
      rows: batch.results.map((r, i) => resultRow(r, overCap[i] ?? null, segments[i] ?? null)),
      chunk: 1000,
      build: (db, rows) => db.insertInto('results').values(rows as Array<Insertable<ResultsTable>>),
    },
    exposureBatchStatement(batch.exposures),
    exposureRollupStatement(
      rollUpExposures(
        batch.exposures.flatMap((b) =>
          b.variants.map((v) => ({ experimentId: b.experimentId, version: b.version, ...v })),
        ),
      ),
    ),
    countStatement('result_rollups', rollUpExposures(batch.results)),
    idempotencyRecordStatement(batch.idempotencyRecords ?? []),
  ];
  return statements.filter((s) => s.rows.length > 0);
}
