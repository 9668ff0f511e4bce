// The writes of one group-commit batch as (statement, rows) pairs, so each engine can run them its
// fastest way: multi-row statements prepared once and run in one call (SQLite's writer thread), or
// multi-row statements of up to `chunk` rows (PostgreSQL). Here: the shape, every table's upsert (UPSERTS)
// and the rollups' statements; the rows a batch writes whatever is stored are in batch-rows.ts.
import type { Compilable, Kysely } from 'kysely';
import type { ExposureRollup, HourlyRollup, MetricRollup } from '../core/rollups.js';
import type { UnitRollup, UnitSum } from '../core/units.js';
import type { ExposureBatch } from '../core/writes.js';
import { rowsOf } from './columns.js';
import type { Database } from './schema.js';

/** `build` turns rows (objects keyed by column, all in the same key order) into one INSERT statement. */
export interface RowStatement<R extends object = object> {
  /** Names the statement's shape (compiled SQL is cached under it). */
  name: string;
  rows: R[];
  /** Rows per multi-row statement (SQLite allows 32766 bound parameters, PostgreSQL 65535). */
  chunk: number;
  build(db: Kysely<Database>, rows: R[]): Compilable & { execute(): Promise<unknown> };
}

/** The key of a row per experiment version and variant (the counts' tables). */
const VARIANT = ['experiment_id', 'experiment_version', 'variant_key'];
/** …and per metric (the all-time rollups). */
const METRIC = [...VARIANT, 'metric', 'kind'];
/** …and per hour (the time series' rollups). */
const HOURLY_METRIC = ['experiment_id', 'bucket', 'experiment_version', 'variant_key', 'metric', 'kind'];
/** …per segment key and value (segment_rollups; the first five: segment_results). */
const SEGMENT_METRIC = [
  'experiment_id',
  'segment_key',
  'value',
  'experiment_version',
  'variant_key',
  'metric',
  'kind',
];
/** A sketch bin's key after its experiment (and hour). */
const BIN = ['experiment_version', 'variant_key', 'metric', 'side', 'key'];
/** The per-variant sums over users the delta method reads (core/units.ts). */
export const UNIT_ROLLUP_SUMS = ['units', 'sum_x', 'sum_x2', 'sum_y', 'sum_y2', 'sum_xy'];
/** A pair row's key (core/pairs.ts) and its sums. */
const PAIR = ['experiment_id', 'experiment_version', 'variant_key', 'pair', 'unit'];
export const PAIR_SUM_COLUMNS = [
  'n',
  'sum_x',
  'sum_x2',
  'sum_y',
  'sum_y2',
  'sum_xy',
  'sum_z',
  'sum_z2',
  'sum_xz',
  'sum_yz',
];

/**
 * What a row does when its key is stored already: `add` its columns to the stored ones (`c = table.c +
 * excluded.c`: a rollup moved by the batch's signed change), `replace` them (`c = excluded.c`), or, with
 * neither, nothing (DO NOTHING).
 */
export interface Upsert {
  keys: string[];
  add?: string[];
  replace?: string[];
  /**
   * Columns kept as the least (`min`) or greatest (`max`) value: the stored one unless the row's is past it.
   * A stored NULL stays NULL (unknown until a rebuild) and a NULL in the row changes nothing, as
   * core/rollups.ts extremesAfter.
   */
  least?: string[];
  greatest?: string[];
  /** Rows per multi-row statement (SQLite allows 32766 bound parameters, PostgreSQL 65535). */
  chunk: number;
}

/** The metric rollups' min and max (migration 017). */
const EXTREMES = { least: ['min_value'], greatest: ['max_value'] };

