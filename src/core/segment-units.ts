// What a write moves in a segment value's rows besides its metric sums (issue 33 item 3): the per-user
// sums of a sticky experiment (core/units.ts, per segment value: a user with calls in two values of a key
// is a unit in each) and the DDSketch bins of numeric values (core/sketch-rollups.ts, per segment value),
// so a segment is read with the whole analysis' unit and estimator, quantiles included. Pure.
import type { MetricKind } from '../stats/arms.js';
import { type SketchSide, sketchBin } from '../stats/sketch.js';
import type { MetricRollup } from './rollups.js';
import { binId, keyOf, sideOf } from './sketch-rollups.js';
import {
  addUnitSums,
  moveUnitRollup,
  type UnitDelta,
  type UnitRollup,
  type UnitSum,
  type UnitSums,
} from './units.js';

/** A metric rollup of one segment value (segment_rollups). */
export interface SegmentRollup extends MetricRollup {
  key: string;
  value: string;
}

/** A segment key and its value (segment_key, value). */
export interface SegmentOf {
  key: string;
  value: string;
}

export interface SegmentUnitDelta extends UnitDelta, SegmentOf {}
/** One user's running sums of one metric within one segment value (segment_unit_sums). */
export interface SegmentUnitSum extends UnitSum, SegmentOf {}
/** Per segment value, variant and metric: the sums over users the delta method reads (segment_unit_rollups). */
export interface SegmentUnitRollup extends UnitRollup, SegmentOf {}

/** A bin count (or a signed move of one) of one segment value's sketch; `bin` is the bin's key. */
export interface SegmentSketchMove extends SegmentOf {
  experimentId: number;
  version: number;
  variantKey: string;
  metric: string;
  side: SketchSide;
  bin: number;
  count: number;
}

/** Where a value was counted: its experiment, version and variant. */
interface At {
  experimentId: number;
  version: number;
  variantKey: string;
}

const SEP = '\u0000';

export const segmentUnitKey = (k: Omit<SegmentUnitSum, 'n' | 'sum'>) =>
  `${k.experimentId}${SEP}${k.userId}${SEP}${k.key}${SEP}${k.value}${SEP}${k.version}${SEP}${k.variantKey}${SEP}${k.metric}${SEP}${k.kind}`;

export const segmentUnitRollupKey = (k: Omit<SegmentUnitRollup, keyof UnitSums>) =>
  `${k.experimentId}${SEP}${k.key}${SEP}${k.value}${SEP}${k.version}${SEP}${k.variantKey}${SEP}${k.metric}${SEP}${k.kind}`;

export const segmentSketchKey = (m: Omit<SegmentSketchMove, 'count'>) =>
  `${m.experimentId}${SEP}${m.key}${SEP}${m.value}${SEP}${m.version}${SEP}${m.variantKey}${SEP}${m.metric}${SEP}${m.side}${SEP}${m.bin}`;

/** Signed bin moves per segment value, summed per bin (as core/sketch-rollups.ts SketchMoves, without hours). */
export class SegmentSketches {
  private readonly groups = new Map<
    string,
    { at: At; key: string; value: string; metrics: Map<string, Map<number, number>> }
  >();

  /** Counts `x` (`sign` −1 takes it out) in its bin of `metric` within segment `key` = `value`. */
  add(at: At, key: string, value: string, metric: string, x: number, sign: 1 | -1): void {
    const k = `${at.experimentId}${SEP}${key}${SEP}${value}${SEP}${at.version}${SEP}${at.variantKey}`;
    let g = this.groups.get(k);
    if (g === undefined) {
      g = {
        at: { experimentId: at.experimentId, version: at.version, variantKey: at.variantKey },
        key,
        value,
        metrics: new Map(),
      };
      this.groups.set(k, g);
    }
    let bins = g.metrics.get(metric);
    if (bins === undefined) {
      bins = new Map();
      g.metrics.set(metric, bins);
    }
    const { side, key: bin } = sketchBin(x);
    const id = binId(side, bin);
    bins.set(id, (bins.get(id) ?? 0) + sign);
  }

  /** The moves that change something (a value taken out and put back in the same bin cancels). */
  rows(): SegmentSketchMove[] {
    const out: SegmentSketchMove[] = [];
    for (const g of this.groups.values()) {
      for (const [metric, bins] of g.metrics) {
        for (const [id, count] of bins) {
          if (count === 0) continue;
          out.push({
            experimentId: g.at.experimentId,
            version: g.at.version,
            variantKey: g.at.variantKey,
            key: g.key,
            value: g.value,
            metric,
            side: sideOf(id),
            bin: keyOf(id),
            count,
          });
        }
      }
    }
    return out;
  }
}

/** What writes move in the segment rows: metric sums (signed), users' deltas, sketch bins (signed). */
export interface SegmentMoves {
  metrics: SegmentRollup[];
  units: SegmentUnitDelta[];
  sketches: SegmentSketches;
}

export const noSegmentMoves = (): SegmentMoves => ({
  metrics: [],
  units: [],
  sketches: new SegmentSketches(),
});

