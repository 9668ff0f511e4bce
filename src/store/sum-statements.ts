// The statements of the write-time sums of issue 23 (distinct users, hourly unit moves, sketch bins), in
// the shape of row-statements.ts: multi-row upserts in key order (no deadlock between PostgreSQL writers).
import type { ExposureUser } from '../core/exposure-users.js';
import type { ExposureRollup } from '../core/rollups.js';
import { bucketSketchKey, type SketchMove, sketchKey } from '../core/sketch-rollups.js';
import { type BucketUnitRollup, bucketUnitRollupKey } from '../core/unit-hours.js';
import { additive, countStatement, type RowStatement, sortedBy } from './row-statements.js';

/** Users not stored yet (planned so); DO NOTHING all the same, so a row is never written twice. */
export function exposureUsersStatement(users: ExposureUser[]): RowStatement {
  const sorted = sortedBy(users, (u) => `${u.experimentId}\u0000${u.version}\u0000${u.userId}`);
  return {
    name: 'exposure_users',
    rows: sorted.map((u) => ({
      experiment_id: u.experimentId,
      experiment_version: u.version,
      user_id: u.userId,
      variant_key: u.variantKey,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('exposure_users')
        .values(rows as never)
        .onConflict((oc) => oc.columns(['experiment_id', 'experiment_version', 'user_id']).doNothing()),
  };
}

/** Distinct users per variant, added to by the users a batch inserted. */
export const exposureUserRollupStatement = (counts: ExposureRollup[]) =>
  countStatement('exposure_user_rollups', counts);

/** Hourly moves of the unit rollups (core/unit-hours.ts), added to. */
export function bucketUnitRollupStatement(rollups: BucketUnitRollup[]): RowStatement {
  const sorted = sortedBy(rollups, bucketUnitRollupKey);
  return {
    name: 'bucket_unit_rollups',
    rows: sorted.map((r) => ({
      experiment_id: r.experimentId,
      bucket: r.bucket,
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
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('bucket_unit_rollups')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'bucket', 'experiment_version', 'variant_key', 'metric', 'kind'])
            .doUpdateSet(
              additive('bucket_unit_rollups', ['units', 'sum_x', 'sum_x2', 'sum_y', 'sum_y2', 'sum_xy']),
            ),
        ),
  };
}

/** Sketch bin counts moved by the batch's values (`count = count + k`, k signed), all-time. */
export function sketchBinStatement(moves: SketchMove[]): RowStatement {
  const sorted = sortedBy(moves, sketchKey);
  return {
    name: 'sketch_bins',
    rows: sorted.map((m) => ({
      experiment_id: m.experimentId,
      experiment_version: m.version,
      variant_key: m.variantKey,
      metric: m.metric,
      side: m.side,
      key: m.key,
      count: m.count,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('sketch_bins')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns(['experiment_id', 'experiment_version', 'variant_key', 'metric', 'side', 'key'])
            .doUpdateSet(additive('sketch_bins', ['count'])),
        ),
  };
}

/** Sketch bin counts of one hour, moved as sketchBinStatement's. */
export function bucketSketchBinStatement(moves: SketchMove[]): RowStatement {
  const sorted = sortedBy(moves, bucketSketchKey);
  return {
    name: 'bucket_sketch_bins',
    rows: sorted.map((m) => ({
      experiment_id: m.experimentId,
      bucket: m.bucket,
      experiment_version: m.version,
      variant_key: m.variantKey,
      metric: m.metric,
      side: m.side,
      key: m.key,
      count: m.count,
    })),
    chunk: 2000,
    build: (db, rows) =>
      db
        .insertInto('bucket_sketch_bins')
        .values(rows as never)
        .onConflict((oc) =>
          oc
            .columns([
              'experiment_id',
              'bucket',
              'experiment_version',
              'variant_key',
              'metric',
              'side',
              'key',
            ])
            .doUpdateSet(additive('bucket_sketch_bins', ['count'])),
        ),
  };
}
