// The pure part of writing a batch, shared by the SQL store (batch-statements.ts turns it into statements)
// and the memory store: the results and feedback as the rollups see them, the metric cap's answer, and what
// rollups they move, given the feedback rows stored already.
import { type FeedbackRow, planFeedback } from '../core/feedback.js';
import type { JsonObject } from '../core/json.js';
import { addCallPairs, PairMoves } from '../core/pairs.js';
import {
  type HourlyRollup,
  hourlyRollupKey,
  type MetricRollup,
  mergeRollups,
  metricRollupKey,
  type RolledResult,
  rollUpHours,
  rollUpResults,
} from '../core/rollups.js';
import { noSegmentMoves, type SegmentMoves } from '../core/segment-units.js';
import { addSketchValues, SketchMoves } from '../core/sketch-rollups.js';
import { hourOf } from '../core/time.js';
import { type HourlyUnitDelta, unitDeltasByHour } from '../core/unit-hours.js';
import type { NewFeedback, NewResult, WriteBatch } from '../core/writes.js';

/** A result as the rollups see it (the cap's decision still to make: overCap null), its user's unit, its hour. */
export function rolledOf(r: NewResult): RolledResult {
  // A unit that did not enter: the row is written, nothing is rolled up (ADR 0038).
  if (r.counted === false) {
    return { experimentId: r.experimentId, version: r.version, variantKey: r.variantKey, metrics: null };
  }
  return {
    experimentId: r.experimentId,
    version: r.version,
    variantKey: r.variantKey,
    metrics:
      r.metricValues !== undefined
        ? r.metricValues
        : r.metrics === null
          ? null
          : (JSON.parse(r.metrics) as JsonObject),
    overCap: null,
    unitUserId: r.unit === true ? r.userId : null,
    hour: hourOf(r.createdAt),
    ...(r.declared ? { declared: r.declared } : {}),
  };
}

/** Feedback as the metric cap sees it: one pseudo-result per item, its values as metrics. */
export function rolledFeedback(f: NewFeedback): RolledResult {
  const metrics: JsonObject = {};
  for (const v of f.values) metrics[v.metric] = v.kind === 'proportion' ? v.value === 1 : v.value;
  return { experimentId: f.experimentId, version: f.version, variantKey: f.variantKey, metrics };
}

/** The cap's decisions (applyMetricCap on `rolled`), per result: the names each leaves out (null: none). */
export function overCapOf(rolled: RolledResult[]): Array<string[] | null> {
  return rolled.map((r) => (r.overCap && r.overCap.size > 0 ? [...r.overCap] : null));
}

/** What a batch's results and feedback move: rollups, sketch bins, users' deltas, and feedback rows. */
export interface RollupPlan {
  metrics: MetricRollup[];
  hourly: HourlyRollup[];
  /** Per user and hour: applied to the users' stored sums (core/unit-hours.ts applyUnitDeltasByHour). */
  units: HourlyUnitDelta[];
  sketches: SketchMoves;
  /** The feedback rows to write (null without feedback). */
  feedbackRows: FeedbackRow[] | null;
  /** Feedback's signed changes to the segment rows (segment-plan.ts adds the results' and writes both). */
  segments: SegmentMoves;
  /** The calls' pair moves (users' are added as their sums are applied: core/pairs.ts addUserPairs). */
  pairs: PairMoves;
}

/**
 * Plans the rollups of `rolled` (the batch's results, the cap decided) and of `feedback`, which replaces
 * the `stored` rows of its targets; `feedbackOverCap` says which feedback names the cap left out, and
 * `feedbackSegments` the segment values of each item's target (segment-plan.ts feedbackSegmentsOf).
 */
export function planRollups(
  feedback: NewFeedback[],
  stored: Map<string, FeedbackRow>,
  rolled: RolledResult[],
  feedbackOverCap: (experimentId: number, metric: string) => boolean,
  feedbackSegments?: (item: NewFeedback) => Record<string, string> | null,
): RollupPlan {
  const metrics: MetricRollup[] = rollUpResults(rolled);
  const hourly: HourlyRollup[] = rollUpHours(rolled);
  const units: HourlyUnitDelta[] = unitDeltasByHour(rolled);
  let sketches = new SketchMoves();
  let feedbackRows: FeedbackRow[] | null = null;
  let segments = noSegmentMoves();
  if (feedback.length > 0) {
    const plan = planFeedback(feedback, stored, feedbackOverCap, feedbackSegments);
    metrics.push(...plan.metrics);
    hourly.push(...plan.hourly);
    units.push(...plan.units);
    sketches = plan.sketches;
    feedbackRows = plan.rows;
    segments = plan.segments;
  }
  addSketchValues(sketches, rolled);
  const pairs = new PairMoves();
  addCallPairs(pairs, rolled);
  // The results' own rollups have one row per key already; only feedback's changes need merging in.
  const merged = feedback.length > 0;
  return {
    metrics: merged ? mergeRollups(metrics, metricRollupKey) : metrics,
    hourly: merged ? mergeRollups(hourly, hourlyRollupKey) : hourly,
    units,
    sketches,
    feedbackRows,
    segments,
    pairs,
  };
}

/**
 * The experiments whose exposures are written under their append lock too (PostgreSQL): sticky ones'
 * distinct users (two instances inserting the same new user must not both count it), exposures that
 * results may be waiting on for their segment values (server-issued with segments, or client-made), and
 * exposures with a context (their batches commit in seq order: store/context-index.ts).
 */
export function exposureLocks(sent: WriteBatch): number[] {
  const client = sent.clientExposures ?? [];
  return [
    ...sent.exposures
      .filter((b) => b.unit === true || b.segments !== undefined || b.withContext === true)
      .map((b) => b.experimentId),
    ...client.filter((e) => e.unit === true || e.byClient || e.context !== null).map((e) => e.experimentId),
  ];
}
