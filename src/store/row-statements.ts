// The writes of one group-commit batch as (statement, rows) pairs, so each engine can run them its
// fastest way: multi-row statements prepared once and run in one call (SQLite's writer thread), or
// multi-row statements of up to `chunk` rows (PostgreSQL).
import type { Compilable, Insertable, Kysely } from 'kysely';
import { type FeedbackRow, feedbackKey } from '../core/feedback.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import {
  type BucketRollup,
  bucketRollupKey,
  type ExposureRollup,
  type MetricRollup,
  type RolledResult,
  rollUpExposures,
} from '../core/rollups.js';
import { type UnitRollup, type UnitSum, unitKey } from '../core/units.js';
import type { ExposureBatch, NewResult, WriteBatch } from '../core/writes.js';
import type { Database, ResultsTable } from './schema.js';

/** `build` turns rows (objects keyed by column, all in the same key order) into one INSERT statement. */
export interface RowStatement<R extends object = object> {
  /** Names the statement's shape (compiled SQL is cached under it). */
  name: string;
  rows: R[];
  /** Rows per multi-row statement (SQLite allows 32766 bound parameters, PostgreSQL 65535). */
  chunk: number;
  build(db: Kysely<Database>, rows: R[]): Compilable & { execute(): Promise<unknown> };
}

/** A statement compiled once, and the parameters of each execution in its parameter order. */
export interface CompiledRows {
  sql: string;
  rows: unknown[][];
}

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

/** The cap's decisions (applyMetricCap on `rolled`), per result: the names each leaves out (null: none). */
export function overCapOf(rolled: RolledResult[]): Array<string[] | null> {
  return rolled.map((r) => (r.overCap && r.overCap.size > 0 ? [...r.overCap] : null));
}

/** The row of a result: JSON as text, the flag as 0/1 (every key always present, in one order). */
function resultRow(r: NewResult, overCap: string[] | null): Insertable<ResultsTable> {
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
  };
}

/**
 * Rollup rows are upserted in key order: two instances adding to the same keys then lock the rows in the
 * same order and cannot deadlock (PostgreSQL).
 */
export function sortedBy<T>(items: readonly T[], key: (t: T) => string): T[] {
  // Each key built once, not once per comparison (tens of thousands of users' sums per batch).
  const keyed = items.map((item) => ({ key: key(item), item }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.item);
}

export function metricRollupStatement(rollups: MetricRollup[]): RowStatement {
  const sorted = sortedBy(
    rollups,
    (r) => `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`,
  );
  return {
    name: 'metric_rollups',
    rows: sorted.map((r) => ({
      experiment_id: r.experimentId,
      experiment_version: r.version,
      variant_key: r.variantKey,
      metric: r.metric,
      kind: r.kind,
      n: r.n,
      sum: r.sum,
      sum_squares: r.sumSquares,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('metric_rollups')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'experiment_version', 'variant_key', 'metric', 'kind'])
            .doUpdateSet((eb) => ({
              n: eb('metric_rollups.n', '+', eb.ref('excluded.n')),
              sum: eb('metric_rollups.sum', '+', eb.ref('excluded.sum')),
              sum_squares: eb('metric_rollups.sum_squares', '+', eb.ref('excluded.sum_squares')),
            })),
        ),
  };
}

/** Counts per experiment, version and variant key, added to: exposures, results or distinct users (`table`). */
export function countStatement(
  table: 'exposure_rollups' | 'result_rollups' | 'exposure_user_rollups',
  rollups: ExposureRollup[],
): RowStatement {
  const sorted = sortedBy(rollups, (r) => `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}`);
  return {
    name: table,
    rows: sorted.map((r) => ({
      experiment_id: r.experimentId,
      experiment_version: r.version,
      variant_key: r.variantKey,
      n: r.n,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto(table)
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'experiment_version', 'variant_key'])
            .doUpdateSet(additive(table, ['n'])),
        ),
  };
}

export const exposureRollupStatement = (rollups: ExposureRollup[]) =>
  countStatement('exposure_rollups', rollups);

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

/** `SET c = table.c + excluded.c` for each column: a rollup row moved by the batch's (signed) change. */
// biome-ignore lint/suspicious/noExplicitAny: Kysely types the builder per table; this one serves many tables
export const additive = (table: string, columns: string[]) => (eb: any) =>
  Object.fromEntries(columns.map((c) => [c, eb(`${table}.${c}`, '+', eb.ref(`excluded.${c}`))]));

/**
 * `build` of a multi-row upsert that adds `added` columns to the row with the same `keys`: the shape every
 * rollup statement shares.
 */
export function addingUpsert(table: keyof Database, keys: string[], added: string[]): RowStatement['build'] {
  return (db, rows) =>
    db
      .insertInto(table)
      .values(rows as never)
      .onConflict((oc) => oc.columns(keys as never).doUpdateSet(additive(table, added)));
}

/** Hourly metric sums for the time series, added to (signed: feedback may take a value out). */
export function bucketRollupStatement(rollups: BucketRollup[]): RowStatement {
  const sorted = sortedBy(rollups, bucketRollupKey);
  return {
    name: 'bucket_rollups',
    rows: sorted.map((r) => ({
      experiment_id: r.experimentId,
      bucket: r.bucket,
      experiment_version: r.version,
      variant_key: r.variantKey,
      metric: r.metric,
      kind: r.kind,
      n: r.n,
      sum: r.sum,
      sum_squares: r.sumSquares,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('bucket_rollups')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'bucket', 'experiment_version', 'variant_key', 'metric', 'kind'])
            .doUpdateSet(additive('bucket_rollups', ['n', 'sum', 'sum_squares'])),
        ),
  };
}

/** Exposures per hour and variant, from the batches' own hours. */
export function bucketExposureStatement(batches: ExposureBatch[]): RowStatement {
  const counts = new Map<
    string,
    { experimentId: number; bucket: string; version: number; variantKey: string; n: number }
  >();
  for (const b of batches) {
    for (const v of b.variants) {
      const key = `${b.experimentId}\u0000${b.bucket}\u0000${b.version}\u0000${v.variantKey}`;
      const acc = counts.get(key);
      if (acc) acc.n += v.n;
      else
        counts.set(key, {
          experimentId: b.experimentId,
          bucket: b.bucket,
          version: b.version,
          variantKey: v.variantKey,
          n: v.n,
        });
    }
  }
  const sorted = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    name: 'bucket_exposures',
    rows: sorted.map(([, c]) => ({
      experiment_id: c.experimentId,
      bucket: c.bucket,
      experiment_version: c.version,
      variant_key: c.variantKey,
      n: c.n,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('bucket_exposures')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'bucket', 'experiment_version', 'variant_key'])
            .doUpdateSet(additive('bucket_exposures', ['n'])),
        ),
  };
}

