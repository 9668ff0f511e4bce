// The segment part of writing a batch, shared by the SQL store (segment-rows.ts reads and writes it) and the
// memory store: the assign contexts' values to keep, each result's value of each declared key (its own, else
// its assignment's: from this batch's exposures or stored ones), results that wait for a client's exposure,
// and the waiting results this batch's exposures resolve. Rolled up per segment value (core/segments.ts).

import { mergeRollups, metricRollupKey, type RolledResult } from '../core/rollups.js';
import { addSegmentCallPairs, SegmentPairMoves } from '../core/segment-pairs.js';
import {
  noSegmentMoves,
  type SegmentMoves,
  type SegmentSketchMove,
  type SegmentUnitDelta,
} from '../core/segment-units.js';
import {
  type AssignmentSegment,
  rollUpSegments,
  type SegmentCount,
  type SegmentedResult,
  type SegmentRollup,
} from '../core/segments.js';
import type { NewFeedback, WriteBatch } from '../core/writes.js';

/** A result waiting for its assignment's value of `key` (a client's exposure not stored yet). */
export interface PendingSegment {
  experimentId: number;
  assignmentId: string;
  logId: string;
  key: string;
}

/** A waiting result found again: its rollup view (as stored, over-cap names left out). */
export interface PendingResult extends PendingSegment {
  rolled: RolledResult;
}

/** What the plan needs from what is stored already, per experiment: assignments to find, and to resolve. */
export interface SegmentNeeds {
  /** Assignment ids whose stored segment values are needed (results naming them). */
  assignments: Map<number, string[]>;
  /** Assignment ids of this batch's client exposures: the results waiting for them. */
  pending: Map<number, string[]>;
}

/** The reads of what is stored already (segment-rows.ts). */
export interface SegmentLookups {
  /** The stored segment values of these assignments of one experiment. */
  assignments(experimentId: number, assignmentIds: string[]): Promise<AssignmentSegment[]>;
  /** The results waiting for these assignments of one experiment. */
  pending(experimentId: number, assignmentIds: string[]): Promise<PendingResult[]>;
}

/** What is stored already, as SegmentNeeds asked for. */
export interface SegmentFound {
  assignments: AssignmentSegment[];
  pending: PendingResult[];
}

export interface SegmentPlan {
  /** Assign contexts' values to keep (first kept: insert, nothing on conflict). */
  assignments: AssignmentSegment[];
  /** Results that start waiting. */
  waiting: PendingSegment[];
  /** Waiting results resolved now (to delete). */
  resolved: PendingSegment[];
  /** Signed changes of the results' and feedback's metric sums, one row per key. */
  metrics: SegmentRollup[];
  counts: SegmentCount[];
  /** Users' deltas within segment values (sticky experiments), one per user, value and metric. */
  units: SegmentUnitDelta[];
  /** Signed sketch bin moves, one per bin. */
  sketches: SegmentSketchMove[];
  /**
   * Per result of the batch (same order): the values that counted it, as results.segments records them
   * (a key waiting for its client's exposure: null); null when none.
   */
  records: Array<SegmentRecord | null>;
  /** The calls' pair moves per value (users' are added as their sums are applied: core/segment-pairs.ts). */
  pairs: SegmentPairMoves;
}

/** The segment values that counted a result (results.segments): a waiting key's value is null. */
export type SegmentRecord = Record<string, string | null>;

/** Whether `moves` change anything (feedback's part of a batch). */
export const anyMoves = (moves: SegmentMoves) => moves.metrics.length > 0 || moves.units.length > 0;

const key2 = (experimentId: number, assignmentId: string) => `${experimentId}\u0000${assignmentId}`;

function byExperiment(
  items: Iterable<{ experimentId: number; assignmentId: string }>,
): Map<number, string[]> {
  const out = new Map<number, Set<string>>();
  for (const i of items) {
    let set = out.get(i.experimentId);
    if (!set) {
      set = new Set();
      out.set(i.experimentId, set);
    }
    set.add(i.assignmentId);
  }
  return new Map([...out].map(([id, set]) => [id, [...set]]));
}

/** What `batch` needs read before it is planned (null: it has nothing to do with segments). */
export function segmentNeeds(batch: WriteBatch): SegmentNeeds | null {
  const assignments = batch.exposures.flatMap((b) => b.segments ?? []);
  const clients = batch.exposures.flatMap((b) =>
    (b.clientIds ?? []).map((assignmentId) => ({ experimentId: b.experimentId, assignmentId })),
  );
  const segmented = batch.results.some((r) => r.segments !== undefined);
  if (assignments.length === 0 && clients.length === 0 && !segmented) return null;
  const inBatch = new Set(assignments.map((a) => key2(a.experimentId, a.assignmentId)));
  const toFind = batch.results.flatMap((r) =>
    r.segments &&
    r.segments.lookup.length > 0 &&
    r.assignmentId !== null &&
    !inBatch.has(key2(r.experimentId, r.assignmentId))
      ? [{ experimentId: r.experimentId, assignmentId: r.assignmentId }]
      : [],
  );
  // Only a client's exposure can come after its results (assign's own is queued before its answer).
  return { assignments: byExperiment(toFind), pending: byExperiment(clients) };
}

