// The writes of one group-commit batch as (statement, rows) pairs, so each engine can run them its
// fastest way: per-row prepared statements in one call (SQLite), or multi-row statements (PostgreSQL).
import type { Compilable, Kysely } from 'kysely';
import type { JsonObject } from '../core/json.js';
import { type ExposureRollup, type MetricRollup, rollUpExposures, rollUpResults } from '../core/rollups.js';
import type { Database, ExposureRow, ResultRow, WriteBatch } from './schema.js';

/** `build` turns rows (objects keyed by column, all in the same key order) into one INSERT statement. */
export interface RowStatement<R extends object = object> {
  rows: R[];
  /** Rows per multi-row statement (SQLite allows 32766 bound parameters, PostgreSQL 65535). */
  chunk: number;
  build(db: Kysely<Database>, rows: R[]): Compilable & { execute(): Promise<unknown> };
}

/** A one-row statement compiled once, and the parameters of every row in its parameter order. */
export interface CompiledRows {
  sql: string;
  rows: unknown[][];
}

function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

export function rolledResult(
  r: Pick<ResultRow, 'experiment_id' | 'experiment_version' | 'variant_key'> & { metrics: unknown },
) {
  return {
    experimentId: Number(r.experiment_id),
    version: Number(r.experiment_version),
    variantKey: r.variant_key,
    metrics: r.metrics === null ? null : json<JsonObject>(r.metrics),
  };
}

function rolledExposure(e: ExposureRow) {
  return { experimentId: e.experiment_id, version: e.experiment_version, variantKey: e.variant_key };
}

/**
 * Rollup rows are upserted in key order: two instances adding to the same keys then lock the rows in the
 * same order and cannot deadlock (PostgreSQL).
 */
function byKey<T>(key: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

export function metricRollupStatement(rollups: MetricRollup[]): RowStatement {
  const sorted = [...rollups].sort(
    byKey((r) => `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`),
  );
  return {
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

export function exposureRollupStatement(rollups: ExposureRollup[]): RowStatement {
  const sorted = [...rollups].sort(byKey((r) => `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}`));
  return {
    rows: sorted.map((r) => ({
      experiment_id: r.experimentId,
      experiment_version: r.version,
      variant_key: r.variantKey,
      n: r.n,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('exposure_rollups')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'experiment_version', 'variant_key'])
            .doUpdateSet((eb) => ({ n: eb('exposure_rollups.n', '+', eb.ref('excluded.n')) })),
        ),
  };
}

/** Rows, then the rollups that summarize them: all in one transaction, they never disagree. */
export function batchStatements(batch: WriteBatch): RowStatement[] {
  const statements: RowStatement[] = [
    {
      rows: batch.results,
      chunk: 1000,
      build: (db, rows) => db.insertInto('results').values(rows as ResultRow[]),
    },
    {
      rows: batch.exposures,
      chunk: 2000,
      build: (db, rows) => db.insertInto('exposures').values(rows as ExposureRow[]),
    },
    metricRollupStatement(rollUpResults(batch.results.map(rolledResult))),
    exposureRollupStatement(rollUpExposures(batch.exposures.map(rolledExposure))),
  ];
  return statements.filter((s) => s.rows.length > 0);
}

/** Executes a statement as multi-row INSERTs of `chunk` rows, on `db` (usually a transaction). */
export async function executeInChunks(db: Kysely<Database>, s: RowStatement): Promise<void> {
  for (let i = 0; i < s.rows.length; i += s.chunk) await s.build(db, s.rows.slice(i, i + s.chunk)).execute();
}

/** Compiles the one-row form of a statement and lays out every row's parameters in its order. */
export function compileRows(db: Kysely<Database>, s: RowStatement): CompiledRows {
  const first = s.rows[0] as Record<string, unknown>;
  const columns = Object.keys(first);
  const compiled = s.build(db, [first]).compile();
  if (compiled.parameters.length !== columns.length) {
    throw new Error(`statement takes ${compiled.parameters.length} parameters for ${columns.length} columns`);
  }
  return {
    sql: compiled.sql,
    rows: s.rows.map((r) => columns.map((c) => (r as Record<string, unknown>)[c])),
  };
}