/** Users' running sums, replaced by their new values (read and planned under the batch's lock). */
export function unitSumStatement(sums: UnitSum[]): RowStatement {
  const sorted = sortedBy(sums, unitKey);
  return {
    name: 'unit_sums',
    rows: sorted.map((u) => ({
      experiment_id: u.experimentId,
      user_id: u.userId,
      experiment_version: u.version,
      variant_key: u.variantKey,
      metric: u.metric,
      kind: u.kind,
      n: u.n,
      sum: u.sum,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('unit_sums')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'user_id', 'experiment_version', 'variant_key', 'metric', 'kind'])
            .doUpdateSet((eb) => ({ n: eb.ref('excluded.n'), sum: eb.ref('excluded.sum') })),
        ),
  };
}

/** Per-variant sums over users, moved by the difference each user's new sums make (core/units.ts). */
export const UNIT_ROLLUP_SUMS = ['units', 'sum_x', 'sum_x2', 'sum_y', 'sum_y2', 'sum_xy'];

/** A unit rollup's columns (the per-variant sums over users the delta method reads). */
export function unitRollupRow(r: UnitRollup) {
  return {
    experiment_id: r.experimentId,
    experiment_version: r.version,
    variant_key: r.variantKey,
    metric: r.metric,
    kind: r.kind,
    units: r.units,
    sum_x: r.sumX,
    sum_x2: r.sumX2,
    sum_y: r.sumY,
    sum_y2: r.sumY2,
    sum_xy: r.sumXY,
  };
}

export function unitRollupStatement(rollups: UnitRollup[]): RowStatement {
  const sorted = sortedBy(
    rollups,
    (r) => `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`,
  );
  return {
    name: 'unit_rollups',
    rows: sorted.map(unitRollupRow),
    chunk: 2000,
    build: addingUpsert(
      'unit_rollups',
      ['experiment_id', 'experiment_version', 'variant_key', 'metric', 'kind'],
      UNIT_ROLLUP_SUMS,
    ),
  };
}

