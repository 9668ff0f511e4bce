// The SQL store's reads (store/sql-store.ts runs them): results, exposures and rollups, as the Store
// interface answers them. Each takes the connection to read on (the read connection, on SQLite).

import type { Kysely, Selectable } from 'kysely';
import type { Exposure } from '../core/exposure.js';
import type { JsonObject } from '../core/json.js';
import type { MetricRollup } from '../core/rollups.js';
import type { SketchRow } from '../core/sketch-rollups.js';
import type { UnitRollup } from '../core/units.js';
import type { SketchSide } from '../stats/sketch.js';
import { readHourlyPairRollups, readPairRollups, readUnitBins } from './pair-statements.js';
import { exposureBatches } from './rebuild.js';
import type { ResultTarget } from './result-types.js';
import type { SketchBinsTable, UnitRollupsTable } from './rollup-tables.js';
import type { HourlyData, Rollups } from './rollup-types.js';
import { type Database, isoTime } from './schema.js';

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

/** The tables holding an experiment's rollups, each with an experiment_id column. */
type RollupTable =
  | 'metric_rollups'
  | 'exposure_rollups'
  | 'result_rollups'
  | 'unit_rollups'
  | 'exposure_user_rollups'
  | 'sketch_bins'
  | 'bucket_rollups'
  | 'bucket_exposures'
  | 'bucket_unit_rollups'
  | 'bucket_sketch_bins';

/**
 * Every row of one experiment in `table`; sketch bins without their zero counts; the hourly tables
 * (bucket_*) oldest hour first.
 */
async function rowsOf<T extends RollupTable>(
  db: Kysely<Database>,
  table: T,
  experimentId: number,
): Promise<Array<Selectable<Database[T]>>> {
  // One query shape for ten tables: typed per table by the signature, built on one of them.
  const one = db as unknown as Kysely<Pick<Database, 'bucket_sketch_bins'>>;
  let query = one
    .selectFrom(table as 'bucket_sketch_bins')
    .selectAll()
    .where('experiment_id', '=', experimentId);
  if (table.endsWith('sketch_bins')) query = query.where('count', '<>', 0);
  if (table.startsWith('bucket_')) query = query.orderBy('bucket');
  return (await query.execute()) as unknown as Array<Selectable<Database[T]>>;
}

const toMetricRollup = (m: Selectable<Database['metric_rollups']>): MetricRollup => ({
  experimentId: Number(m.experiment_id),
  version: Number(m.experiment_version),
  variantKey: m.variant_key,
  metric: m.metric,
  kind: m.kind as MetricRollup['kind'],
  n: Number(m.n),
  sum: Number(m.sum),
  sumSquares: Number(m.sum_squares),
  minValue: m.min_value === null ? null : Number(m.min_value),
  maxValue: m.max_value === null ? null : Number(m.max_value),
});

const toCount = (r: Selectable<Database['exposure_rollups']>) => ({
  experimentId: Number(r.experiment_id),
  version: Number(r.experiment_version),
  variantKey: r.variant_key,
  n: Number(r.n),
});

/** All rollups of an experiment (the analysis reads these). */
export async function readRollups(db: Kysely<Database>, experimentId: number): Promise<Rollups> {
  const metrics = await rowsOf(db, 'metric_rollups', experimentId);
  const exposures = await rowsOf(db, 'exposure_rollups', experimentId);
  const results = await rowsOf(db, 'result_rollups', experimentId);
  const units = await rowsOf(db, 'unit_rollups', experimentId);
  const users = await rowsOf(db, 'exposure_user_rollups', experimentId);
  const bins = await rowsOf(db, 'sketch_bins', experimentId);
  const pairs = await readPairRollups(db, experimentId);
  const unitBins = await readUnitBins(db, experimentId);
  return {
    pairs,
    unitBins,
    exposureUsers: users.map(toCount),
    sketches: bins.map(toSketchRow),
    results: results.map(toCount),
    units: units.map(toUnitRollup),
    metrics: metrics.map(toMetricRollup),
    exposures: exposures.map(toCount),
  };
}

export async function readHourly(db: Kysely<Database>, experimentId: number): Promise<HourlyData> {
  const units = await rowsOf(db, 'bucket_unit_rollups', experimentId);
  const bins = await rowsOf(db, 'bucket_sketch_bins', experimentId);
  const metrics = await rowsOf(db, 'bucket_rollups', experimentId);
  const exposures = await rowsOf(db, 'bucket_exposures', experimentId);
  const pairs = await readHourlyPairRollups(db, experimentId);
  return {
    pairs,
    metrics: metrics.map((m) => ({ ...toMetricRollup(m), hour: m.bucket })),
    exposures: exposures.map((e) => ({
      hour: e.bucket,
      version: Number(e.experiment_version),
      variantKey: e.variant_key,
      n: Number(e.n),
    })),
    units: units.map((u) => ({ ...toUnitRollup(u), hour: u.bucket })),
    sketches: bins.map((b) => ({ ...toSketchRow(b), hour: b.bucket })),
  };
}

export async function findResult(
  db: Kysely<Database>,
  experimentId: number,
  logId: string,
): Promise<ResultTarget | undefined> {
  return (await findResults(db, experimentId, [logId])).get(logId);
}

/** A results row as feedback on it sees it (its variant, user, assignment and context). */
const TARGET_COLUMNS = [
  'log_id',
  'experiment_version',
  'variant_key',
  'user_id',
  'assignment_id',
  'context',
  'run_id',
] as const;

/** Log ids looked up in one statement (well below SQLite's and PostgreSQL's bound parameters). */
const LOG_IDS_PER_READ = 1000;

export async function findResults(
  db: Kysely<Database>,
  experimentId: number,
  logIds: readonly string[],
): Promise<Map<string, ResultTarget>> {
  const found = new Map<string, ResultTarget>();
  const unique = [...new Set(logIds)];
  for (let i = 0; i < unique.length; i += LOG_IDS_PER_READ) {
    const rows = await db
      .selectFrom('results')
      .select(TARGET_COLUMNS)
      .where('experiment_id', '=', experimentId)
      .where('log_id', 'in', unique.slice(i, i + LOG_IDS_PER_READ))
      .execute();
    for (const row of rows) {
      found.set(row.log_id, {
        version: Number(row.experiment_version),
        variantKey: row.variant_key,
        userId: row.user_id,
        assignmentId: row.assignment_id,
        context: row.context === null ? null : json<JsonObject>(row.context),
        ...(row.run_id === null ? {} : { offline: true }),
      });
    }
  }
  return found;
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
