// Owns capping per user (sticky experiments): a user whose mean per call x/y lies above the cap c counts as
// if its mean were c (x becomes c·y). Users sit in DDSketch bins of their mean with exact sums per bin
// (core/unit-bins.ts), so bins wholly below c keep their sums, bins wholly above take c·y, and the one bin
// holding c (2% wide) is split in proportion to where c falls in it. Rules: docs/statistics.md.
import type { Cap } from './capping.js';
import type { SketchSide } from './sketch.js';
import { interpolatedQuantile, layOut } from './sketch-layout.js';
import type { RatioMoments } from './types.js';

/** One bin of users: their count and the sums over their (x, y). */
export interface UserBinRow {
  side: SketchSide;
  key: number;
  units: number;
  sumX: number;
  sumX2: number;
  sumY: number;
  sumY2: number;
  sumXY: number;
}

export interface CappedUsers {
  /** The cap used (null when none could be found: then every arm is null). */
  cap: number | null;
  /** Per arm: the capped sums (RatioMoments) and how many users were capped (a bin split counts in part). */
  arms: Array<{ data: RatioMoments | null; capped: number | null }>;
  warnings: string[];
}

/** The cap at a percentile of the users' means pooled over every arm (the sketch's reading, within 1%). */
function percentileOf(arms: readonly UserBinRow[][], percentile: number, warnings: string[]): number | null {
  const layout = layOut(arms.flat().map((b) => ({ side: b.side, key: b.key, count: Math.round(b.units) })));
  if (layout.n === 0) {
    warnings.push('no users in the bins: no percentile cap');
    return null;
  }
  return interpolatedQuantile(layout, (percentile / 100) * (layout.n - 1));
}

/** Every arm's sums with each user's mean capped at c. */
export function capUserArms(arms: readonly UserBinRow[][], cap: Cap): CappedUsers {
  const warnings: string[] = [];
  const c =
    'percentile' in cap
      ? percentileOf(arms, cap.percentile, warnings)
      : Number.isFinite(cap.value)
        ? cap.value
        : null;
  if (c === null) return { cap: null, arms: arms.map(() => ({ data: null, capped: null })), warnings };
  const ranges = new Map(
    layOut(arms.flat().map((b) => ({ side: b.side, key: b.key, count: 1 }))).bins.map((b) => [
      `${b.side}:${b.key}`,
      b,
    ]),
  );
  return {
    cap: c,
    warnings,
    arms: arms.map((bins) => {
      const out: RatioMoments = { n: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 };
      let capped = 0;
      for (const b of bins) {
        if (!(b.units > 0)) continue;
        const range = ranges.get(`${b.side}:${b.side === 0 ? 0 : b.key}`);
        const [low, high] = range ? [range.low, range.high] : [0, 0];
        // The share of the bin's users below c: all, none, or where c falls in the bin's range.
        const below = high <= c ? 1 : low >= c ? 0 : (c - low) / (high - low);
        const above = 1 - below;
        out.n += b.units;
        out.sumY += b.sumY;
        out.sumY2 += b.sumY2;
        out.sumX += below * b.sumX + above * c * b.sumY;
        out.sumX2 += below * b.sumX2 + above * c * c * b.sumY2;
        out.sumXY += below * b.sumXY + above * c * b.sumY2;
        capped += above * b.units;
      }
      return { data: out, capped };
    }),
  };
}
