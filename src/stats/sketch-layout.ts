// Owns reading DDSketch bin counts as sorted values: which bins are valid, their value ranges from the shared
// mapping, and a continuous quantile function over them. A bin is ~2% wide, so for large n a rank interval
// falls inside one bin; reading every bin as one value would then give a zero-width interval. Instead the c
// values of a bin are read as spread evenly across its range, which is exact for a density that is flat
// across 2% of its values (any smooth one, at the bins' scale). Given the values' observed minimum and
// maximum, every range is first narrowed to them: no value read lies outside the data (docs/statistics.md,
// "Quantiles").
import { SKETCH_RELATIVE_ACCURACY, type SketchBin, sketchOf } from './sketch.js';

const ALPHA = SKETCH_RELATIVE_ACCURACY;
const mapping = sketchOf([]).mapping;
/** The largest |key| a finite double maps to is ~35,500 (log_gamma of 1.8e308); anything beyond is corrupt. */
const MAX_KEY = 40_000;

/** One non-empty bin in ascending order of value: its values lie in [low, high]. */
export interface LaidBin {
  side: -1 | 0 | 1;
  key: number;
  count: number;
  low: number;
  high: number;
  /** The sketch's own value for the bin: within ALPHA (relative) of every value counted in it. */
  representative: number;
}

/** The smallest and largest value counted (the write-time rollups keep them: core/rollups.ts). */
export interface Extremes {
  min: number;
  max: number;
}

export interface SketchLayout {
  bins: LaidBin[];
  /** Number of values: Σ count. */
  n: number;
  /** cumulative[j]: number of values in bins before j. */
  cumulative: number[];
  /** The min and max the bins were clamped to; null when none were given (or they were invalid). */
  extremes: Extremes | null;
  warnings: string[];
}

/** Bin j of the mapping holds magnitudes in (gamma^(k-1), gamma^k]; its value is gamma^k (1 - ALPHA). */
function range(side: -1 | 0 | 1, key: number): Omit<LaidBin, 'side' | 'key' | 'count'> {
  if (side === 0) return { low: 0, high: 0, representative: 0 };
  const value = mapping.value(key);
  const [low, high] = [value / (1 + ALPHA), value / (1 - ALPHA)];
  return side === 1
    ? { low, high, representative: value }
    : { low: -high, high: -low, representative: -value };
}

/** x moved into [lo, hi] (lo <= hi). */
export const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

/**
 * Valid bins merged by (side, key) and sorted by value; invalid rows are skipped with one warning. With
 * `extremes`, each bin's range and value are clamped into [min, max]: the values counted in a bin lie in both,
 * so they lie in the clamped range, and every reading keeps its accuracy (it can only move closer to them).
 */
export function layOut(rows: Iterable<SketchBin>, extremes?: Extremes | null): SketchLayout {
  const counts = new Map<string, { side: -1 | 0 | 1; key: number; count: number }>();
  let invalid = 0;
  for (const row of rows) {
    const { side, count } = row;
    const key = side === 0 ? 0 : row.key;
    const valid =
      (side === 1 || side === -1 || side === 0) &&
      Number.isInteger(key) &&
      Math.abs(key) <= MAX_KEY &&
      Number.isFinite(count) &&
      count >= 0;
    if (!valid) invalid++;
    if (!valid || count === 0) continue;
    const id = `${side}:${key}`;
    const bin = counts.get(id) ?? { side, key, count: 0 };
    bin.count += count;
    counts.set(id, bin);
  }
  const order = (b: { side: number; key: number }) => (b.side === 0 ? 0 : b.side * (MAX_KEY + 1 + b.key));
  const warnings: string[] = [];
  const bounds = (extremes && validExtremes(extremes, warnings)) ?? null;
  const bins = [...counts.values()]
    .sort((a, b) => order(a) - order(b))
    .map((b) => {
      const r = range(b.side, b.key);
      if (!bounds) return { ...b, ...r };
      const { min, max } = bounds;
      return {
        ...b,
        low: clamp(r.low, min, max),
        high: clamp(r.high, min, max),
        representative: clamp(r.representative, min, max),
      };
    });
  const cumulative: number[] = [];
  let n = 0;
  for (const b of bins) {
    cumulative.push(n);
    n += b.count;
  }
  if (invalid > 0) warnings.unshift(`${invalid} invalid sketch bin(s) ignored`);
  return { bins, n, cumulative, extremes: bounds, warnings };
}

/** The extremes when they are finite numbers with min <= max; otherwise undefined, with a warning. */
function validExtremes(e: Extremes, warnings: string[]): Extremes | undefined {
  if (Number.isFinite(e.min) && Number.isFinite(e.max) && e.min <= e.max) return e;
  warnings.push(`invalid min/max (${e.min}, ${e.max}) ignored: quantiles not clamped`);
  return undefined;
}

/** The bin holding the value of 0-based index i (0 <= i < n): the last j with cumulative[j] <= i. */
function binOf(layout: SketchLayout, i: number): number {
  let [lo, hi] = [0, layout.bins.length - 1];
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (layout.cumulative[mid]! <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The i-th smallest value as read from the bins: the t-th of a bin's c values sits at (t + 1/2) / c of its range. */
function valueAt(layout: SketchLayout, i: number): number {
  const j = binOf(layout, i);
  const bin = layout.bins[j]!;
  const t = i - layout.cumulative[j]!;
  return bin.low + ((t + 0.5) / bin.count) * (bin.high - bin.low);
}

/**
 * The value at 0-based rank r in [0, n - 1] (numpy's 'linear' rule on the values as read above): continuous
 * and non-decreasing in r. Requires n >= 1; r is clamped into range.
 */
export function interpolatedQuantile(layout: SketchLayout, rank: number): number {
  const r = Math.min(Math.max(rank, 0), layout.n - 1);
  const below = Math.floor(r);
  const low = valueAt(layout, below);
  if (r === below) return low;
  return low + (r - below) * (valueAt(layout, below + 1) - low);
}
