// Owns the shapes of a comparison of a treatment with the control: the options, the test that decided,
// and the answer every comparison builder returns (compare.ts dispatches; compare-*.ts build).
import type { MetricKind } from './arms.js';
import type { Direction, EffectEstimate, Interval, Sided } from './types.js';

/** frequentist: fixed-horizon Welch; sequential: always-valid confidence sequence; bayesian: flat prior. */
export type AnalysisMethod = 'frequentist' | 'bayesian' | 'sequential';

/** A literal alternative, or 'better': one-sided toward the metric's better direction. */
export type SidedOption = Sided | 'better';

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

/** What every comparison builder receives: the options with the alternative and direction resolved. */
export interface ResolvedCompare {
  method: AnalysisMethod;
  alpha: number;
  sided: Sided;
  direction: Direction | null;
  nStar?: number;
}
