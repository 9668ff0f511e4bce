// The segment rows of a batch (segment-plan.ts plans them): the lookups of stored assign contexts' values
// and of waiting results, and the statements that write the plan, for both databases.

import type { Kysely } from 'kysely';
import type { RolledResult } from '../core/rollups.js';
import { addSegmentUserPairs } from '../core/segment-pairs.js';
import {
  applySegmentUnitDeltas,
  type SegmentMoves,
  type SegmentUnitDelta,
  type SegmentUnitRollup,
  type SegmentUnitSum,
  segmentUnitKey,
} from '../core/segment-units.js';
import type { AssignmentSegment, SegmentCount, SegmentRollup } from '../core/segments.js';
import { declaredOf, type WriteBatch } from '../core/writes.js';
import type { MetricKind } from '../stats/arms.js';
import { rolledResultRow } from './batch-rows.js';
import { readSegmentPairs, segmentPairStatements } from './pair-statements.js';
import type { SegmentRows } from './rollup-types.js';
import { type RowStatement, upsertStatement } from './row-statements.js';
import type { Database } from './schema.js';
import {
  anyMoves,
  feedbackSegmentNeeds,
  feedbackSegmentsOf,
  findSegments,
  type PendingResult,
  type PendingSegment,
  planSegments,
  type SegmentLookups,
  type SegmentPlan,
  type SegmentRecord,
  segmentNeeds,
} from './segment-plan.js';
import { readSegmentSums, segmentSumStatements } from './segment-sums.js';

/** Keys per IN list (SQLite binds at most 32766 parameters; PostgreSQL 65535). */
const KEYS_PER_READ = 500;

function* chunks<T>(items: T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += KEYS_PER_READ) yield items.slice(i, i + KEYS_PER_READ);
}

/** A batch's segment statements, and what each of its results records in results.segments. */
export interface SegmentWrites {
  statements: RowStatement[];
  records: Array<SegmentRecord | null>;
}

/**
 * The segment statements of `batch` and of its feedback's moves (batch-plan.ts RollupPlan.segments),
 * planned from reads on `db` (the transaction, or in SQLite's writer turn).
 */
export async function segmentWrites(
  db: Kysely<Database>,
  batch: WriteBatch,
  rolled: readonly RolledResult[],
  feedback: SegmentMoves,
): Promise<SegmentWrites> {
  const needs = segmentNeeds(batch);
  if (needs === null && !anyMoves(feedback)) return { statements: [], records: [] };
  const found =
    needs === null ? { assignments: [], pending: [] } : await findSegments(needs, segmentLookups(db));
  const plan = planSegments(batch, rolled, found, feedback);
  const current = await readSegmentUnitSums(db, plan.units);
  const units = applySegmentUnitDeltas(plan.units, current);
  // A user's every stored sum is read: its pairs' partner metrics come with them.
  const declared = declaredOf(batch);
  if (declared) addSegmentUserPairs(plan.pairs, current, units.sums, declared);
  return {
    statements: [...segmentStatements(plan, units), ...segmentPairStatements(plan.pairs.all())],
    records: plan.records,
  };
}

/** The stored sums of the users (per segment value and metric) that `deltas` move. */
async function readSegmentUnitSums(
  db: Kysely<Database>,
  deltas: readonly SegmentUnitDelta[],
): Promise<Map<string, SegmentUnitSum>> {
  const current = new Map<string, SegmentUnitSum>();
  const byExperiment = new Map<number, Set<string>>();
  for (const d of deltas) {
    const users = byExperiment.get(d.experimentId) ?? new Set<string>();
    users.add(d.userId);
    byExperiment.set(d.experimentId, users);
  }
  for (const [experimentId, users] of byExperiment) {
    for (const part of chunks([...users])) {
      const rows = await db
        .selectFrom('segment_unit_sums')
        .selectAll()
        .where('experiment_id', '=', experimentId)
        .where('user_id', 'in', part)
        .execute();
      for (const r of rows) {
        const sum: SegmentUnitSum = {
          experimentId,
          userId: r.user_id,
          key: r.segment_key,
          value: r.value,
          version: Number(r.experiment_version),
          variantKey: r.variant_key,
          metric: r.metric,
          kind: r.kind as MetricKind,
          n: Number(r.n),
          sum: Number(r.sum),
        };
        current.set(segmentUnitKey(sum), sum);
      }
    }
  }
  return current;
}

/** The segment values of each feedback item's target in `batch`, read on `db` (segment-plan.ts). */
export async function feedbackSegments(
  db: Kysely<Database>,
  batch: WriteBatch,
): Promise<ReturnType<typeof feedbackSegmentsOf>> {
  const needs = { assignments: feedbackSegmentNeeds(batch), pending: new Map<number, string[]>() };
  return feedbackSegmentsOf(batch, (await findSegments(needs, segmentLookups(db))).assignments);
}

