// Owns small-count tests of two proportions: Fisher's exact test and Newcombe's hybrid score interval for
// the difference, where the normal approximation of Welch, the sequence and the posterior is poor.
import { normalCdf, normalQuantile } from './distributions.js';
import { logGamma } from './special.js';
import type { Interval, Sided } from './types.js';

/** Successes out of trials, counted per observation (pooled over units for a per-user metric). */
export interface Counts {
  successes: number;
  trials: number;
}

/** Below this many successes or failures in an arm, the normal approximation is not trusted. */
export const SMALL_COUNT = 10;

export function isSmallCount(c: Counts): boolean {
  return c.successes < SMALL_COUNT || c.trials - c.successes < SMALL_COUNT;
}

const logChoose = (n: number, k: number) => logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);

/**
 * Fisher's exact test of treatment vs control, conditional on the total successes: X = treatment successes
 * is hypergeometric. 'greater': P(X >= x); 'less': P(X <= x); two-sided: the total probability of tables no
 * more likely than the observed one (scipy.stats.fisher_exact's convention, with its 1e-7 relative slack).
 */
export function fisherExact(control: Counts, treatment: Counts, sided: Sided): number | null {
  const [x, nT, nC] = [treatment.successes, treatment.trials, control.trials];
  const k = x + control.successes;
  if (![x, nT, nC, k].every(Number.isInteger) || nT < 1 || nC < 1 || x > nT || k - x > nC || x < 0)
    return null;
  const lo = Math.max(0, k - nC);
  const hi = Math.min(k, nT);
  const logTotal = logChoose(nT + nC, k);
  const pmf = (i: number) => Math.exp(logChoose(nT, i) + logChoose(nC, k - i) - logTotal);
  const observed = pmf(x);
  let p = 0;
  for (let i = lo; i <= hi; i++) {
    const inTail = sided === 'greater' ? i >= x : sided === 'less' ? i <= x : pmf(i) <= observed * (1 + 1e-7);
    if (inTail) p += pmf(i);
  }
  return Math.min(1, p);
}

/** Wilson's score interval for one proportion at normal quantile z (Wilson 1927). */
export function wilson(c: Counts, z: number): [number, number] {
  const { successes: s, trials: n } = c;
  const p = s / n;
  const center = p + (z * z) / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  const scale = 1 + (z * z) / n;
  return [Math.max(0, (center - spread) / scale), Math.min(1, (center + spread) / scale)];
}

/**
 * Newcombe's hybrid score interval for p_T - p_C (Newcombe 1998, method 10) at normal quantile z:
 * [d - sqrt((p_T - l_T)^2 + (u_C - p_C)^2), d + sqrt((u_T - p_T)^2 + (p_C - l_C)^2)] with Wilson's (l, u).
 */
export function newcombeBounds(control: Counts, treatment: Counts, z: number): [number, number] {
  const pT = treatment.successes / treatment.trials;
  const pC = control.successes / control.trials;
  const [lT, uT] = wilson(treatment, z);
  const [lC, uC] = wilson(control, z);
  const d = pT - pC;
  return [d - Math.hypot(pT - lT, uC - pC), d + Math.hypot(uT - pT, pC - lC)];
}

export interface NewcombeResult {
  /** Two-sided at 1 - alpha, or the one bound of the one-sided 1 - alpha interval. */
  ci: Interval;
  /** The smallest alpha at which that interval excludes 0 (1 when the effect points the other way). */
  pValue: number;
}

/** Newcombe's interval for the tested alternative, and the p-value its family of intervals implies. */
export function newcombe(
  control: Counts,
  treatment: Counts,
  alpha: number,
  sided: Sided,
): NewcombeResult | null {
  if (!(control.trials >= 1 && treatment.trials >= 1)) return null;
  const z = -normalQuantile(sided === 'two' ? alpha / 2 : alpha);
  const [lower, upper] = newcombeBounds(control, treatment, z);
  const ci: Interval = [sided === 'less' ? null : lower, sided === 'greater' ? null : upper];
  const d = treatment.successes / treatment.trials - control.successes / control.trials;
  const up = sided === 'greater' || (sided === 'two' && d > 0);
  if ((sided === 'greater' && !(d > 0)) || (sided === 'less' && !(d < 0)) || d === 0)
    return { ci, pValue: 1 };
  // The bound facing 0 moves toward 0 as z grows: bisect for the z at which it reaches 0.
  const bound = (q: number) => newcombeBounds(control, treatment, q)[up ? 0 : 1];
  let [a, b] = [0, 40];
  if ((up ? bound(b) : -bound(b)) > 0) return { ci, pValue: 0 };
  for (let i = 0; i < 100 && b - a > 1e-13; i++) {
    const m = (a + b) / 2;
    if ((up ? bound(m) : -bound(m)) > 0) a = m;
    else b = m;
  }
  const tail = normalCdf(-(a + b) / 2);
  return { ci, pValue: Math.min(1, sided === 'two' ? 2 * tail : tail) };
}