/** Every table a batch (or a rebuild) upserts into: the one shape of all their statements. */
const UPSERTS = {
  metric_rollups: { keys: METRIC, add: ['n', 'sum', 'sum_squares'], ...EXTREMES, chunk: 2000 },
  exposure_rollups: { keys: VARIANT, add: ['n'], chunk: 2000 },
  result_rollups: { keys: VARIANT, add: ['n'], chunk: 2000 },
  exposure_user_rollups: { keys: VARIANT, add: ['n'], chunk: 2000 },
  bucket_rollups: { keys: HOURLY_METRIC, add: ['n', 'sum', 'sum_squares'], ...EXTREMES, chunk: 2000 },
  bucket_exposures: {
    keys: ['experiment_id', 'bucket', 'experiment_version', 'variant_key'],
    add: ['n'],
    chunk: 2000,
  },
  unit_sums: {
    keys: ['experiment_id', 'user_id', 'experiment_version', 'variant_key', 'metric', 'kind'],
    replace: ['n', 'sum'],
    chunk: 2000,
  },
  unit_rollups: { keys: METRIC, add: UNIT_ROLLUP_SUMS, chunk: 2000 },
  bucket_unit_rollups: { keys: HOURLY_METRIC, add: UNIT_ROLLUP_SUMS, chunk: 2000 },
  sketch_bins: { keys: ['experiment_id', ...BIN], add: ['count'], chunk: 2000 },
  bucket_sketch_bins: { keys: ['experiment_id', 'bucket', ...BIN], add: ['count'], chunk: 2000 },
  exposure_users: { keys: ['experiment_id', 'experiment_version', 'user_id'], chunk: 2000 },
  pair_rollups: { keys: PAIR, add: PAIR_SUM_COLUMNS, chunk: 1000 },
  bucket_pair_rollups: { keys: ['bucket', ...PAIR], add: PAIR_SUM_COLUMNS, chunk: 1000 },
  segment_pair_rollups: {
    keys: ['experiment_id', 'segment_key', 'value', ...PAIR.slice(1)],
    add: PAIR_SUM_COLUMNS,
    chunk: 1000,
  },
  unit_bins: { keys: ['experiment_id', ...BIN], add: UNIT_ROLLUP_SUMS, chunk: 2000 },
  segment_rollups: { keys: SEGMENT_METRIC, add: ['n', 'sum', 'sum_squares'], chunk: 2000 },
  segment_unit_sums: {
    keys: ['experiment_id', 'user_id', ...SEGMENT_METRIC.slice(1)],
    replace: ['n', 'sum'],
    chunk: 2000,
  },
  segment_unit_rollups: { keys: SEGMENT_METRIC, add: UNIT_ROLLUP_SUMS, chunk: 2000 },
  segment_sketch_bins: {
    keys: [...SEGMENT_METRIC.slice(0, 6), 'side', 'key'],
    add: ['count'],
    chunk: 2000,
  },
  segment_results: { keys: SEGMENT_METRIC.slice(0, 5), add: ['n'], chunk: 2000 },
  assignment_segments: { keys: ['experiment_id', 'assignment_id', 'segment_key'], chunk: 2000 },
  segment_pending: { keys: ['experiment_id', 'assignment_id', 'log_id', 'segment_key'], chunk: 2000 },
  feedback: {
    keys: ['experiment_id', 'target', 'metric'],
    replace: ['feedback_id', 'kind', 'value', 'comment', 'updated_at', 'segments'],
    chunk: 1000,
  },
  idempotency_keys: {
    keys: ['owner', 'key'],
    replace: ['fingerprint', 'state', 'status', 'answer', 'created_at'],
    chunk: 500,
  },
} satisfies Partial<Record<keyof Database, Upsert>>;

export type UpsertTable = keyof typeof UPSERTS;

/** How rows of the statement named `name` meet stored ones, if it is an upsert (postgres-batch.ts). */
export function upsertOf(name: string): Upsert | undefined {
  return (UPSERTS as Record<string, Upsert | undefined>)[name];
}

/** `build` of the multi-row upsert into `table`, as UPSERTS describes it. */
function upsert(table: UpsertTable): RowStatement['build'] {
  const { keys, add = [], replace = [], least = [], greatest = [] }: Upsert = UPSERTS[table];
  // biome-ignore lint/suspicious/noExplicitAny: Kysely types the builder per table; this one serves many
  const past = (eb: any, c: string, op: '<' | '>') =>
    // NULL on either side compares to NULL, so the ELSE keeps the stored value.
    eb
      .case()
      .when(eb.ref(`excluded.${c}`), op, eb.ref(`${table}.${c}`))
      .then(eb.ref(`excluded.${c}`))
      .else(eb.ref(`${table}.${c}`))
      .end();
  return (db, rows) =>
    db
      .insertInto(table)
      .values(rows as never)
      .onConflict((oc) => {
        const conflict = oc.columns(keys as never);
        if (add.length === 0 && replace.length === 0) return conflict.doNothing();
        // biome-ignore lint/suspicious/noExplicitAny: Kysely types the builder per table; this one serves many
        return conflict.doUpdateSet((eb: any) =>
          Object.fromEntries([
            ...add.map((c) => [c, eb(`${table}.${c}`, '+', eb.ref(`excluded.${c}`))]),
            ...replace.map((c) => [c, eb.ref(`excluded.${c}`)]),
            ...least.map((c) => [c, past(eb, c, '<')]),
            ...greatest.map((c) => [c, past(eb, c, '>')]),
          ]),
        );
      });
}

/** The upsert of `rows` into `table` (in any order: see inKeyOrder). */
export function upsertStatement(table: UpsertTable, rows: object[]): RowStatement {
  return { name: table, rows, chunk: UPSERTS[table].chunk, build: upsert(table) };
}

