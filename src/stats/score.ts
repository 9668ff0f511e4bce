// Owns the score test of two proportions (Miettinen & Nurminen 1985): one statistic that decides, and the
// intervals for the difference and the ratio that are its duals (both exclude "no effect" exactly when it
// rejects). Counts may be fractional: clustered arms enter as Rao–Scott effective counts.
import type { Counts } from './exact.js';
import type { Interval, Sided } from './types.js';

/** The score statistic's null: p_T − p_C = value ('diff') or p_T / p_C = value ('ratio'). */
export type ScoreScale = 'diff' | 'ratio';

/**
 * Miettinen–Nurminen z at a hypothesised value: (p̂_T − p̂_C − δ) / sqrt(Ṽ(δ)) for the difference,
 * (p̂_T − φ p̂_C) / sqrt(Ṽ(φ)) for the ratio, with Ṽ from the maximum-likelihood proportions constrained to the
 * null and the factor N / (N − 1) (statsmodels' `correction=True`). At δ = 0 or φ = 1 both are the pooled
 * score test. 0 when the variance is 0 and the numerator is too (nothing to test).
 */
export function scoreZ(control: Counts, treatment: Counts, value: number, scale: ScoreScale): number {
  const [x1, n1, x0, n0] = [treatment.successes, treatment.trials, control.successes, control.trials];
  const n = n1 + n0;
  const p1 = x1 / n1;
  const p0 = x0 / n0;
  let prop0 = (x1 + x0) / n;
  let prop1 = prop0;
  if (scale === 'diff' && value !== 0) [prop1, prop0] = constrainedDiff(x1, n1, x0, n0, value);
  if (scale === 'ratio' && value !== 1) [prop1, prop0] = constrainedRatio(x1, n1, x0, n0, value);
  const weight = scale === 'ratio' ? value * value : 1;
  const correction = n > 1 ? n / (n - 1) : 1;
  const variance = Math.max(0, (prop1 * (1 - prop1)) / n1 + (weight * prop0 * (1 - prop0)) / n0) * correction;
  const numerator = scale === 'ratio' ? p1 - value * p0 : p1 - p0 - value;
  if (variance === 0) return numerator === 0 ? 0 : numerator > 0 ? Number.POSITIVE_INFINITY : -Infinity;
  return numerator / Math.sqrt(variance);
}

/** The proportions maximizing the likelihood under p_1 − p_0 = δ (the cubic's closed form, Farrington–Manning). */
function constrainedDiff(x1: number, n1: number, x0: number, n0: number, diff: number): [number, number] {
  const n = n1 + n0;
  const count = x1 + x0;
  const t2 = (n1 + 2 * n0) * diff - n - count;
  const t1 = (x0 * diff - n - 2 * x0) * diff + count;
  const t0 = x0 * diff * (1 - diff);
  const q = (t2 / (3 * n)) ** 3 - (t1 * t2) / (6 * n * n) + t0 / (2 * n);
  const s = Math.sqrt(Math.max(0, (t2 / (3 * n)) ** 2 - t1 / (3 * n)));
  const p = q < 0 ? -s : s;
  const cosine = p === 0 ? 0 : Math.max(-1, Math.min(1, q / p ** 3));
  const a = (Math.PI + Math.acos(cosine)) / 3;
  const prop0 = clamp01(2 * p * Math.cos(a) - t2 / (3 * n));
  return [clamp01(prop0 + diff), prop0];
}

/** The proportions maximizing the likelihood under p_1 = φ p_0 (a quadratic). */
function constrainedRatio(x1: number, n1: number, x0: number, n0: number, ratio: number): [number, number] {
  const a = (n1 + n0) * ratio;
  const b = -(n1 * ratio + x1 + n0 + x0 * ratio);
  const c = x1 + x0;
  const prop0 = clamp01((-b - Math.sqrt(Math.max(0, b * b - 4 * a * c))) / (2 * a));
  return [clamp01(prop0 * ratio), prop0];
}

const clamp01 = (p: number) => Math.min(1, Math.max(0, p));

/**
 * The interval {value : |z(value)| ≤ c} (one-sided: the one bound), by bisection on each side of the
 * estimate, where z is monotone. The ratio's upper bound is null when no finite ratio reaches −c (control
 * without successes), never infinite.
 */
export function scoreInterval(
  control: Counts,
  treatment: Counts,
  c: number,
  sided: Sided,
  scale: ScoreScale,
): Interval {
  const p1 = treatment.successes / treatment.trials;
  const p0 = control.successes / control.trials;
  const z = (v: number) => scoreZ(control, treatment, v, scale);
  let lower: number | null = null;
  let upper: number | null = null;
  if (scale === 'diff') {
    const d = p1 - p0;
    if (sided !== 'less') lower = d <= -1 ? -1 : root((v) => z(v) - c, -1, d);
    if (sided !== 'greater') upper = d >= 1 ? 1 : root((v) => z(v) + c, d, 1);
    return [lower, upper];
  }
  if (p0 === 0) return [null, null];
  const ratio = p1 / p0;
  // At φ = 0 the constrained maximum is degenerate: search from a tiny positive ratio instead.
  const tiny = 1e-12 * Math.max(ratio, 1e-3);
  if (sided !== 'less') lower = ratio === 0 ? 0 : root((v) => z(v) - c, tiny, ratio);
  if (sided !== 'greater') {
    let hi = Math.max(2, 2 * ratio);
    while (z(hi) + c > 0 && hi < 1e12) hi *= 4;
    upper = z(hi) + c > 0 ? null : root((v) => z(v) + c, Math.max(ratio, tiny), hi);
  }
  return [lower, upper];
}

/** The point in [a, b] where the decreasing f crosses 0 (a where it is already ≤ 0, b where still > 0). */
function root(f: (v: number) => number, a: number, b: number): number {
  if (!(f(a) > 0)) return a;
  if (f(b) > 0) return b;
  let [lo, hi] = [a, b];
  for (let i = 0; i < 200 && hi - lo > 1e-15 * Math.max(1, Math.abs(hi)); i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) > 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Rao & Scott (1992): clustered binary data (a user's calls) analysed as independent counts divided by the
 * arm's design effect, the delta-method variance of the per-call share over the binomial one (at least 1,
 * so clustering never makes a test more liberal than counting calls).
 */
export function effectiveCounts(counts: Counts, varianceOfShare: number | null): Counts {
  const p = counts.successes / counts.trials;
  const binomial = (p * (1 - p)) / counts.trials;
  if (varianceOfShare === null || !(binomial > 0)) return counts;
  const deff = Math.max(1, varianceOfShare / binomial);
  return { successes: counts.successes / deff, trials: counts.trials / deff };
}
