// The SQL store's reads (store/sql-store.ts runs them): results, exposures and rollups, as the Store
// interface answers them. Each takes the connection to read on (the read connection, on SQLite).
import type { Kysely, Selectable } from 'kysely';
import type { Exposure } from '../core/exposure.js';
import type { JsonObject } from '../core/json.js';
import type { MetricRollup } from '../core/rollups.js';
import type { SketchRow } from '../core/sketch-rollups.js';
import type { UnitRollup } from '../core/units.js';
import type { SketchSide } from '../stats/sketch.js';
import { exposureBatches } from './rebuild.js';
import { type Database, isoTime, type SketchBinsTable, type UnitRollupsTable } from './schema.js';
import type { Buckets, ResultTarget, Rollups } from './store.js';

export function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function toUnitRollup(u: Selectable<UnitRollupsTable>): UnitRollup {
  return {
    experimentId: Number(u.experiment_id),
    version: Number(u.experiment_version),
    variantKey: u.variant_key,
    metric: u.metric,
    kind: u.kind as MetricRollup['kind'],
    units: Number(u.units),
    sumX: Number(u.sum_x),
    sumX2: Number(u.sum_x2),
    sumY: Number(u.sum_y),
    sumY2: Number(u.sum_y2),
    sumXY: Number(u.sum_xy),
  };
}

function toSketchRow(b: Selectable<SketchBinsTable>): SketchRow {
  return {
    version: Number(b.experiment_version),
    variantKey: b.variant_key,
    metric: b.metric,
    side: Number(b.side) as SketchSide,
    key: Number(b.key),
    count: Number(b.count),
  };
}

/** All rollups of an experiment (the analysis reads these). */
export async function readRollups(db: Kysely<Database>, experimentId: number): Promise<Rollups> {
  const metrics = await db
    .selectFrom('metric_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .execute();
  const exposures = await db
    .selectFrom('exposure_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .execute();
  const results = await db
    .selectFrom('result_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .execute();
  const units = await db
    .selectFrom('unit_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .execute();
  const users = await db
    .selectFrom('exposure_user_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .execute();
  const bins = await db
    .selectFrom('sketch_bins')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('count', '<>', 0)
    .execute();
  return {
    exposureUsers: users.map((r) => ({
      experimentId: Number(r.experiment_id),
      version: Number(r.experiment_version),
      variantKey: r.variant_key,
      n: Number(r.n),
    })),
    sketches: bins.map(toSketchRow),
    results: results.map((r) => ({
      experimentId: Number(r.experiment_id),
      version: Number(r.experiment_version),
      variantKey: r.variant_key,
      n: Number(r.n),
    })),
    units: units.map(toUnitRollup),
    metrics: metrics.map((m) => ({
      experimentId: Number(m.experiment_id),
      version: Number(m.experiment_version),
      variantKey: m.variant_key,
      metric: m.metric,
      kind: m.kind as MetricRollup['kind'],
      n: Number(m.n),
      sum: Number(m.sum),
      sumSquares: Number(m.sum_squares),
    })),
    exposures: exposures.map((e) => ({
      experimentId: Number(e.experiment_id),
      version: Number(e.experiment_version),
      variantKey: e.variant_key,
      n: Number(e.n),
    })),
  };
}

export async function readBuckets(db: Kysely<Database>, experimentId: number): Promise<Buckets> {
  const units = await db
    .selectFrom('bucket_unit_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .orderBy('bucket')
    .execute();
  const bins = await db
    .selectFrom('bucket_sketch_bins')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('count', '<>', 0)
    .orderBy('bucket')
    .execute();
  const metrics = await db
    .selectFrom('bucket_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .orderBy('bucket')
    .execute();
  const exposures = await db
    .selectFrom('bucket_exposures')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .orderBy('bucket')
    .execute();
  return {
    metrics: metrics.map((m) => ({
      experimentId,
      bucket: m.bucket,
      version: Number(m.experiment_version),
      variantKey: m.variant_key,
      metric: m.metric,
      kind: m.kind as MetricRollup['kind'],
      n: Number(m.n),
      sum: Number(m.sum),
      sumSquares: Number(m.sum_squares),
    })),
    exposures: exposures.map((e) => ({
      bucket: e.bucket,
      version: Number(e.experiment_version),
      variantKey: e.variant_key,
      n: Number(e.n),
    })),
    units: units.map((u) => ({ ...toUnitRollup(u), bucket: u.bucket })),
    sketches: bins.map((b) => ({ ...toSketchRow(b), bucket: b.bucket })),
  };
}

export async function findResult(
  db: Kysely<Database>,
  experimentId: number,
  logId: string,
): Promise<ResultTarget | undefined> {
  const row = await db
    .selectFrom('results')
    .select(['experiment_version', 'variant_key', 'user_id'])
    .where('log_id', '=', logId)
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  return row && { version: Number(row.experiment_version), variantKey: row.variant_key, userId: row.user_id };
}

export async function listExposures(db: Kysely<Database>, experimentId: number): Promise<Exposure[]> {
  const out: Exposure[] = [];
  // Rows written one by one before migration 003 (or by an older instance during a rolling deploy).
  const legacy = await db
    .selectFrom('exposures')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .orderBy('seq')
    .execute();
  for (const r of legacy) {
    out.push({
      assignmentId: r.assignment_id,
      experimentId,
      version: Number(r.experiment_version),
      variantKey: r.variant_key,
      userId: r.user_id,
      context: r.context === null ? null : json<JsonObject>(r.context),
      createdAt: isoTime(r.created_at),
    });
  }
  const mixed = out.length > 0;
  for await (const exposures of exposureBatches(db, experimentId)) {
    for (const e of exposures) out.push(e);
  }
  // Both kinds: in time order (a stable sort keeps each kind's own order within a millisecond).
  if (mixed) out.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  return out;
}

export async function lastResultSeq(db: Kysely<Database>, experimentId: number): Promise<number> {
  const row = await db
    .selectFrom('results')
    .select((eb) => eb.fn.max('seq').as('last'))
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  return Number(row?.last ?? 0);
}

export async function countExposures(db: Kysely<Database>, experimentId: number): Promise<number> {
  const batches = await db
    .selectFrom('exposure_batches')
    .select((eb) => eb.fn.sum<number>('count').as('n'))
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  const legacy = await db
    .selectFrom('exposures')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  return Number(batches?.n ?? 0) + Number(legacy?.n ?? 0);
}

/** The metric names each experiment rolls up, as committed. */
export async function readMetricNames(
  db: Kysely<Database>,
  ids: number[],
): Promise<Map<number, Set<string>>> {
  const rows = await db
    .selectFrom('metric_rollups')
    .select(['experiment_id', 'metric'])
    .where('experiment_id', 'in', ids)
    .groupBy(['experiment_id', 'metric'])
    .execute();
  const names = new Map<number, Set<string>>();
  for (const r of rows) {
    const id = Number(r.experiment_id);
    let set = names.get(id);
    if (!set) {
      set = new Set();
      names.set(id, set);
    }
    set.add(r.metric);
  }
  return names;
}
