// Owns the anytime-valid sample-ratio check of one arm against its expected share: a mixture sequential
// probability ratio test for a binomial (the one-arm case of Lindon & Malek's sequential multinomial test).
// Under the null the Bayes factor is a nonnegative martingale, so by Ville's inequality the chance that it
// ever exceeds 1/alpha, however often it is read, is at most alpha: a monitor may look every round.
import { logBeta } from './special.js';

/** The mixture's prior Beta(p·k, (1 − p)·k) is centred on the expected share; k its weight in units. */
export const SRM_PRIOR_UNITS = 100;

/**
 * ln of the Bayes factor of "the arm's share is not p" (Beta(p·k, (1−p)·k) mixture) against "it is p", for
 * x units of n in the arm: ln B(a + x, b + n − x) − ln B(a, b) − x ln p − (n − x) ln(1 − p).
 */
export function logBayesFactor(x: number, n: number, p: number, k = SRM_PRIOR_UNITS): number {
  const a = p * k;
  const b = (1 - p) * k;
  return logBeta(a + x, b + n - x) - logBeta(a, b) - x * Math.log(p) - (n - x) * Math.log(1 - p);
}

/**
 * The anytime-valid p-value of the arm getting too few: min(1, 1 / Bayes factor) when its share lies below
 * p, else 1 (the other direction is not tested).
 */
export function shortfallPValue(x: number, n: number, p: number, k = SRM_PRIOR_UNITS): number {
  if (!(n > 0 && p > 0 && p < 1) || x >= n * p) return 1;
  return Math.min(1, Math.exp(-logBayesFactor(x, n, p, k)));
}
