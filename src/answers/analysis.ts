// The answer of GET /experiment/:slug/analysis as its text readers take it (agentsplit analyze, MCP's
// get_analysis). These follow src/stats/analysis-schema.ts; fields a server may not send yet (quantiles) are optional.

export type Num = number | null;

export interface Effect {
  estimate: Num;
  ci: [Num, Num];
  stdError: Num;
  pValue: Num;
}

export interface Guardrail {
  status: 'passed' | 'failed' | 'inconclusive';
  /** The relative loss tolerated. */
  threshold: number;
  /** The interval's worse end as a relative change (-0.079: 7.9% lower). */
  bound: Num;
  absolute: Effect;
  relative: Effect;
  /** The test of the guardrail's interval (level 1 − 2·alpha); absent from older servers. */
  test?: Test;
}

/** The test that decided and produced a comparison's intervals, and their level. */
export interface Test {
  method: string;
  level: number;
}

export interface VariantAnalysis {
  key: string;
  n: number;
  mean: Num;
  stdDev: Num;
  absolute?: Effect;
  relative?: Effect;
  /** The p-value that decides: after the correction when one covers the metric (`corrected`). */
  pValue?: Num;
  /** Before the correction (older servers: absent). */
  rawPValue?: Num;
  /** The test behind pValue and both intervals (older servers: absent). */
  test?: Test;
  /** Proportions with few events: Fisher's exact p beside the score test. */
  exact?: { fisherPValue: number } | null;
  chanceToWin?: Num;
  risk?: [Num, Num];
  better?: boolean | null;
  worse?: boolean | null;
  guardrail?: Guardrail;
  quantiles?: { p50: Num; p90: Num; p95: Num; p99: Num };
  moreUnits?: Num;
  significant?: boolean;
  /** With a cap: what it capped in this variant. */
  capped?: { units: Num; share: Num };
  /** With a covariate: the reading before the adjustment (effects for treatments only). */
  unadjusted?: {
    mean: Num;
    absolute?: Effect;
    relative?: Effect;
    pValue?: Num;
    test?: Test;
  };
}

/** A cap as answered: the value used, the percentile declared (null: a fixed value), the units it capped. */
export interface Cap {
  value: Num;
  percentile: Num;
  units: Num;
  share: Num;
}

/** A regression adjustment (CUPED) as answered: variants' readings are the adjusted ones. */
export interface Adjustment {
  covariate: string;
  adjusted: boolean;
  theta: Num;
  covariateMean: Num;
  varianceReduction: Num;
}

export interface MetricAnalysis {
  name: string;
  kind: string;
  direction: string | null;
  role: string | null;
  unit: string;
  sided: string;
  minimumDetectableEffect: Num;
  /** mean, or p50/p90/p95/p99: what is compared. */
  statistic?: string;
  /** Guardrails: the relative loss tolerated; null otherwise. */
  threshold?: Num;
  /** What each variant's number is, in words: 'mean per call, users as units'. */
  label?: string;
  /** Every value the same everywhere: nothing to compare. */
  noVariation?: boolean;
  /** In the correction's family. */
  corrected?: boolean;
  /** A ratio metric: Σ numerator / Σ denominator over each unit. */
  ratio?: { numerator: string; denominator: string };
  cap?: Cap;
  adjustment?: Adjustment;
  variants: VariantAnalysis[];
}

export interface Analysis {
  slug: string;
  control: string;
  method: string;
  alpha: number;
  sided: string;
  correction: string;
  version: number | null;
  versions: number[];
  unit: string;
  verdict: { status: string; variant?: string; metric?: string; summary: string };
  results?: Record<string, number>;
  /** Assign calls per variant, a user's repeats included. */
  exposures: Record<string, number>;
  /** Exposures in the unit of the randomization (users in sticky experiments); absent from older servers. */
  exposed?: { unit: 'user' | 'call'; counts: Record<string, number> };
  srm: {
    chiSquare: Num;
    pValue: Num;
    mismatch: boolean;
    /** What was counted: users (sticky experiments) or assign calls; absent from older servers (calls). */
    unit?: 'user' | 'call';
    counts?: Record<string, number>;
  };
  metrics: MetricAnalysis[];
  warnings: string[];
}
