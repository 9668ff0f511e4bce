// Owns multiple-comparison corrections: Holm–Bonferroni and Benjamini–Hochberg adjusted p-values, and
// significance re-decided from them across every comparison of an analysis.
import { type AnalysisMethod, directionFlags } from './compare.js';
import type { AdjustedPValues, CorrectionMethod, Direction, MetricRole } from './types.js';

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

/**
 * A comparison as the correction reads and rewrites it; one without `absolute` (a control) is not tested.
 * With a `direction` (as compareArms returns), `better` and `worse` are re-decided with `significant`.
 */
export interface TestedVariant {
  absolute?: { pValue: number | null; estimate?: number | null };
  adjustedPValue?: number | null;
  significant?: boolean;
  direction?: Direction | null;
  better?: boolean | null;
  worse?: boolean | null;
}

/**
 * The family is every treatment of every metric (metrics × treatments) except guardrails (`role:
 * 'guardrail'`, GrowthBook's convention: a guardrail is a one-sided check that must not fail, and correcting it
 * would make harm harder to see); guardrail metrics come back unchanged. The absolute-effect p-values are
 * adjusted together, and each one is significant when its adjusted p-value is below alpha. A p-value that
 * could not be computed stays out of the family and is not significant. Bayesian results have no
 * p-values, so the correction is ignored for them, with a warning. Returns new objects; input unchanged.
 */
export function correctSignificance<
  M extends { role?: MetricRole | null; variants: readonly TestedVariant[] },
>(
  metrics: readonly M[],
  o: { correction: Correction; alpha: number; method: AnalysisMethod },
): { metrics: M[]; warnings: string[] } {
  if (o.correction === 'none') return { metrics: [...metrics], warnings: [] };
  if (o.method === 'bayesian') {
    return {
      metrics: [...metrics],
      warnings: ['correction applies to p-values; it is ignored for method=bayesian'],
    };
  }
  const inFamily = (m: M) => m.role !== 'guardrail';
  const pValues = metrics
    .filter(inFamily)
    .flatMap((m) => m.variants.flatMap((v) => (v.absolute ? [v.absolute.pValue ?? Number.NaN] : [])));
  const { adjusted } = adjustPValues(pValues, o.correction);
  let i = 0;
  const corrected = metrics.map((m) => {
    if (!inFamily(m)) return m;
    return {
      ...m,
      variants: m.variants.map((v) => {
        if (!v.absolute) return v;
        const adjustedPValue = adjusted[i++] ?? null;
        const significant = adjustedPValue !== null && adjustedPValue < o.alpha;
        const flags =
          v.direction === undefined
            ? {}
            : directionFlags(significant, v.absolute.estimate ?? null, v.direction);
        return { ...v, adjustedPValue, significant, ...flags };
      }),
    };
  });
  return { metrics: corrected, warnings: [] };
}
