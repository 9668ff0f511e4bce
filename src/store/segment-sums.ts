// The segment rows of migration 018 (core/segment-units.ts): users' sums per segment value, the sums over
// them per value, and sketch bins per value. Their statements (multi-row upserts, as
// row-statements.ts) and the read an analysis by segment makes of them, for both databases.
import type { Kysely } from 'kysely';
import type { SegmentSketchMove, SegmentUnitRollup, SegmentUnitSum } from '../core/segment-units.js';
import type { MetricKind } from '../stats/arms.js';
import type { SketchSide } from '../stats/sketch.js';
import { type RowStatement, upsertStatement } from './row-statements.js';
import type { Database } from './schema.js';

/** Users' sums replaced by their new values, per-value sums over users added to, bins added to. */
export function segmentSumStatements(
  sums: readonly SegmentUnitSum[],
  rollups: readonly SegmentUnitRollup[],
  sketches: readonly SegmentSketchMove[],
): RowStatement[] {
  return [
    upsertStatement(
      'segment_unit_sums',
      sums.map((s) => ({
        experiment_id: s.experimentId,
        user_id: s.userId,
        segment_key: s.key,
        value: s.value,
        experiment_version: s.version,
        variant_key: s.variantKey,
        metric: s.metric,
        kind: s.kind,
        n: s.n,
        sum: s.sum,
      })),
    ),
    upsertStatement(
      'segment_unit_rollups',
      rollups.map((r) => ({
        experiment_id: r.experimentId,
        segment_key: r.key,
        value: r.value,
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
    ),
    upsertStatement(
      'segment_sketch_bins',
      sketches.map((b) => ({
        experiment_id: b.experimentId,
        segment_key: b.key,
        value: b.value,
        experiment_version: b.version,
        variant_key: b.variantKey,
        metric: b.metric,
        side: b.side,
        key: b.bin,
        count: b.count,
      })),
    ),
  ].filter((st) => st.rows.length > 0);
}

/** One key's per-user sums and sketch bins of an experiment (zero bin counts left out). */
export async function readSegmentSums(
  db: Kysely<Database>,
  experimentId: number,
  key: string,
): Promise<{ units: SegmentUnitRollup[]; sketches: SegmentSketchMove[] }> {
  const units = await db
    .selectFrom('segment_unit_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('segment_key', '=', key)
    .execute();
  const bins = await db
    .selectFrom('segment_sketch_bins')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('segment_key', '=', key)
    .where('count', '<>', 0)
    .execute();
  return {
    units: units.map((u) => ({
      experimentId,
      key,
      value: u.value,
      version: Number(u.experiment_version),
      variantKey: u.variant_key,
      metric: u.metric,
      kind: u.kind as MetricKind,
      units: Number(u.units),
      sumX: Number(u.sum_x),
      sumX2: Number(u.sum_x2),
      sumY: Number(u.sum_y),
      sumY2: Number(u.sum_y2),
      sumXY: Number(u.sum_xy),
    })),
    sketches: bins.map((b) => ({
      experimentId,
      key,
      value: b.value,
      version: Number(b.experiment_version),
      variantKey: b.variant_key,
      metric: b.metric,
      side: Number(b.side) as SketchSide,
      bin: Number(b.key),
      count: Number(b.count),
    })),
  };
}

/** The tables of migration 018 holding an experiment's segment sums (a rebuild replaces them). */
export const SEGMENT_SUM_TABLES = [
  'segment_unit_sums',
  'segment_unit_rollups',
  'segment_sketch_bins',
] as const;
