// Owns what every comparison shares once its test has run: better / worse from a decision and the effect's
// sign, the normal p-value of a statistic, and the Bayesian read-outs (chance to win, risk) in a direction.
import { normalRisk } from './bayesian.js';
import { normalCdf, normalQuantile } from './distributions.js';
import type { Direction, Interval, Sided } from './types.js';

/** better / worse from a decision and the sign of the effect (treatment − control). */
export function directionFlags(
  significant: boolean,
  estimate: number | null,
  direction: Direction | null,
): { better: boolean | null; worse: boolean | null } {
  if (direction === null) return { better: null, worse: null };
  const up = estimate !== null && estimate > 0;
  const down = estimate !== null && estimate < 0;
  return {
    better: significant && (direction === 'increase' ? up : down),
    worse: significant && (direction === 'increase' ? down : up),
  };
}

/**
 * The p-value of a standard normal statistic z for the alternative: 2 Φ(−|z|), Φ(−z) ('greater'), Φ(z)
 * ('less'). With a flat prior it is also the posterior probability of the side not tested for (doubled
 * two-sided): the Bayesian rule "a side's posterior ≥ 1 − alpha/2" is "this < alpha".
 */
export function normalPValue(z: number, sided: Sided): number {
  if (sided === 'greater') return normalCdf(-z);
  if (sided === 'less') return normalCdf(z);
  return Math.min(1, 2 * normalCdf(-Math.abs(z)));
}

/** The normal critical value of a test at level alpha: z_{1−α/2} two-sided, z_{1−α} one-sided. */
export function normalCritical(alpha: number, sided: Sided): number {
  return -normalQuantile(sided === 'two' ? alpha / 2 : alpha);
}

/**
 * Bayesian read-outs in a direction: the chance to be better, P(effect > 0) = Φ(z) for an increase (computed
 * directly on each side so that a tiny probability keeps its digits), and the expected losses
 * [choosing control, choosing treatment] of the lift's posterior N(lift, liftSE²), swapped for a decrease.
 */
export function bayesianReadout(
  z: number,
  lift: number | null,
  liftStdError: number | null,
  direction: Direction | null,
): { chanceToWin: number | null; risk: Interval } {
  if (direction === null || !Number.isFinite(z)) return { chanceToWin: null, risk: [null, null] };
  const risk: Interval =
    lift === null || liftStdError === null ? [null, null] : normalRisk(lift, liftStdError);
  return {
    chanceToWin: normalCdf(direction === 'increase' ? z : -z),
    risk: direction === 'increase' ? risk : [risk[1], risk[0]],
  };
}