/** Feedback rows, each the latest value of its target and metric (planned by core/feedback.ts). */
export function feedbackStatement(rows: FeedbackRow[]): RowStatement {
  const sorted = sortedBy(rows, feedbackKey);
  return {
    name: 'feedback',
    rows: sorted.map((f) => ({
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
    })),
    chunk: 1000,
    build: (db, rows) =>
      db
        .insertInto('feedback')
        .values(rows as never)
        .onConflict((oc) =>
          oc.columns(['experiment_id', 'target', 'metric']).doUpdateSet((eb) => ({
            feedback_id: eb.ref('excluded.feedback_id'),
            kind: eb.ref('excluded.kind'),
            value: eb.ref('excluded.value'),
            comment: eb.ref('excluded.comment'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        ),
  };
}

/**
 * Idempotency-Key answers, replacing a claim or an expired row for the same owner and key (ADR 0016).
 * Written in the transaction of the data they describe, so a retry finds both or neither.
 */
export function idempotencyAnswerStatement(answers: IdempotencyRecord[]): RowStatement {
  return {
    name: 'idempotency_keys',
    rows: answers.map((a) => ({
      owner: a.owner,
      key: a.key,
      fingerprint: a.fingerprint,
      state: 'done',
      status: a.status,
      answer: a.answer,
      created_at: a.createdAt,
    })),
    chunk: 500,
    build: (db, rows) =>
      db
        .insertInto('idempotency_keys')
        .values(rows as never)
        .onConflict((oc) =>
          oc.columns(['owner', 'key']).doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            state: eb.ref('excluded.state'),
            status: eb.ref('excluded.status'),
            answer: eb.ref('excluded.answer'),
            created_at: eb.ref('excluded.created_at'),
          })),
        ),
  };
}

/**
 * The rows a batch writes whatever is stored already: results (with `overCap`, the cap's decision for each),
 * exposures and their counts, Idempotency-Key answers. The rollups that depend on stored values follow (batch-plan.ts); all commit in one transaction.
 */
export function rowStatements(batch: WriteBatch, overCap: Array<string[] | null>): RowStatement[] {
  const statements: RowStatement[] = [
    {
      name: 'results',
      rows: batch.results.map((r, i) => resultRow(r, overCap[i] ?? null)),
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
    idempotencyAnswerStatement(batch.answers ?? []),
  ];
  return statements.filter((s) => s.rows.length > 0);
}

/** Executes a statement as multi-row INSERTs of `chunk` rows, on `db` (usually a transaction). */
export async function executeInChunks(db: Kysely<Database>, s: RowStatement): Promise<void> {
  for (let i = 0; i < s.rows.length; i += s.chunk) await s.build(db, s.rows.slice(i, i + s.chunk)).execute();
}

/**
 * Rows per statement on SQLite's writer thread: one statement of 100 rows runs about 1.7× faster per
 * row than 100 runs of a one-row statement, and larger statements gain nothing more (measured).
 */
export const SQLITE_ROWS_PER_STATEMENT = 100;

const compiledSql = new WeakMap<Kysely<Database>, Map<string, string>>();

/** The SQL of `s` for `n` rows, compiled once per statement, row count and column list. */
function sqlFor(db: Kysely<Database>, s: RowStatement, n: number, columns: string[]): string {
  let cache = compiledSql.get(db);
  if (!cache) {
    cache = new Map();
    compiledSql.set(db, cache);
  }
  const key = `${s.name}|${n}|${columns.join(',')}`;
  let text = cache.get(key);
  if (text === undefined) {
    const compiled = s.build(db, s.rows.slice(0, n)).compile();
    if (compiled.parameters.length !== n * columns.length) {
      throw new Error(
        `${s.name}: ${compiled.parameters.length} parameters for ${n} rows of ${columns.length} columns`,
      );
    }
    text = compiled.sql;
    cache.set(key, text);
  }
  return text;
}

/**
 * Lays a statement out as multi-row statements of `rowsPerStatement` rows (and one for the rest), each
 * execution's parameters flat, row by row, in column order: a flat array of scalars is also the
 * cheapest thing to post to the writer thread.
 */
export function compileRows(
  db: Kysely<Database>,
  s: RowStatement,
  rowsPerStatement = SQLITE_ROWS_PER_STATEMENT,
): CompiledRows[] {
  const columns = Object.keys(s.rows[0] as object);
  const width = columns.length;
  const full = Math.floor(s.rows.length / rowsPerStatement);
  const rest = s.rows.length - full * rowsPerStatement;
  // Built by push, not `new Array(n)`: a preallocated array stays "holey" in V8, and the structured
  // clone that posts it to the writer thread sends a holey array index by index (measured: 0.9 µs a
  // row to serialize and 1.4 µs to read back, against 0.45 and 0.85 for a packed one).
  const params = (from: number, to: number) => {
    const out: unknown[] = [];
    for (let i = from; i < to; i++) {
      const row = s.rows[i] as Record<string, unknown>;
      for (let c = 0; c < width; c++) out.push(row[columns[c]!]);
    }
    return out;
  };
  const out: CompiledRows[] = [];
  if (full > 0) {
    const rows: unknown[][] = [];
    for (let i = 0; i < full; i++) rows.push(params(i * rowsPerStatement, (i + 1) * rowsPerStatement));
    out.push({ sql: sqlFor(db, s, rowsPerStatement, columns), rows });
  }
  if (rest > 0) {
    out.push({ sql: sqlFor(db, s, rest, columns), rows: [params(s.rows.length - rest, s.rows.length)] });
  }
  return out;
}
