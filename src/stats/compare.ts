// Owns the comparison of one treatment arm with the control under the chosen method, both effect scales,
// read in the metric's direction (which way is better).
import type { MetricKind } from './arms.js';
import { bayesianCompare } from './bayesian.js';
import { bayesianVerdicts, decisionPValue, directionFlags } from './decision.js';
import { compareMeans } from './frequentist.js';
import { sequentialCompare } from './sequential.js';
import { type ExactCheck, hull, smallCountCheck } from './small-counts.js';
import type { ArmData, Direction, EffectEstimate, EffectType, Interval, Sided } from './types.js';

export { directionFlags } from './decision.js';

/** frequentist: fixed-horizon Welch; sequential: always-valid confidence sequence; bayesian: flat prior. */
export type AnalysisMethod = 'frequentist' | 'bayesian' | 'sequential';

/** A literal alternative, or 'better': one-sided toward the metric's better direction. */
export type SidedOption = Sided | 'better';

export const BETTER_NEEDS_DIRECTION = 'sided=better needs a declared direction; tested two-sided';
export const SMALL_COUNTS =
  'fewer than 10 successes or failures in an arm: significance also needs Fisher’s exact test and Newcombe’s interval';

export interface CompareOptions {
  method: AnalysisMethod;
  alpha: number;
  sided: SidedOption;
  /** Which way the metric is better; null or absent: not declared. */
  direction?: Direction | null;
  /** Sequential only: the total sample size the confidence sequence is tightest at. */
  nStar?: number;
  /**
   * 'proportion': the arms hold a boolean metric (needed for RatioMoments and `{ n, sum, sumSquares }` arms;
   * `{ n, successes }` arms are proportions anyway), so that few events bring in the exact tests.
   */
  kind?: MetricKind;
}

export interface ArmComparison {
  absolute: EffectEstimate;
  relative: EffectEstimate;
  /** The alternative actually tested ('better' resolved to 'greater' or 'less', or 'two' without a direction). */
  sided: Sided;
  /**
   * The direction the win wording reads in: the declared one, else 'increase' for sided=greater and
   * 'decrease' for sided=less; null otherwise (then chanceToWin, risk, better and worse are null).
   */
  direction: Direction | null;
  /**
   * Bayesian: posterior P(treatment better than control) on the lift (the absolute effect's when the lift is
   * undefined), in `direction`. null for the p-value methods and without a direction.
   */
  chanceToWin: number | null;
  /**
   * Bayesian expected losses [choosing control, choosing treatment] in units of "better" (for 'decrease' the
   * loss of choosing treatment is E[max(lift, 0)]); [null, null] otherwise.
   */
  risk: Interval;
  /**
   * The decision's p-value (null for bayesian, or when it cannot be computed): the largest of the absolute
   * effect's p (with small counts: and Fisher's and Newcombe's), and the lift's p when the lift is defined.
   * significant ⟺ pValue < alpha. Multiple-comparison corrections and the sentence should use this one.
   */
  pValue: number | null;
  /** With fewer than 10 successes or failures in a proportion arm: the exact evidence; null otherwise. */
  exact: ExactCheck | null;
  /**
   * The tested alternative is supported on both scales, so neither printed interval contains 0.
   * p-value methods: pValue < alpha. bayesian: on both scales, the posterior probability of the side is
   * >= 1 - alpha/2 two-sided (the equal-tailed 1 - alpha interval excludes 0), >= 1 - alpha one-sided.
   */
  significant: boolean;
  /** significant, and the effect points in the better direction; null without a direction. */
  better: boolean | null;
  /** significant, and the effect points in the worse direction; null without a direction. */
  worse: boolean | null;
  /** Both scales' warnings, each once. */
  warnings: string[];
}

export interface ResolvedSided {
  sided: Sided;
  direction: Direction | null;
  warnings: string[];
}

const isDirection = (d: unknown): d is Direction => d === 'increase' || d === 'decrease';

