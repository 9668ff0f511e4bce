// Owns reading an arm as counts of successes per observation, for the score test of proportions (and
// Fisher's exact test beside it when events are few).
import type { Counts } from './exact.js';
import { isProportion, isRatio } from './moments.js';
import type { ArmData } from './types.js';

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
