// Owns quantile statistics read from DDSketch bin counts: the p50/p90/p95/p99 summary, one quantile as an arm
// (estimate and standard error) for comparing variants, and the effective number of units when users call
// several times. Rules and references: docs/statistics.md, "Quantiles".

import { normalQuantile } from './distributions.js';
import { type SketchBin, sketchOf } from './sketch.js';
import { clamp, type Extremes, interpolatedQuantile, layOut } from './sketch-layout.js';
import type { QuantileMoments } from './types.js';

export interface QuantileSummary {
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  warnings: string[];
}

/** One quantile of one variant as an arm (types.ts QuantileMoments: mean = estimate, variance = stdError² · n). */
export type QuantileArm = QuantileMoments;

/** quantileArm's answer: every field null that cannot be computed, with a warning saying why. */
export interface QuantileArmResult {
  n: number | null;
  estimate: number | null;
  stdError: number | null;
  warnings: string[];
}

/** GrowthBook computes the rank interval at 95% whatever the test's alpha; the SE does not depend on it. */
const Z = normalQuantile(0.975);

/**
 * p50, p90, p95, p99 as DDSketch reads them (rank q·(n − 1), the value of the bin holding the value of rank
 * ⌊q·(n − 1)⌋): each within 1% (relative) of that value. All null when there are no values. With the values'
 * `extremes`, each is clamped into [min, max]: exact for a constant arm, never further from its bin's values.
 */
export function quantileSummary(bins: Iterable<SketchBin>, extremes?: Extremes | null): QuantileSummary {
  const layout = layOut(bins, extremes);
  const warnings = [...layout.warnings];
  if (layout.n === 0) {
    warnings.push('no values');
    return { p50: null, p90: null, p95: null, p99: null, warnings };
  }
  const sketch = sketchOf(layout.bins);
  // The bin's value clamped is the clamped layout's representative (sketch-layout.ts layOut).
  const at = (q: number) => {
    const value = sketch.getValueAtQuantile(q);
    const e = layout.extremes;
    return e ? clamp(value, e.min, e.max) : value;
  };
  return { p50: at(0.5), p90: at(0.9), p95: at(0.95), p99: at(0.99), warnings };
}

/**
 * (Σy)² / Σy², where y is each user's number of values: the Kish effective sample size of the per-call values
 * at intra-user correlation 1, a lower bound on the information in them (conservative), equal to the number
 * of values when every user has one. Null (with a warning) for sums that are not positive and finite or that
 * no set of counts >= 1 could give (Σy² < Σy).
 */
export function effectiveUnits(sumY: number, sumY2: number, warnings: string[] = []): number | null {
  if (!(Number.isFinite(sumY) && Number.isFinite(sumY2) && sumY > 0 && sumY2 >= sumY)) {
    warnings.push('effective units need Σy > 0 and Σy² >= Σy (finite)');
    return null;
  }
  const units = (sumY * sumY) / sumY2;
  return Number.isFinite(units) ? units : null;
}

/**
 * The q-quantile of the values in bins with its standard error, GrowthBook's way: ranks q ± z·√(q(1 − q)/units)
 * (z = 1.96) give values L and U, and stdError = (U − L) / (2z). Values are read continuously inside bins
 * (sketch-layout.ts), so the estimate moves smoothly and U − L does not collapse to 0 inside one bin.
 * With the values' `extremes` the bins are read inside [min, max]: the estimate, L and U stay within the
 * data, and U − L can only shrink (the reading is a non-decreasing map that never stretches a distance), by
 * less than one bin's width, where the rank interval reaches the bin holding the min or the max.
 */
export function quantileArm(
  bins: Iterable<SketchBin>,
  q: number,
  units: number,
  extremes?: Extremes | null,
): QuantileArmResult {
  const layout = layOut(bins, extremes);
  const warnings = [...layout.warnings];
  const result: QuantileArmResult = { n: null, estimate: null, stdError: null, warnings };
  if (!(typeof q === 'number' && q > 0 && q < 1)) {
    warnings.push('the quantile must be in (0, 1)');
    return result;
  }
  if (layout.n === 0) {
    warnings.push('no values');
    return result;
  }
  const last = layout.n - 1;
  if (layout.bins.length === 1) {
    // All values in one bin: the sketch sees no variation, and its value is the 1%-accurate one.
    result.estimate = layout.bins[0]!.representative;
    warnings.push('no variation: every value is in one sketch bin (within 2%)');
    return result;
  }
  result.estimate = interpolatedQuantile(layout, q * last);
  if (!(typeof units === 'number' && Number.isFinite(units) && units >= 1)) {
    warnings.push('units must be a number >= 1 for a standard error');
    return result;
  }
  if (units > layout.n)
    warnings.push(`units (${units}) exceed the number of values (${layout.n}): used the latter`);
  const n = Math.min(units, layout.n);
  result.n = n;
  const half = Z * Math.sqrt((q * (1 - q)) / n);
  if (q - half < 0 || q + half > 1) {
    warnings.push(
      `too few units for a standard error of this quantile (the rank interval q ± ${half.toPrecision(3)} leaves [0, 1])`,
    );
    return result;
  }
  const lower = interpolatedQuantile(layout, (q - half) * last);
  const upper = interpolatedQuantile(layout, (q + half) * last);
  const stdError = (upper - lower) / (2 * Z);
  if (!(stdError > 0) || !Number.isFinite(stdError)) {
    warnings.push('no variation around this quantile: zero standard error');
    return result;
  }
  result.stdError = stdError;
  return result;
}
