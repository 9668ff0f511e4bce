// Owns Fisher's exact test of two proportions, reported beside the score test when events are few.
import { logGamma } from './special.js';
import type { Sided } from './types.js';

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
