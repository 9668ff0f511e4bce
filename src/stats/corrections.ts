// Owns multiple-comparison corrections: Holm–Bonferroni and Benjamini–Hochberg adjusted p-values, and the
// comparisons of a family recomputed at the level that makes their intervals agree with them.
import type { AdjustedPValues, CorrectionMethod } from './types.js';

const isPValue = (p: unknown): p is number => typeof p === 'number' && p >= 0 && p <= 1;

/**
 * With the m valid p-values sorted ascending, p_(1) <= ... <= p_(m):
 * holm: adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))  (step-down, controls the family-wise error rate);
 * bh:   adj_(i) = min_{j >= i} min(1, m p_(j) / j)          (step-up, controls the false discovery rate).
 * Results come back in input order; entries that are not p-values in [0, 1] are null and do not count in m.
 */
export function adjustPValues(pValues: readonly number[], method: CorrectionMethod): AdjustedPValues {
  const warnings: string[] = [];
  const adjusted: (number | null)[] = pValues.map(() => null);
  const result: AdjustedPValues = { method, adjusted, warnings };
  if (method !== 'holm' && method !== 'bh') {
    warnings.push(`method must be 'holm' or 'bh'`);
    return result;
  }
  const invalid = pValues.flatMap((p, i) => (isPValue(p) ? [] : [i]));
  if (invalid.length > 0) warnings.push(`not p-values in [0, 1], left out: indexes ${invalid.join(', ')}`);
  const order = pValues.flatMap((p, i) => (isPValue(p) ? [i] : [])).sort((a, b) => pValues[a]! - pValues[b]!);
  const m = order.length;
  if (method === 'holm') {
    let running = 0;
    order.forEach((index, k) => {
      running = Math.max(running, Math.min(1, (m - k) * pValues[index]!));
      adjusted[index] = running;
    });
  } else {
    let running = 1;
    for (let k = m - 1; k >= 0; k--) {
      const index = order[k]!;
      running = Math.min(running, (m * pValues[index]!) / (k + 1));
      adjusted[index] = running;
    }
  }
  return result;
}

/** 'none' leaves the per-comparison decisions as they are. */
export type Correction = 'none' | CorrectionMethod;

/** One comparison in the family: its decision p-value, and how to recompute it at another level. */
export interface Tested<C> {
  pValue: number | null;
  /** The comparison at level `alpha` (its intervals at 1 − alpha). */
  at: (alpha: number) => C;
}

/** A comparison after the correction: recomputed at its adjusted level, with the adjusted p-value. */
export interface Corrected<C> {
  comparison: C | null;
  adjustedPValue: number | null;
  significant: boolean;
}

/**
 * Adjusts the family's decision p-values together (Holm or BH) and recomputes each comparison at the level
 * alpha · p / p_adj: an interval and a p-value that are duals (the interval excludes 0 exactly when p is below
 * the level) then exclude 0 exactly when p_adj < alpha, so the adjusted interval says what the adjusted
 * p-value says. A p-value that could not be computed stays out of the family and is not significant.
 */
export function correctFamily<C>(
  family: readonly Tested<C>[],
  o: { method: CorrectionMethod; alpha: number },
): Corrected<C>[] {
  const { adjusted } = adjustPValues(
    family.map((t) => t.pValue ?? Number.NaN),
    o.method,
  );
  return family.map((t, i) => {
    const adjustedPValue = adjusted[i] ?? null;
    const p = t.pValue;
    if (adjustedPValue === null || p === null)
      return { comparison: null, adjustedPValue: null, significant: false };
    const level = adjustedPValue > 0 ? (o.alpha * p) / adjustedPValue : o.alpha;
    return { comparison: t.at(level), adjustedPValue, significant: adjustedPValue < o.alpha };
  });
}