/** Orders two key values: numbers as numbers, anything else as text. */
function compareKey(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The statement with its rows in the order of its table's key (an upsert; any other statement as it is).
 * Where writers run at once (PostgreSQL), two transactions adding to the same rows then lock them in the
 * same order and cannot deadlock. SQLite's one writer needs no order, so the builders leave rows as they
 * come and only the PostgreSQL paths sort (issue 37: sorting cost ~50 µs of a 31-result batch's planning).
 * Stable: rows of one key keep their order.
 */
export function inKeyOrder(s: RowStatement): RowStatement {
  const upsert = (UPSERTS as Record<string, Upsert | undefined>)[s.name];
  if (upsert === undefined || s.rows.length < 2) return s;
  const keys = upsert.keys;
  const rows = [...s.rows] as Array<Record<string, unknown>>;
  rows.sort((a, b) => {
    for (const k of keys) {
      const d = compareKey(a[k], b[k]);
      if (d !== 0) return d;
    }
    return 0;
  });
  return { ...s, rows };
}

/** The fields every rollup row starts with: its experiment, version and variant. */
const OF_VARIANT = ['experimentId', 'version', 'variantKey'] as const;
/** A unit rollup's sums over users (core/units.ts). */
const UNIT_SUMS = ['units', 'sumX', 'sumX2', 'sumY', 'sumY2', 'sumXY'] as const;
const MOMENTS = ['n', 'sum', 'sumSquares'] as const;

/** A metric rollup's columns: its key, its sums, and its min and max (null: the move added no value). */
const EXTREME_FIELDS = ['minValue', 'maxValue'] as const;
const metricRollupRow = rowsOf<MetricRollup>([...OF_VARIANT, 'metric', 'kind', ...MOMENTS], EXTREME_FIELDS);
const hourlyRollupRow = rowsOf<HourlyRollup>(
  [...OF_VARIANT, 'hour', 'metric', 'kind', ...MOMENTS],
  EXTREME_FIELDS,
);
const countRow = rowsOf<ExposureRollup>([...OF_VARIANT, 'n']);
const hourlyCountRow = rowsOf<ExposureRollup & { hour: string }>([...OF_VARIANT, 'hour', 'n']);
const unitSumRow = rowsOf<UnitSum>([...OF_VARIANT, 'userId', 'metric', 'kind', 'n', 'sum']);

export function metricRollupStatement(rollups: MetricRollup[]): RowStatement {
  return upsertStatement('metric_rollups', rollups.map(metricRollupRow));
}

/** Counts per experiment, version and variant key, added to: exposures, results or distinct users (`table`). */
export function countStatement(
  table: 'exposure_rollups' | 'result_rollups' | 'exposure_user_rollups',
  rollups: ExposureRollup[],
): RowStatement {
  return upsertStatement(table, rollups.map(countRow));
}

export const exposureRollupStatement = (rollups: ExposureRollup[]) =>
  countStatement('exposure_rollups', rollups);

/** Hourly metric sums for the time series, added to (signed: feedback may take a value out). */
export function hourlyRollupStatement(rollups: HourlyRollup[]): RowStatement {
  return upsertStatement('bucket_rollups', rollups.map(hourlyRollupRow));
}

/** Exposures per hour and variant, from the batches' own hours. */
export function hourlyExposureStatement(batches: ExposureBatch[]): RowStatement {
  const counts = new Map<
    string,
    { experimentId: number; hour: string; version: number; variantKey: string; n: number }
  >();
  for (const b of batches) {
    for (const v of b.variants) {
      const key = `${b.experimentId}\u0000${b.hour}\u0000${b.version}\u0000${v.variantKey}`;
      const acc = counts.get(key);
      if (acc) acc.n += v.n;
      else
        counts.set(key, {
          experimentId: b.experimentId,
          hour: b.hour,
          version: b.version,
          variantKey: v.variantKey,
          n: v.n,
        });
    }
  }
  const sorted = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return upsertStatement(
    'bucket_exposures',
    sorted.map(([, c]) => hourlyCountRow(c)),
  );
}

/** Users' running sums, replaced by their new values (read and planned under the batch's lock). */
export function unitSumStatement(sums: UnitSum[]): RowStatement {
  return upsertStatement('unit_sums', sums.map(unitSumRow));
}

/** A unit rollup's columns (the per-variant sums over users the delta method reads). */
export const unitRollupRow = rowsOf<UnitRollup>([...OF_VARIANT, 'metric', 'kind', ...UNIT_SUMS]);

/** Per-variant sums over users, moved by the difference each user's new sums make (core/units.ts). */
export function unitRollupStatement(rollups: UnitRollup[]): RowStatement {
  return upsertStatement('unit_rollups', rollups.map(unitRollupRow));
}
