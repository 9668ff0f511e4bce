// Owns when a comparison of proportions has too few events for the normal approximation, and the exact
// (Fisher) and score (Newcombe) evidence that must then agree before anything is called significant.
import { type Counts, fisherExact, isSmallCount, newcombe } from './exact.js';
import { isProportion, isRatio } from './moments.js';
import type { ArmData, Interval, Sided } from './types.js';

/** What a proportion comparison with few events adds to the decision. */
export interface ExactCheck {
  /** Fisher's exact p-value for the tested alternative. */
  fisherPValue: number;
  /** Newcombe's hybrid score interval for p_T - p_C, sided and at the level of the test. */
  newcombe: Interval;
  /** The smallest alpha at which that interval excludes 0. */
  newcombePValue: number;
  /** max(fisherPValue, newcombePValue): both must reject. */
  pValue: number;
}

/**
 * The arm's counts per observation: `{ n, successes }` as is; a boolean metric's `{ n, sum }` or, per user,
 * its RatioMoments pooled (sumX successes out of sumY observations). null when not whole counts.
 */
export function countsOf(arm: ArmData, proportion: boolean): Counts | null {
  let c: Counts | null = null;
  if (isProportion(arm)) c = { successes: arm.successes, trials: arm.n };
  else if (proportion && isRatio(arm)) c = { successes: arm.sumX, trials: arm.sumY };
  else if (proportion && 'sum' in arm) c = { successes: arm.sum, trials: arm.n };
  if (c === null || !Number.isInteger(c.successes) || !Number.isInteger(c.trials)) return null;
  return c.trials >= 1 && c.successes >= 0 && c.successes <= c.trials ? c : null;
}

/**
 * null unless both arms are proportions and one of them has fewer than SMALL_COUNT successes or failures;
 * then Fisher's test and Newcombe's interval for the alternative `sided` at level alpha.
 */
export function smallCountCheck(
  control: ArmData,
  treatment: ArmData,
  o: { alpha: number; sided: Sided; proportion: boolean },
): ExactCheck | null {
  const c = countsOf(control, o.proportion);
  const t = countsOf(treatment, o.proportion);
  if (c === null || t === null || !(isSmallCount(c) || isSmallCount(t))) return null;
  const fisherPValue = fisherExact(c, t, o.sided);
  const score = newcombe(c, t, o.alpha, o.sided);
  if (fisherPValue === null || score === null) return null;
  return {
    fisherPValue,
    newcombe: score.ci,
    newcombePValue: score.pValue,
    pValue: Math.max(fisherPValue, score.pValue),
  };
}

/** The smallest interval containing both (a bound that is null in either stays null): covers what each covers. */
export function hull(a: Interval, b: Interval): Interval {
  const lo = a[0] === null || b[0] === null ? null : Math.min(a[0], b[0]);
  const hi = a[1] === null || b[1] === null ? null : Math.max(a[1], b[1]);
  return [lo, hi];
}
