// Owns the comparison of one treatment arm with the control: which test decides (one per kind of metric),
// read in the metric's direction (which way is better). Each test prints its own interval on both scales.
import type { MetricKind } from './arms.js';
import { compareKnown } from './compare-known.js';
import { compareMeanArms } from './compare-means.js';
import { compareProportions } from './compare-proportions.js';
import { summarizeArm } from './moments.js';
import { countsOf } from './small-counts.js';
import type { ArmData, Direction, EffectEstimate, Interval, Sided } from './types.js';

export { directionFlags } from './decision.js';

/** frequentist: fixed-horizon Welch; sequential: always-valid confidence sequence; bayesian: flat prior. */
export type AnalysisMethod = 'frequentist' | 'bayesian' | 'sequential';

/** A literal alternative, or 'better': one-sided toward the metric's better direction. */
export type SidedOption = Sided | 'better';

export const BETTER_NEEDS_DIRECTION = 'sided=better needs a declared direction; tested two-sided';

/**
 * The test that decided and produced both intervals. welch: Welch's t (means); sequence: the always-valid
 * confidence sequence on the same statistic; posterior: the flat-prior normal posterior (Bayesian means);
 * score: the Miettinen–Nurminen score test (proportions, frequentist and Bayesian); score-sequence: the score
 * statistic with the sequence's critical value; known: no spread in either arm, the difference is exact.
 */
export type TestMethod = 'welch' | 'sequence' | 'posterior' | 'score' | 'score-sequence' | 'known';

export interface TestUsed {
  method: TestMethod;
  /** The intervals' coverage (1 − the level tested at: alpha, or its adjusted level under a correction; 1 for known). */
  level: number;
}

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
   * `{ n, successes }` arms are proportions anyway): the score test decides.
   */
  kind?: MetricKind;
}

/** Fisher's exact test beside the score test when an arm has fewer than 10 successes or failures. */
export interface ExactCheck {
  /** Fisher's exact p-value for the tested alternative (per call; it does not decide). */
  fisherPValue: number;
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
  /** Bayesian: P(treatment better than control) from the deciding posterior, in `direction`; else null. */
  chanceToWin: number | null;
  /** Bayesian expected losses [choosing control, choosing treatment] on the lift, in "better" units. */
  risk: Interval;
  /**
   * The deciding test's p-value (for bayesian the posterior probability of the other side, doubled two-sided):
   * significant ⟺ pValue < alpha. null only when it cannot be computed (an arm without units, n < 2 for means).
   */
  pValue: number | null;
  /** Proportions with fewer than 10 successes or failures in an arm: Fisher's exact p beside the score test. */
  exact: ExactCheck | null;
  test: TestUsed;
  significant: boolean;
  /** significant, and the effect points in the better direction; null without a direction. */
  better: boolean | null;
  /** significant, and the effect points in the worse direction; null without a direction. */
  worse: boolean | null;
  /** Every warning of the comparison, each once. */
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

/** What every comparison builder receives: the options with the alternative and direction resolved. */
export interface ResolvedCompare {
  method: AnalysisMethod;
  alpha: number;
  sided: Sided;
  direction: Direction | null;
  nStar?: number;
}

/**
 * Treatment vs control. One test decides, on the absolute difference, and its interval is printed on both
 * scales (the lift's derived from the same test): proportions by the score test, means by Welch's t (the
 * sequence or the flat-prior posterior under those methods), arms without spread exactly.
 */
export function compareArms(control: ArmData, treatment: ArmData, o: CompareOptions): ArmComparison {
  const { sided, direction, warnings } = resolveSided(o.sided, o.direction);
  const r: ResolvedCompare = { method: o.method, alpha: o.alpha, sided, direction, nStar: o.nStar };
  const proportion = o.kind === 'proportion';
  const counts = [countsOf(control, proportion), countsOf(treatment, proportion)] as const;
  const c = summarizeArm(control);
  const t = summarizeArm(treatment);
  const out =
    counts[0] && counts[1]
      ? compareProportions(control, treatment, counts[0], counts[1], r)
      : !proportion && c.variance === 0 && t.variance === 0 && (c.n ?? 0) >= 2 && (t.n ?? 0) >= 2
        ? compareKnown(c, t, r)
        : compareMeanArms(control, treatment, r);
  return { ...out, warnings: [...new Set([...warnings, ...out.warnings])] };
}