/** Reads what `needs` asks for with `look` (on the batch's transaction, or in its writer turn). */
export async function findSegments(needs: SegmentNeeds, look: SegmentLookups): Promise<SegmentFound> {
  const found: SegmentFound = { assignments: [], pending: [] };
  for (const [experimentId, ids] of needs.assignments) {
    found.assignments.push(...(await look.assignments(experimentId, ids)));
  }
  for (const [experimentId, ids] of needs.pending)
    found.pending.push(...(await look.pending(experimentId, ids)));
  return found;
}

/**
 * Assignments' segment values by experiment and assignment id: the batch's own exposures first (a log
 * committed with its assign's exposure), then the stored ones; the first value of a key kept.
 */
function knownValues(
  inBatch: readonly AssignmentSegment[],
  stored: readonly AssignmentSegment[],
): Map<string, Map<string, string>> {
  const known = new Map<string, Map<string, string>>();
  for (const a of [...inBatch, ...stored]) {
    const k = key2(a.experimentId, a.assignmentId);
    let values = known.get(k);
    if (!values) {
      values = new Map();
      known.set(k, values);
    }
    if (!values.has(a.key)) values.set(a.key, a.value);
  }
  return known;
}

/**
 * Plans the segments of `batch`, whose results are `rolled` (same order, the metric cap decided), with
 * `feedback`'s moves (batch-plan.ts RollupPlan.segments) summed in.
 */
export function planSegments(
  batch: WriteBatch,
  rolled: readonly RolledResult[],
  stored: SegmentFound,
  feedback: SegmentMoves = noSegmentMoves(),
): SegmentPlan {
  const assignments = batch.exposures.flatMap((b) => b.segments ?? []);
  const known = knownValues(assignments, stored.assignments);
  const results: SegmentedResult[] = [];
  const waiting: PendingSegment[] = [];
  const records: Array<SegmentRecord | null> = batch.results.map(() => null);
  for (const [i, r] of batch.results.entries()) {
    if (!r.segments) continue;
    const segments = { ...r.segments.values };
    const record: SegmentRecord = { ...segments };
    const found = r.assignmentId === null ? undefined : known.get(key2(r.experimentId, r.assignmentId));
    for (const key of r.segments.lookup) {
      const value = found?.get(key);
      if (value !== undefined) {
        segments[key] = value;
        record[key] = value;
      } else if (r.segments.wait) {
        waiting.push({ experimentId: r.experimentId, assignmentId: r.assignmentId!, logId: r.logId, key });
        record[key] = null;
      }
    }
    results.push({ rolled: rolled[i]!, segments });
    if (Object.keys(record).length > 0) records[i] = record;
  }
  // Results committed before this batch's exposures, waiting for them: resolved either way (the assign
  // context has this key's value, or it has none).
  const resolved: PendingSegment[] = [];
  for (const p of stored.pending) {
    resolved.push({ experimentId: p.experimentId, assignmentId: p.assignmentId, logId: p.logId, key: p.key });
    const value = known.get(key2(p.experimentId, p.assignmentId))?.get(p.key);
    if (value !== undefined) results.push({ rolled: p.rolled, segments: { [p.key]: value } });
  }
  // Feedback's users' deltas and bins are added to: one row per key either way.
  const rolledUp = rollUpSegments(results, { units: [...feedback.units], sketches: feedback.sketches });
  const pairs = new SegmentPairMoves();
  addSegmentCallPairs(pairs, results);
  const metrics =
    feedback.metrics.length === 0
      ? rolledUp.metrics
      : mergeRollups(
          [...rolledUp.metrics, ...feedback.metrics],
          (r) => `${metricRollupKey(r)}\u0000${r.key}\u0000${r.value}`,
        );
  return {
    assignments,
    waiting,
    resolved,
    metrics,
    counts: rolledUp.counts,
    units: rolledUp.units,
    sketches: rolledUp.sketches.rows(),
    records,
    pairs,
  };
}

/** The assignment ids whose stored segment values `batch`'s feedback needs (its exposures' excepted). */
export function feedbackSegmentNeeds(batch: WriteBatch): Map<number, string[]> {
  const inBatch = new Set(
    batch.exposures.flatMap((b) => b.segments ?? []).map((a) => key2(a.experimentId, a.assignmentId)),
  );
  return byExperiment(
    (batch.feedback ?? []).flatMap((f) => {
      const s = f.segments;
      return s &&
        s.lookup.length > 0 &&
        s.assignmentId !== null &&
        !inBatch.has(key2(f.experimentId, s.assignmentId))
        ? [{ experimentId: f.experimentId, assignmentId: s.assignmentId }]
        : [];
    }),
  );
}

/**
 * The segment values of each feedback item's target, as they are when `batch` commits: its own (a
 * result's context), then its assignment's from the batch's exposures or `stored` (feedbackSegmentNeeds'
 * reads). A key with no value found counts the item in no segment of that key.
 */
export function feedbackSegmentsOf(
  batch: WriteBatch,
  stored: readonly AssignmentSegment[],
): (item: NewFeedback) => Record<string, string> | null {
  const known = knownValues(
    batch.exposures.flatMap((b) => b.segments ?? []),
    stored,
  );
  return (item) => {
    const s = item.segments;
    if (!s) return null;
    const values = { ...s.values };
    const found = s.assignmentId === null ? undefined : known.get(key2(item.experimentId, s.assignmentId));
    for (const key of s.lookup) {
      const value = found?.get(key);
      if (value !== undefined) values[key] = value;
    }
    return Object.keys(values).length > 0 ? values : null;
  };
}
