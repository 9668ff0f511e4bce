// Owns the decision rule of a comparison: an intersection–union test over the absolute and the relative
// scale (significant only when both reject), so that a significant effect never prints an interval through 0.
import { normalCdf, normalQuantile } from './distributions.js';
import { type ExactCheck, hull } from './small-counts.js';
import type { BayesianResult, Direction, EffectEstimate, Interval, Sided } from './types.js';

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
 * max(p_absolute, p_relative): the intersection–union test rejects at level alpha iff both do, and its
 * level is at most either one's. Without a lift (control mean 0: estimate null) the absolute p alone.
 */
export function decisionPValue(absolute: EffectEstimate, relative: EffectEstimate): number | null {
  if (absolute.pValue === null) return null;
  if (relative.estimate === null) return absolute.pValue;
  return relative.pValue === null ? null : Math.max(absolute.pValue, relative.pValue);
}

interface BayesianDecision {
  /** [absolute, relative] intervals, sided as the test. */
  ci: [Interval, Interval];
  chanceToWin: number | null;
  risk: Interval;
  significant: boolean;
}

/** The credible interval matching the test: equal-tailed 1 - alpha two-sided, the one 1 - alpha bound one-sided. */
function sidedInterval(post: BayesianResult, alpha: number, sided: Sided): Interval {
  if (sided === 'two' || post.expected === null || post.stdDev === null) return post.ci;
  const half = -normalQuantile(alpha) * post.stdDev;
  return sided === 'greater' ? [post.expected - half, null] : [null, post.expected + half];
}

/** P(effect > 0) and P(effect < 0), each computed directly so that a tiny probability keeps its digits. */
function sides(post: BayesianResult): [number, number] | null {
  if (post.expected === null || !post.stdDev) return null;
  return [normalCdf(post.expected / post.stdDev), normalCdf(-post.expected / post.stdDev)];
}

/**
 * Significant when every defined posterior (the absolute effect's, and the lift's unless the control mean is
 * 0) puts at least 1 - alpha/2 (two-sided, on the same side) or 1 - alpha (one-sided, on the tested side) on
 * the alternative, and, with small counts, the exact tests reject too. GrowthBook's "either side >= 1 - alpha"
 * two-sided rule would call about 2 alpha of A/A tests significant; this one about alpha (at most alpha).
 */
export function bayesianVerdicts(
  abs: BayesianResult,
  rel: BayesianResult,
  o: { alpha: number; sided: Sided; direction: Direction | null; exact: ExactCheck | null },
): BayesianDecision {
  const { alpha, sided, direction, exact } = o;
  const absCi = sidedInterval(abs, alpha, sided);
  const ci: [Interval, Interval] = [
    exact ? hull(absCi, exact.newcombe) : absCi,
    sidedInterval(rel, alpha, sided),
  ];
  const a = sides(abs);
  const r = rel.chanceToWin === null ? a : sides(rel);
  if (a === null || r === null) return { ci, chanceToWin: null, risk: [null, null], significant: false };
  const supports = (i: 0 | 1, level: number) => a[i] >= level && r[i] >= level;
  const significant =
    (exact === null || exact.pValue < alpha) &&
    (sided === 'greater'
      ? supports(0, 1 - alpha)
      : sided === 'less'
        ? supports(1, 1 - alpha)
        : supports(0, 1 - alpha / 2) || supports(1, 1 - alpha / 2));
  // The reported chance and risk are the lift's (the absolute effect's when the lift is undefined).
  const post = rel.chanceToWin === null ? abs : rel;
  const [up, down] = post === rel ? r : a;
  const [lossControl, lossTreatment] = post.risk;
  return {
    ci,
    chanceToWin: direction === null ? null : direction === 'increase' ? up : down,
    risk:
      direction === null ? [null, null] : direction === 'increase' ? post.risk : [lossTreatment, lossControl],
    significant,
  };
}
