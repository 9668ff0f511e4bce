// Owns capping (winsorizing at an upper cap c) of a heavy-tailed numeric metric per call: the arm's moments of
// min(x, c), from its exact sums, its observed min and max, and its DDSketch bins for what lies around and
// above c. Rules and accuracy: docs/statistics.md, "Capping heavy-tailed metrics".

import type { SketchBin } from './sketch.js';
import { interpolatedQuantile, type LaidBin, layOut } from './sketch-layout.js';
import type { Moments } from './types.js';

/** An arm's exact sums plus what the sketch knows: its observed extremes and its bins (src/stats/sketch.ts). */
export interface CappingArm extends Moments {
  min: number;
  max: number;
  bins: readonly SketchBin[];
}

/** A fixed value, or the pooled (all arms) sketch quantile at `percentile` (in (0, 100]). */
export type Cap = { value: number } | { percentile: number };

export interface CappedArm {
  /** The moments of min(x, cap); null when they cannot be computed (a warning says why). */
  moments: Moments | null;
  /** How many values lie above the cap (read from the sketch when the cap falls inside the values). */
  capped: number | null;
  /** capped / n. */
  cappedShare: number | null;
  /** True when no bin was read: nothing above the cap (max ≤ cap), everything above it, or n = 0. */
  exact: boolean;
}

export interface CappingResult {
  /** The cap used; null when it could not be determined (then every arm is null). */
  cap: number | null;
  arms: CappedArm[];
  warnings: string[];
}

/**
 * Count, Σx and Σx² of some values, and what the error of reading them grows with. A value read from a bin is
 * off by a share of its magnitude (up to the bin's width, 2.02%) that varies from value to value, so over a
 * part the error of Σx spreads as √Σx², and that of Σ(x − m)² as √Σx²(x − m)². The powers Σx̃^p of the values
 * read (not the pinned extremes) keep both, with x̃ = x / scale so that values of 1e100 do not overflow.
 */
interface Part {
  count: number;
  s1: number;
  s2: number;
  /** Σx̃², Σx̃³, Σx̃⁴ over the values read. */
  e2: number;
  e3: number;
  e4: number;
}

const none = (): Part => ({ count: 0, s1: 0, s2: 0, e2: 0, e3: 0, e4: 0 });
const failed = (): CappedArm => ({ moments: null, capped: null, cappedShare: null, exact: false });

/** Adds the values t ∈ [a, b) of m spread evenly over [lo, hi] (the t-th at lo + (t + ½)/m (hi − lo)) to part. */
function addSpread(part: Part, lo: number, hi: number, m: number, a: number, b: number, scale: number): void {
  const k = b - a;
  if (k <= 0) return;
  // Centered on the bin's middle, so that Σx² does not cancel: x_t = mid + d_t h, d_t = t + ½ − m/2.
  const [mid, h] = [(lo + hi) / 2, (hi - lo) / m];
  const sumHalf = (b * b - a * a) / 2; // Σ (t + ½)
  const sumHalf2 = (b ** 3 - a ** 3) / 3 - k / 12; // Σ (t + ½)²
  const sumD = sumHalf - (k * m) / 2;
  const sumD2 = sumHalf2 - m * sumHalf + (k * m * m) / 4;
  const x = mid / scale;
  part.count += k;
  part.s1 += k * mid + h * sumD;
  part.s2 += k * mid * mid + 2 * mid * h * sumD + h * h * sumD2;
  part.e2 += k * x ** 2;
  part.e3 += k * x ** 3;
  part.e4 += k * x ** 4;
}

/** An exact value (a pinned extreme): no reading error. */
function addValue(part: Part, x: number): void {
  part.count += 1;
  part.s1 += x;
  part.s2 += x * x;
}

/**
 * The bins' values split at c into those ≤ c and those > c. The observed min and max are pinned (one value
 * each, in the first and last bins, whose ranges are clipped to [min, max]); every other value of a bin is read
 * as spread evenly over its range, as quantiles.ts reads them.
 */
function split(bins: LaidBin[], min: number, max: number, c: number): { below: Part; above: Part } {
  const [below, above] = [none(), none()];
  const scale = Math.max(Math.abs(min), Math.abs(max)) || 1;
  bins.forEach((bin, j) => {
    const pinned: number[] = [];
    if (j === bins.length - 1) pinned.push(max);
    if (j === 0 && pinned.length < bin.count) pinned.push(min);
    for (const x of pinned) addValue(x > c ? above : below, x);
    const m = bin.count - pinned.length;
    if (m <= 0) return;
    const [lo, hi] = [Math.max(bin.low, min), Math.min(bin.high, max)];
    // t is at or below c for t + ½ ≤ (c − lo) m / (hi − lo).
    const first = hi > lo ? Math.floor(((c - lo) * m) / (hi - lo) - 0.5) + 1 : lo <= c ? m : 0;
    const cut = Math.min(Math.max(first, 0), m);
    addSpread(below, lo, hi, m, 0, cut, scale);
    addSpread(above, lo, hi, m, cut, m, scale);
  });
  return { below, above };
}

/** Relative slack for an extreme that a bin's range must hold (the mapping's floating-point edges). */
const EDGE = 1e-9;