/**
 * The alternative to test and the direction to read results in. 'better' is 'greater' for 'increase' and
 * 'less' for 'decrease' (two-sided, with a warning, without a direction). Without a declared direction,
 * sided=greater reads as 'increase' and sided=less as 'decrease' (wording only: the test stays literal).
 */
export function resolveSided(sided: SidedOption, direction: Direction | null | undefined): ResolvedSided {
  const warnings: string[] = [];
  let declared: Direction | null = null;
  if (isDirection(direction)) declared = direction;
  else if (direction !== null && direction !== undefined) {
    warnings.push(`direction must be 'increase' or 'decrease'; none used`);
  }
  if (sided === 'better') {
    if (declared === null) warnings.push(BETTER_NEEDS_DIRECTION);
    return {
      sided: declared === null ? 'two' : declared === 'increase' ? 'greater' : 'less',
      direction: declared,
      warnings,
    };
  }
  if (!(['two', 'greater', 'less'] as const).includes(sided)) {
    warnings.push(`sided must be 'two', 'greater', 'less' or 'better'; used 'two'`);
    return { sided: 'two', direction: declared, warnings };
  }
  const implied = sided === 'greater' ? 'increase' : sided === 'less' ? 'decrease' : null;
  return { sided, direction: declared ?? implied, warnings };
}

function estimate(r: EffectEstimate): EffectEstimate {
  return { estimate: r.estimate, ci: r.ci, stdError: r.stdError, pValue: r.pValue };
}

/** Treatment vs control on both the absolute and the relative scale, read in the metric's direction. */
export function compareArms(control: ArmData, treatment: ArmData, o: CompareOptions): ArmComparison {
  const { sided, direction, warnings } = resolveSided(o.sided, o.direction);
  const exact = smallCountCheck(control, treatment, {
    alpha: o.alpha,
    sided,
    proportion: o.kind === 'proportion',
  });
  if (exact) warnings.push(SMALL_COUNTS);
  if (o.method === 'bayesian') {
    const abs = bayesianCompare(control, treatment, { alpha: o.alpha, effect: 'absolute' });
    const rel = bayesianCompare(control, treatment, { alpha: o.alpha, effect: 'relative' });
    const v = bayesianVerdicts(abs, rel, { alpha: o.alpha, sided, direction, exact });
    return {
      absolute: { estimate: abs.expected, ci: v.ci[0], stdError: abs.stdDev, pValue: null },
      relative: { estimate: rel.expected, ci: v.ci[1], stdError: rel.stdDev, pValue: null },
      sided,
      direction,
      pValue: null,
      exact,
      chanceToWin: v.chanceToWin,
      risk: v.risk,
      significant: v.significant,
      ...directionFlags(v.significant, abs.expected, direction),
      warnings: [...new Set([...warnings, ...abs.warnings, ...rel.warnings])],
    };
  }
  const opts = { alpha: o.alpha, sided };
  const compare =
    o.method === 'sequential'
      ? (effect: EffectType) => sequentialCompare(control, treatment, { ...opts, effect, nStar: o.nStar })
      : (effect: EffectType) => compareMeans(control, treatment, { ...opts, effect });
  const abs = compare('absolute');
  const rel = compare('relative');
  const absolute = estimate(abs);
  if (exact) {
    absolute.ci = hull(abs.ci, exact.newcombe);
    absolute.pValue = abs.pValue === null ? null : Math.max(abs.pValue, exact.pValue);
  }
  const pValue = decisionPValue(absolute, rel);
  const significant = pValue !== null && pValue < o.alpha;
  return {
    absolute,
    relative: estimate(rel),
    sided,
    direction,
    pValue,
    exact,
    chanceToWin: null,
    risk: [null, null],
    significant,
    ...directionFlags(significant, abs.estimate, direction),
    warnings: [...new Set([...warnings, ...abs.warnings, ...rel.warnings])],
  };
}
