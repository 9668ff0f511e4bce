// Owns multiple-comparison corrections: Holm–Bonferroni and Benjamini–Hochberg adjusted p-values.
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