/** The capped moments of one arm at cap c (finite), or null with a warning. */
function capOne(arm: CappingArm, c: number, warnings: string[], label: string): CappedArm {
  const { n, sum, sumSquares, min, max } = arm ?? ({} as CappingArm);
  if (!(typeof n === 'number' && Number.isFinite(n) && n >= 0)) {
    warnings.push(`${label}: n must be a finite number >= 0`);
    return failed();
  }
  if (n === 0) return { moments: { n: 0, sum: 0, sumSquares: 0 }, capped: 0, cappedShare: null, exact: true };
  if (![sum, sumSquares, min, max].every((v) => typeof v === 'number' && Number.isFinite(v)) || min > max) {
    warnings.push(`${label}: sum, sumSquares, min and max must be finite numbers with min <= max`);
    return failed();
  }
  if (max <= c) return { moments: { n, sum, sumSquares }, capped: 0, cappedShare: 0, exact: true };
  if (min > c)
    return { moments: { n, sum: n * c, sumSquares: n * c * c }, capped: n, cappedShare: 1, exact: true };
  const layout = layOut(arm.bins ?? []);
  warnings.push(...layout.warnings.map((w) => `${label}: ${w}`));
  if (layout.n !== n) {
    warnings.push(`${label}: the sketch counts ${layout.n} values, the sums ${n}: not capped`);
    return failed();
  }
  const [first, last] = [layout.bins[0]!, layout.bins.at(-1)!];
  const holds = (bin: LaidBin, x: number) =>
    x >= bin.low - EDGE * Math.abs(bin.low) && x <= bin.high + EDGE * Math.abs(bin.high);
  if (!holds(first, min) || !holds(last, max)) {
    warnings.push(`${label}: min and max are not in the sketch's first and last bins: not capped`);
    return failed();
  }
  const { below, above } = split(layout.bins, min, max, c);
  const k = above.count;
  // Σ min(x, c) = Σ_{x≤c} x + c·k, k = #{x > c}. Σ_{x≤c} x is read either as Σx − Σ_{x>c} x (the exact total
  // minus the tail read from the bins) or from the bins at or below c directly, whichever part's reading errs
  // less. Then, around the capped mean m, Σ(min(x, c) − m)² = Σ_{x≤c}(x − m)² + k (c − m)², read the same way
  // on its own error: on heavy tails, the tail's few large values make the difference of Σx² and the tail's
  // Σx² err by more than the capped Σx² itself, and reading Σx and Σx² from different parts would let their
  // errors, amplified by m², swamp the variance. min(x, c) lies in [min, c]: the sum in [n·min, min(Σx, n·c)]
  // and the centered sum in [0, n (c − min)² / 4].
  const scale = Math.max(Math.abs(min), Math.abs(max));
  const tailSum = above.e2 <= below.e2;
  const capSum = Math.min(Math.max((tailSum ? sum - above.s1 : below.s1) + c * k, n * min), sum, n * c);
  const m = capSum / n;
  const centered = (p: Part) => p.s2 - 2 * m * p.s1 + p.count * m * m;
  const error = (p: Part, ms = m / scale) => p.e4 - 2 * ms * p.e3 + ms * ms * p.e2;
  const belowCentered =
    error(above) <= error(below) ? sumSquares - 2 * m * sum + n * m * m - centered(above) : centered(below);
  const spread = Math.min(Math.max(belowCentered + k * (c - m) ** 2, 0), (n * (c - min) ** 2) / 4);
  return {
    moments: { n, sum: capSum, sumSquares: spread + n * m * m },
    capped: k,
    cappedShare: k / n,
    exact: false,
  };
}

/**
 * The cap at a percentile of all arms' values pooled: the sketch quantile (quantiles.ts's continuous reading,
 * numpy's 'linear' rule within a bin width) clamped to the pooled [min, max]; null with a warning if none.
 */
export function percentileCap(
  arms: CappingArm[],
  percentile: number,
  warnings: string[] = [],
): number | null {
  if (!(typeof percentile === 'number' && percentile > 0 && percentile <= 100)) {
    warnings.push('the cap percentile must be a number in (0, 100]');
    return null;
  }
  const filled = arms.filter((a) => a && a.n > 0 && Number.isFinite(a.min) && Number.isFinite(a.max));
  const layout = layOut(filled.flatMap((a) => a.bins ?? []));
  if (layout.n === 0) {
    warnings.push('no values in the sketches: no percentile cap');
    return null;
  }
  const [lo, hi] = [Math.min(...filled.map((a) => a.min)), Math.max(...filled.map((a) => a.max))];
  // The 100th percentile is the maximum, known exactly (the reading would place it inside the top bin).
  if (percentile === 100) return hi;
  const q = interpolatedQuantile(layout, (percentile / 100) * (layout.n - 1));
  return Math.min(Math.max(q, lo), hi);
}

/** Every arm's moments of min(x, c), with c a value or a pooled percentile (docs/statistics.md). */
export function capArms(arms: CappingArm[], cap: Cap): CappingResult {
  const warnings: string[] = [];
  let c: number | null = null;
  if (cap && 'percentile' in cap) c = percentileCap(arms, cap.percentile, warnings);
  else if (cap && 'value' in cap && typeof cap.value === 'number' && Number.isFinite(cap.value))
    c = cap.value;
  else warnings.push('the cap must be {value: a finite number} or {percentile: a number in (0, 100]}');
  if (c === null) return { cap: null, arms: arms.map(failed), warnings };
  const at = c;
  return { cap: c, arms: arms.map((a, i) => capOne(a, at, warnings, `arm ${i}`)), warnings };
}
