// Owns the public data types of the statistics module: inputs (sufficient statistics) and result shapes.

/** Sufficient statistics of a numeric metric: count, sum and sum of squares of the observations. */
export interface Moments {
  n: number;
  sum: number;
  sumSquares: number;
}

/** Sufficient statistics of a boolean metric: count and number of successes. */
export interface Proportion {
  n: number;
  successes: number;
}

/**
 * Sufficient statistics of a ratio (per-unit) metric over n units (users): unit i contributes x_i, the sum of
 * its values (its count of trues for a boolean metric), and y_i, its number of observations. The estimate is
 * R = sumX / sumY, the mean per observation, with the units (not the observations) as independent draws.
 */
export interface RatioMoments {
  n: number;
  sumX: number;
  sumX2: number;
  sumY: number;
  sumY2: number;
  sumXY: number;
}

/**
 * One quantile of a variant (stats/quantiles.ts): the estimate and its standard error over n independent
 * units. Read as an arm whose mean is the estimate and whose variance is stdError² · n.
 */
export interface QuantileMoments {
  n: number;
  estimate: number;
  stdError: number;
}

export type ArmData = Moments | Proportion | RatioMoments | QuantileMoments;

/** 'greater' tests treatment > control, 'less' tests treatment < control. */
export type Sided = 'two' | 'greater' | 'less';

/** Which way a metric is better: up ('increase', e.g. success rate) or down ('decrease', e.g. cost). */
export type Direction = 'increase' | 'decrease';

/**
 * A metric's part in the decision: the first 'primary' picks the winner, 'guardrail' metrics must not get
 * worse, 'secondary' metrics are reported only.
 */
export type MetricRole = 'primary' | 'secondary' | 'guardrail';

/** 'absolute': mean_T - mean_C. 'relative': (mean_T - mean_C) / |mean_C|. */
export type EffectType = 'absolute' | 'relative';

export interface ArmSummary {
  /** null when the given n is not a finite number >= 0. */
  n: number | null;
  mean: number | null;
  /**
   * Sample variance with n - 1 for numeric metrics; p(1 - p) for proportions; for ratios, n times the
   * delta-method variance of R, so that variance / n is Var(R) as for the other shapes.
   */
  variance: number | null;
  stdDev: number | null;
  warnings: string[];
}

/** A confidence bound that does not exist (one-sided tests) or cannot be computed is null. */
export type Interval = [number | null, number | null];

export interface EffectEstimate {
  estimate: number | null;
  ci: Interval;
  stdError: number | null;
  pValue: number | null;
}

export interface ComparisonOptions {
  /** Significance level, 0 < alpha < 1. Default 0.05. */
  alpha?: number;
  /** Default 'two'. */
  sided?: Sided;
  /** Default 'relative' (GrowthBook's default). */
  effect?: EffectType;
}

export interface SequentialOptions extends ComparisonOptions {
  /** Tuning parameter N* of the confidence sequence: the total sample size it is tightest at. Default 5000. */
  nStar?: number;
}

interface ComparisonBase extends EffectEstimate {
  effect: EffectType;
  sided: Sided;
  alpha: number;
  control: ArmSummary;
  treatment: ArmSummary;
  warnings: string[];
}

export interface WelchResult extends ComparisonBase {
  method: 'welch';
  /** Welch–Satterthwaite degrees of freedom. */
  dof: number | null;
}

export interface SequentialResult extends ComparisonBase {
  method: 'sequential';
  nStar: number;
}

/** Normal prior on the effect, on the same scale as the effect (the lift, for 'relative'). */
export interface NormalPrior {
  mean: number;
  variance: number;
}

export interface BayesianOptions {
  /** 1 - credibility of the interval. Default 0.05. */
  alpha?: number;
  /** Default 'relative' (GrowthBook's convention). */
  effect?: EffectType;
  /** Default: flat (improper) prior. */
  prior?: NormalPrior;
}

export interface BayesianResult {
  effect: EffectType;
  alpha: number;
  /** The prior actually used (null: flat). */
  prior: NormalPrior | null;
  /** Posterior mean of the effect. */
  expected: number | null;
  /** Equal-tailed credible interval. */
  ci: Interval;
  /** Posterior standard deviation of the effect. */
  stdDev: number | null;
  /** P(effect > 0). */
  chanceToWin: number | null;
  /** [expected loss if choosing control, expected loss if choosing treatment]. */
  risk: Interval;
  control: ArmSummary;
  treatment: ArmSummary;
  warnings: string[];
}

export interface SrmResult {
  chiSquare: number | null;
  dof: number | null;
  pValue: number | null;
  /** Expected count per arm (null for arms skipped because their weight is 0). */
  expected: (number | null)[];
  /** True when pValue < threshold; null when the test cannot be computed. */
  mismatch: boolean | null;
  threshold: number;
  warnings: string[];
}

/** 'holm': Holm–Bonferroni (family-wise error). 'bh': Benjamini–Hochberg (false discovery rate). */
export type CorrectionMethod = 'holm' | 'bh';

export interface AdjustedPValues {
  method: CorrectionMethod;
  /** In input order; null where the input was not a p-value in [0, 1]. */
  adjusted: (number | null)[];
  warnings: string[];
}