/** The lookups on `db` (the batch's transaction, or the read connection in SQLite's writer turn). */
export function segmentLookups(db: Kysely<Database>): SegmentLookups {
  return {
    async assignments(experimentId, ids) {
      const out: AssignmentSegment[] = [];
      for (const part of chunks(ids)) {
        const rows = await db
          .selectFrom('assignment_segments')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('assignment_id', 'in', part)
          .execute();
        for (const r of rows) {
          out.push({ experimentId, assignmentId: r.assignment_id, key: r.segment_key, value: r.value });
        }
      }
      return out;
    },
    async pending(experimentId, ids) {
      const out: PendingResult[] = [];
      for (const part of chunks(ids)) {
        const rows = await db
          .selectFrom('segment_pending as p')
          .innerJoin('results as r', 'r.log_id', 'p.log_id')
          .innerJoin('experiments as e', 'e.id', 'r.experiment_id')
          .select([
            'p.assignment_id',
            'p.log_id',
            'p.segment_key',
            'r.experiment_id',
            'r.experiment_version',
            'r.variant_key',
            'r.metrics',
            'r.metrics_over_cap',
            'r.user_id',
            'e.assignment',
          ])
          .where('p.experiment_id', '=', experimentId)
          .where('p.assignment_id', 'in', part)
          .execute();
        for (const r of rows) {
          // Its user's unit as when it was logged: sticky experiments' results with a userId.
          const unitUserId = r.assignment === 'sticky' ? r.user_id : null;
          out.push({
            experimentId,
            assignmentId: r.assignment_id,
            logId: r.log_id,
            key: r.segment_key,
            rolled: { ...rolledResultRow(r), unitUserId },
          });
        }
      }
      return out;
    },
  };
}

/**
 * The statements of a plan and of its users' applied deltas (core/segment-units.ts); PostgreSQL runs
 * their rows in key order (row-statements.ts inKeyOrder).
 */
export function segmentStatements(
  plan: SegmentPlan,
  units: { sums: SegmentUnitSum[]; rollups: SegmentUnitRollup[] },
): RowStatement[] {
  const out: RowStatement[] = [];
  if (plan.assignments.length > 0) {
    out.push(
      upsertStatement(
        'assignment_segments',
        plan.assignments.map((a) => ({
          experiment_id: a.experimentId,
          assignment_id: a.assignmentId,
          segment_key: a.key,
          value: a.value,
        })),
      ),
    );
  }
  if (plan.waiting.length > 0) out.push(upsertStatement('segment_pending', plan.waiting.map(pendingRow)));
  if (plan.resolved.length > 0) out.push(deletePendingStatement(plan.resolved.map(pendingRow)));
  if (plan.metrics.length > 0) out.push(segmentRollupStatement(plan.metrics));
  if (plan.counts.length > 0) out.push(segmentResultStatement(plan.counts));
  out.push(...segmentSumStatements(units.sums, units.rollups, plan.sketches));
  return out.filter((st) => st.rows.length > 0);
}

const pendingRow = (p: PendingSegment) => ({
  experiment_id: p.experimentId,
  assignment_id: p.assignmentId,
  log_id: p.logId,
  segment_key: p.key,
});

/** Deletes rows of segment_pending (its parameters row by row, in column order, like the inserts). */
function deletePendingStatement(rows: Array<ReturnType<typeof pendingRow>>): RowStatement {
  return {
    name: 'segment_pending_delete',
    rows,
    chunk: 500,
    build: (db, chunk) =>
      db
        .deleteFrom('segment_pending')
        .where((eb) =>
          eb.or(
            (chunk as typeof rows).map((r) =>
              eb.and([
                eb('experiment_id', '=', r.experiment_id),
                eb('assignment_id', '=', r.assignment_id),
                eb('log_id', '=', r.log_id),
                eb('segment_key', '=', r.segment_key),
              ]),
            ),
          ),
        ),
  };
}

/** Signed changes to segment_rollups (results' and feedback's). */
export function segmentRollupStatement(rows: SegmentRollup[]): RowStatement {
  return upsertStatement(
    'segment_rollups',
    rows.map((r) => ({
      experiment_id: r.experimentId,
      segment_key: r.key,
      value: r.value,
      experiment_version: r.version,
      variant_key: r.variantKey,
      metric: r.metric,
      kind: r.kind,
      n: r.n,
      sum: r.sum,
      sum_squares: r.sumSquares,
    })),
  );
}

export function segmentResultStatement(rows: SegmentCount[]): RowStatement {
  return upsertStatement(
    'segment_results',
    rows.map((r) => ({
      experiment_id: r.experimentId,
      segment_key: r.key,
      value: r.value,
      experiment_version: r.version,
      variant_key: r.variantKey,
      n: r.n,
    })),
  );
}

/** One key's segment rows of an experiment: what an analysis by segment reads (O(values), never results). */
export async function readSegments(
  db: Kysely<Database>,
  experimentId: number,
  key: string,
): Promise<SegmentRows> {
  const metrics = await db
    .selectFrom('segment_rollups')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('segment_key', '=', key)
    .execute();
  const counts = await db
    .selectFrom('segment_results')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('segment_key', '=', key)
    .execute();
  return {
    metrics: metrics.map((m) => ({
      experimentId,
      key,
      value: m.value,
      version: Number(m.experiment_version),
      variantKey: m.variant_key,
      metric: m.metric,
      kind: m.kind as MetricKind,
      n: Number(m.n),
      sum: Number(m.sum),
      sumSquares: Number(m.sum_squares),
    })),
    counts: counts.map((c) => ({
      experimentId,
      key,
      value: c.value,
      version: Number(c.experiment_version),
      variantKey: c.variant_key,
      n: Number(c.n),
    })),
    ...(await readSegmentSums(db, experimentId, key)),
    pairs: await readSegmentPairs(db, experimentId, key),
  };
}
