// The rollup tables as Kysely sees them (schema.ts gathers them into Database): the sums, counts and
// sketch bins the writes keep per experiment, version and variant, all-time and hourly (bucket_*), per user
// of sticky experiments, and pairs' sums (migration 019).

export interface MetricRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  metric: string;
  kind: string;
  n: number;
  sum: number;
  sum_squares: number;
  /** The least and greatest value counted (migration 017); NULL: unknown, rows from before it. */
  min_value: number | null;
  max_value: number | null;
}

export interface ExposureRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  n: number;
}

/** Per-user running sums of sticky experiments (migration 006): x = sum, y = n. */
export interface UnitSumsTable {
  experiment_id: number;
  user_id: string;
  experiment_version: number;
  variant_key: string;
  metric: string;
  kind: string;
  n: number;
  sum: number;
}

/** Per variant and metric: the sums over users the delta method reads (migration 006). */
export interface UnitRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  metric: string;
  kind: string;
  units: number;
  sum_x: number;
  sum_x2: number;
  sum_y: number;
  sum_y2: number;
  sum_xy: number;
}

/** Hourly metric rollups for the time series (migration 006); bucket is the hour's ISO start. */
export interface BucketRollupsTable {
  experiment_id: number;
  bucket: string;
  experiment_version: number;
  variant_key: string;
  metric: string;
  kind: string;
  n: number;
  sum: number;
  sum_squares: number;
  min_value: number | null;
  max_value: number | null;
}

export interface BucketExposuresTable {
  experiment_id: number;
  bucket: string;
  experiment_version: number;
  variant_key: string;
  n: number;
}

/** Results per experiment, version and variant key (migration 007). */
export interface ResultRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  n: number;
}

/** Sticky experiments: each user once per version, and how many per variant (migration 008). */
export interface ExposureUsersTable {
  experiment_id: number;
  experiment_version: number;
  user_id: string;
  variant_key: string;
}

/** Hourly moves of unit_rollups (migration 008): its columns and the hour. */
export interface BucketUnitRollupsTable extends UnitRollupsTable {
  bucket: string;
}

/** DDSketch bin counts per variant and metric (migration 008); bucket_sketch_bins adds the hour. */
export interface SketchBinsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  metric: string;
  side: number;
  key: number;
  count: number;
}

export interface BucketSketchBinsTable extends SketchBinsTable {
  bucket: string;
}

/** Per variant, pair and unit: the sums of core/pairs.ts (migration 019). */
export interface PairRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  pair: string;
  unit: string;
  n: number;
  sum_x: number;
  sum_x2: number;
  sum_y: number;
  sum_y2: number;
  sum_xy: number;
  sum_z: number;
  sum_z2: number;
  sum_xz: number;
  sum_yz: number;
}

/** Hourly moves of pair_rollups (migration 019). */
export interface BucketPairRollupsTable extends PairRollupsTable {
  bucket: string;
}

/** Users of a capped metric by the bin of their mean (core/unit-bins.ts, migration 019). */
export interface UnitBinsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  metric: string;
  side: number;
  key: number;
  units: number;
  sum_x: number;
  sum_x2: number;
  sum_y: number;
  sum_y2: number;
  sum_xy: number;
}
