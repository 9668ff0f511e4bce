// The writes of a batch that depend on what is stored already: late feedback replacing earlier values, and
// users' running sums (core/units.ts). Read inside the batch's exclusive section (PostgreSQL: under the
// experiments' append locks; SQLite: as the only writer, one batch at a time), planned by the pure planner
// (batch-plan.ts, which the memory store uses too), then written as statements with the rest of the batch.
import type { Kysely, Selectable } from 'kysely';
import { type FeedbackRow, feedbackKey } from '../core/feedback.js';
import type { RolledResult } from '../core/rollups.js';
import type { SegmentMoves } from '../core/segment-units.js';
import { declaredWatcher, UnitBinMoves } from '../core/unit-bins.js';
import { applyUnitDeltasByHour } from '../core/unit-hours.js';
import { type UnitDelta, type UnitSum, unitKey } from '../core/units.js';
import { declaredOf, type NewFeedback, type WriteBatch } from '../core/writes.js';
import type { MetricKind } from '../stats/arms.js';
import { planRollups } from './batch-plan.js';
import { feedbackStatement } from './batch-rows.js';
import { pairStatements } from './pair-statements.js';
import {
  hourlyExposureStatement,
  hourlyRollupStatement,
  metricRollupStatement,
  type RowStatement,
  unitRollupStatement,
  unitSumStatement,
} from './row-statements.js';
import { type Database, isoTime } from './schema.js';
import { feedbackSegments } from './segment-rows.js';
import { hourlySketchBinStatement, hourlyUnitRollupStatement, sketchBinStatement } from './sum-statements.js';

/** Keys per IN list (SQLite binds at most 32766 parameters; PostgreSQL 65535). */
const KEYS_PER_READ = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += KEYS_PER_READ) out.push(items.slice(i, i + KEYS_PER_READ));
  return out;
}

/**
 * The stored rows of `table` whose experiment and `column` match the items' (one IN list per experiment
 * and chunk of keys), as `convert` makes them, by `keyOf`.
 */
async function readStored<T extends 'feedback' | 'unit_sums', R>(
  db: Kysely<Database>,
  table: T,
  column: 'target' | 'user_id',
  items: ReadonlyArray<{ experimentId: number; key: string }>,
  convert: (row: Selectable<Database[T]>) => R,
  keyOf: (r: R) => string,
): Promise<Map<string, R>> {
  const current = new Map<string, R>();
  const byExperiment = new Map<number, Set<string>>();
  for (const { experimentId, key } of items) {
    const set = byExperiment.get(experimentId) ?? new Set<string>();
    set.add(key);
    byExperiment.set(experimentId, set);
  }
  for (const [experimentId, keys] of byExperiment) {
    for (const part of chunks([...keys])) {
      const rows = await (db as unknown as Kysely<Pick<Database, 'feedback'>>)
        .selectFrom(table as 'feedback')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .where(column as 'target', 'in', part)
        .execute();
      for (const r of rows as unknown as Array<Selectable<Database[T]>>) {
        const row = convert(r);
        current.set(keyOf(row), row);
      }
    }
  }
  return current;
}

const feedbackOf = (r: Selectable<Database['feedback']>): FeedbackRow => ({
  experimentId: Number(r.experiment_id),
  target: r.target,
  metric: r.metric,
  feedbackId: r.feedback_id,
  version: Number(r.experiment_version),
  variantKey: r.variant_key,
  userId: r.user_id,
  kind: r.kind as MetricKind,
  value: Number(r.value),
  overCap: Number(r.over_cap) === 1,
  comment: r.comment,
  createdAt: isoTime(r.created_at),
  updatedAt: isoTime(r.updated_at),
  segments: r.segments === null ? null : (JSON.parse(r.segments) as Record<string, string>),
});

const unitSumOf = (r: Selectable<Database['unit_sums']>): UnitSum => ({
  experimentId: Number(r.experiment_id),
  userId: r.user_id,
  version: Number(r.experiment_version),
  variantKey: r.variant_key,
  metric: r.metric,
  kind: r.kind as MetricKind,
  n: Number(r.n),
  sum: Number(r.sum),
});

const readFeedback = (db: Kysely<Database>, items: NewFeedback[]) =>
  readStored(
    db,
    'feedback',
    'target',
    items.map((f) => ({ experimentId: f.experimentId, key: f.target })),
    feedbackOf,
    feedbackKey,
  );

const readUnitSums = (db: Kysely<Database>, deltas: UnitDelta[]) =>
  readStored(
    db,
    'unit_sums',
    'user_id',
    deltas.map((d) => ({ experimentId: d.experimentId, key: d.userId })),
    unitSumOf,
    unitKey,
  );

/**
 * A batch's planned rollup statements, and its feedback's moves of the segment rows (segment-rows.ts
 * segmentWrites writes them with the results'). Sticky experiments' distinct users are counted as they
 * are inserted (exposure-user-statements.ts), not planned.
 */
export interface Planned {
  statements: RowStatement[];
  segments: SegmentMoves;
}

/**
 * The rollup statements of a batch (metric, hourly, per-user, distinct users, sketch bins) and its
 * feedback rows. `rolled` are its results as the rollups see them (the cap decided); `feedbackOverCap`
 * says which feedback names the cap left out. Reads through `db`, which must see everything committed
 * before this batch.
 */
export async function plannedStatements(
  db: Kysely<Database>,
  batch: WriteBatch,
  rolled: RolledResult[],
  feedbackOverCap: (experimentId: number, metric: string) => boolean,
): Promise<Planned> {
  const feedback = batch.feedback ?? [];
  const stored = feedback.length > 0 ? await readFeedback(db, feedback) : new Map<string, FeedbackRow>();
  const segmentsOf = feedback.length > 0 ? await feedbackSegments(db, batch) : undefined;
  const plan = planRollups(feedback, stored, rolled, feedbackOverCap, segmentsOf);
  const unitParts = plan.units;
  const statements: RowStatement[] = [];
  if (plan.feedbackRows) statements.push(feedbackStatement(plan.feedbackRows));
  statements.push(metricRollupStatement(plan.metrics), hourlyRollupStatement(plan.hourly));
  const sketchRows = plan.sketches.rows();
  statements.push(sketchBinStatement(sketchRows.all), hourlySketchBinStatement(sketchRows.hourly));
  const bins = new UnitBinMoves();
  if (unitParts.length > 0) {
    // A user's every stored sum is read: the partner metrics of its pairs (core/pairs.ts) come with them.
    const { sums, rollups, hourly } = applyUnitDeltasByHour(
      unitParts,
      await readUnitSums(db, unitParts),
      declaredWatcher(declaredOf(batch), plan.pairs, bins),
    );
    statements.push(unitSumStatement(sums), unitRollupStatement(rollups), hourlyUnitRollupStatement(hourly));
  }
  statements.push(...pairStatements(plan.pairs, bins));
  statements.push(hourlyExposureStatement(batch.exposures));
  return { statements: statements.filter((s) => s.rows.length > 0), segments: plan.segments };
}
