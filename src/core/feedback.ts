// Late feedback (issue 15): a thumbs-up, a rating or a judge's score that arrives after the result. One
// value per target (an assignment or a result) and metric; sending it again replaces it, and every rollup
// moves by the difference, so retries and corrections never double-count. Pure.

import type { HourlyRollup, MetricRollup } from './rollups.js';
import { addSegmentValue, noSegmentMoves, type SegmentMoves } from './segment-units.js';
import { SketchMoves } from './sketch-rollups.js';
import { hourOf } from './time.js';
import type { HourlyUnitDelta } from './unit-hours.js';
import type { NewFeedback } from './writes.js';

/** A feedback row as stored: the latest value of one metric for one target. */
export interface FeedbackRow {
  experimentId: number;
  target: string;
  metric: string;
  feedbackId: string;
  version: number;
  variantKey: string;
  userId: string | null;
  kind: 'mean' | 'proportion';
  value: number;
  /** Beyond the experiment's metric cap: stored, not rolled up (ADR 0014). */
  overCap: boolean;
  comment: string | null;
  createdAt: string;
  updatedAt: string;
  /**
   * The segment values that count this value in segment_rollups (null: none). A replacement takes the old
   * value out of these (not out of its target's values now: a key declared since never counted it).
   */
  segments: Record<string, string> | null;
}

export function feedbackKey(k: { experimentId: number; target: string; metric: string }): string {
  return `${k.experimentId}\u0000${k.target}\u0000${k.metric}`;
}

/** What a batch of feedback writes: the rows, and the signed changes to every rollup. */
export interface FeedbackPlan {
  rows: FeedbackRow[];
  metrics: MetricRollup[];
  hourly: HourlyRollup[];
  /** In the hour of the feedback write that moves them (the sticky time series' increments). */
  units: HourlyUnitDelta[];
  /** A numeric value's sketch bin, all-time and in the hour its bucket rollup counts it. */
  sketches: SketchMoves;
  /**
   * The segment rows' signed changes (values leave the segments that counted them, enter their target's):
   * metric sums, the user's sums within each value (sticky experiments), sketch bins.
   */
  segments: SegmentMoves;
}

/**
 * Applies `items` in order to the `current` rows (keyed by feedbackKey; updated as it goes, so the same
 * metric twice in one batch replaces too). A replaced value leaves every rollup it was in (n − 1, its sum
 * and square taken out) and the new one enters: for the same kind n stays and the sums move by the
 * difference. The hour bucket is the first value's, so a correction moves the hour it was counted in.
 * `segmentsOf` gives an item's target's segment values now (null: none): the new value enters those.
 */
export function planFeedback(
  items: readonly NewFeedback[],
  current: Map<string, FeedbackRow>,
  overCap: (experimentId: number, metric: string) => boolean,
  segmentsOf: (item: NewFeedback) => Record<string, string> | null = () => null,
): FeedbackPlan {
  const plan: FeedbackPlan = {
    rows: [],
    metrics: [],
    hourly: [],
    units: [],
    sketches: new SketchMoves(),
    segments: noSegmentMoves(),
  };
  const written = new Map<string, FeedbackRow>();
  const contribute = (row: FeedbackRow, sign: 1 | -1, unit: boolean, writtenAt: string) => {
    if (row.overCap) return;
    const sums: MetricRollup = {
      experimentId: row.experimentId,
      version: row.version,
      variantKey: row.variantKey,
      metric: row.metric,
      kind: row.kind,
      n: sign,
      sum: sign * row.value,
      sumSquares: sign * row.value * row.value,
    };
    // Segment rollups keep no min and max: their quantiles are read unclamped (statistics.md, Segments).
    // A value taken out adds none: it cannot narrow them (rollups.ts extremesAfter).
    const extreme = sign === 1 ? row.value : null;
    const rollup: MetricRollup = { ...sums, minValue: extreme, maxValue: extreme };
    plan.metrics.push(rollup);
    if (row.segments) {
      const userId = unit ? row.userId : null;
      addSegmentValue(plan.segments, row, row.segments, row.metric, row.kind, row.value, sign, userId);
    }
    plan.hourly.push({ ...rollup, hour: hourOf(row.createdAt) });
    if (row.kind === 'mean') plan.sketches.add(row, row.metric, row.value, sign, hourOf(row.createdAt));
    if (unit && row.userId !== null) {
      plan.units.push({
        experimentId: row.experimentId,
        userId: row.userId,
        version: row.version,
        variantKey: row.variantKey,
        metric: row.metric,
        kind: row.kind,
        dn: sign,
        dsum: sign * row.value,
        hour: hourOf(writtenAt),
      });
    }
  };
  for (const item of items) {
    const unit = item.unit;
    const segments = segmentsOf(item);
    for (const v of item.values) {
      const key = feedbackKey({ experimentId: item.experimentId, target: item.target, metric: v.metric });
      const old = current.get(key);
      const row: FeedbackRow = old
        ? {
            ...old,
            feedbackId: item.feedbackId,
            kind: v.kind,
            value: v.value,
            comment: item.comment,
            updatedAt: item.createdAt,
            segments,
          }
        : {
            experimentId: item.experimentId,
            target: item.target,
            metric: v.metric,
            feedbackId: item.feedbackId,
            version: item.version,
            variantKey: item.variantKey,
            userId: item.userId,
            kind: v.kind,
            value: v.value,
            // Kept but never counted: over the metric cap, or about a unit that did not enter (ADR 0038).
            overCap: item.counted === false || overCap(item.experimentId, v.metric),
            comment: item.comment,
            createdAt: item.createdAt,
            updatedAt: item.createdAt,
            segments,
          };
      // A value beyond the cap is rolled up nowhere, so no segment counts it either.
      if (row.overCap) row.segments = null;
      if (old) contribute(old, -1, unit, item.createdAt);
      contribute(row, 1, unit, item.createdAt);
      current.set(key, row);
      written.set(key, row);
    }
  }
  plan.rows = [...written.values()];
  return plan;
}
