// The statements of the write-time sums of issue 23 (distinct users, hourly unit moves, sketch bins), in
// the shape of row-statements.ts: multi-row upserts (PostgreSQL runs them in key order: row-statements.ts inKeyOrder).
import type { ExposureUser } from '../core/exposure-users.js';
import type { ExposureRollup } from '../core/rollups.js';
import type { SketchMove } from '../core/sketch-rollups.js';
import type { HourlyUnitRollup } from '../core/unit-hours.js';
import { rowsOf } from './columns.js';
import { countStatement, type RowStatement, unitRollupRow, upsertStatement } from './row-statements.js';

/** Users not stored yet (planned so); DO NOTHING all the same, so a row is never written twice. */
export function exposureUsersStatement(users: ExposureUser[]): RowStatement {
  const sorted = users;
  return upsertStatement(
    'exposure_users',
    sorted.map((u) => ({
      experiment_id: u.experimentId,
      experiment_version: u.version,
      user_id: u.userId,
      variant_key: u.variantKey,
    })),
  );
}

/** Distinct users per variant, added to by the users a batch inserted. */
export const exposureUserRollupStatement = (counts: ExposureRollup[]) =>
  countStatement('exposure_user_rollups', counts);

/** Hourly moves of the unit rollups (core/unit-hours.ts), added to. */
export function hourlyUnitRollupStatement(rollups: HourlyUnitRollup[]): RowStatement {
  return upsertStatement(
    'bucket_unit_rollups',
    rollups.map((r) => ({ ...unitRollupRow(r), bucket: r.hour })),
  );
}

/** A sketch bin's columns (with its hour, for the hourly table). */
const hourlySketchRow = rowsOf<SketchMove>([
  'experimentId',
  'hour',
  'version',
  'variantKey',
  'metric',
  'side',
  'key',
  'count',
]);
const sketchRow = rowsOf<SketchMove>([
  'experimentId',
  'version',
  'variantKey',
  'metric',
  'side',
  'key',
  'count',
]);

/** Sketch bin counts moved by the batch's values (`count = count + k`, k signed), all-time. */
export function sketchBinStatement(moves: SketchMove[]): RowStatement {
  return upsertStatement('sketch_bins', moves.map(sketchRow));
}

/** Sketch bin counts of one hour, moved as sketchBinStatement's. */
export function hourlySketchBinStatement(moves: SketchMove[]): RowStatement {
  return upsertStatement('bucket_sketch_bins', moves.map(hourlySketchRow));
}