/**
 * Counts one value (`sign` −1 takes it out) in each of `segments`' values: its metric sums, its user's sums
 * when it joins a user's unit (`userId`), and its sketch bin when numeric. Feedback moves the segment rows
 * through this; results through core/segments.ts rollUpSegments, which sums the metric rows in one pass.
 */
export function addSegmentValue(
  moves: SegmentMoves,
  at: At,
  segments: Readonly<Record<string, string>>,
  metric: string,
  kind: MetricKind,
  x: number,
  sign: 1 | -1,
  userId: string | null,
): void {
  for (const key in segments) {
    const value = segments[key]!;
    moves.metrics.push({
      experimentId: at.experimentId,
      version: at.version,
      variantKey: at.variantKey,
      metric,
      kind,
      key,
      value,
      n: sign,
      sum: sign * x,
      sumSquares: sign * x * x,
    });
    addSegmentUnitAndBin(moves, at, key, value, metric, kind, x, sign, userId);
  }
}

/** A value's user's delta (when it has one) and sketch bin (when numeric) in segment `key` = `value`. */
export function addSegmentUnitAndBin(
  moves: Pick<SegmentMoves, 'units' | 'sketches'>,
  at: At,
  key: string,
  value: string,
  metric: string,
  kind: MetricKind,
  x: number,
  sign: 1 | -1,
  userId: string | null | undefined,
): void {
  if (userId !== null && userId !== undefined) {
    moves.units.push({
      experimentId: at.experimentId,
      userId,
      version: at.version,
      variantKey: at.variantKey,
      metric,
      kind,
      key,
      value,
      dn: sign,
      dsum: sign * x,
    });
  }
  if (kind === 'mean') moves.sketches.add(at, key, value, metric, x, sign);
}

/** Deltas summed per user, segment value and metric: each user's sums are read and written once per batch. */
export function mergeSegmentUnitDeltas(deltas: Iterable<SegmentUnitDelta>): SegmentUnitDelta[] {
  const byKey = new Map<string, SegmentUnitDelta>();
  for (const d of deltas) {
    const k = segmentUnitKey(d);
    const acc = byKey.get(k);
    if (acc) {
      acc.dn += d.dn;
      acc.dsum += d.dsum;
    } else byKey.set(k, { ...d });
  }
  return [...byKey.values()];
}

function rollupOf(rollups: Map<string, SegmentUnitRollup>, k: Omit<SegmentUnitSum, 'n' | 'sum'>) {
  const key = segmentUnitRollupKey(k);
  let r = rollups.get(key);
  if (!r) {
    r = {
      experimentId: k.experimentId,
      key: k.key,
      value: k.value,
      version: k.version,
      variantKey: k.variantKey,
      metric: k.metric,
      kind: k.kind,
      units: 0,
      sumX: 0,
      sumX2: 0,
      sumY: 0,
      sumY2: 0,
      sumXY: 0,
    };
    rollups.set(key, r);
  }
  return r;
}

/**
 * Applies merged deltas to the users' current sums (absent: 0, 0), as core/units.ts applyUnitDeltas does
 * for the whole analysis: the users' new sums, and how much each segment value's rollup moves.
 */
export function applySegmentUnitDeltas(
  deltas: readonly SegmentUnitDelta[],
  current: ReadonlyMap<string, SegmentUnitSum>,
): { sums: SegmentUnitSum[]; rollups: SegmentUnitRollup[] } {
  const sums: SegmentUnitSum[] = [];
  const rollups = new Map<string, SegmentUnitRollup>();
  for (const d of deltas) {
    const old = current.get(segmentUnitKey(d));
    const a = old?.sum ?? 0;
    const c = old?.n ?? 0;
    // Fields copied one by one: a rest spread per user and metric showed in a log batch's profile.
    sums.push({
      experimentId: d.experimentId,
      userId: d.userId,
      key: d.key,
      value: d.value,
      version: d.version,
      variantKey: d.variantKey,
      metric: d.metric,
      kind: d.kind,
      n: c + d.dn,
      sum: a + d.dsum,
    });
    moveUnitRollup(rollupOf(rollups, d), d, a, c);
  }
  return { sums, rollups: [...rollups.values()] };
}

/** Users' final sums summed per segment value (a rebuild from raw rows); users with no values left out. */
export function rollUpSegmentUnits(sums: Iterable<SegmentUnitSum>): SegmentUnitRollup[] {
  const rollups = new Map<string, SegmentUnitRollup>();
  for (const s of sums) if (s.n > 0) addUnitSums(rollupOf(rollups, s), s);
  return [...rollups.values()];
}

/** Adds merged deltas into users' running sums (a rebuild summing as it reads pages of rows). */
export function addToSegmentSums(
  sums: Map<string, SegmentUnitSum>,
  deltas: Iterable<SegmentUnitDelta>,
): void {
  for (const d of deltas) {
    const k = segmentUnitKey(d);
    const s = sums.get(k);
    if (s) {
      s.n += d.dn;
      s.sum += d.dsum;
    } else {
      const { dn, dsum, ...id } = d;
      sums.set(k, { ...id, n: dn, sum: dsum });
    }
  }
}
