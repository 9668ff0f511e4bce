// The answers and inputs of the management and reading calls (createExperiment, getExperiment,
// updateExperiment, analysis): the server's own shapes (its OpenAPI document at /openapi.json).
import type { EntryReason, Layer, Override } from './entry.js';
import type { JsonObject } from './types.js';

export type { EntryReason, Layer, Override } from './entry.js';

/**
 * Who enters (ADR 0038), on create and update; every field optional. Targeting, coverage and layer make a
 * new version (the population changed); overrides and defaultVariant do not.
 */
export interface EntryRules {
  /** A GrowthBook condition on the assign's context (plus userId), or null: everyone. */
  targeting?: JsonObject | null;
  /** 0-100: the share of targeted units that enter (default 100). */
  coverage?: number;
  /** A layer and this experiment's range of it; two running experiments of a layer may not overlap. */
  layer?: Layer | null;
  /** At most 50 entries, 10,000 ids in all; the first that holds the id or matches serves its variant. */
  overrides?: Override[];
  /** What units that do not enter get: a variant key, or null for the first variant. */
  defaultVariant?: string | null;
}

export interface Variant {
  /** A-Z a-z 0-9 . _ -, 1-64 characters, unique in the experiment. */
  key: string;
  payload: JsonObject;
  /** Share of traffic in [0, 100]; all variants sum to 100. */
  trafficPercent: number;
}

export interface MetricDefinition {
  name: string;
  /** Which way is better. */
  direction: 'increase' | 'decrease';
  role?: 'primary' | 'secondary' | 'guardrail';
  kind?: 'mean' | 'proportion';
  minimumDetectableEffect?: number;
  threshold?: number;
  statistic?: 'mean' | 'p50' | 'p90' | 'p95' | 'p99';
  /**
   * A ratio metric (with `denominator`): `name` is not logged; it is Σ numerator / Σ denominator over each
   * unit's values (a user's in sticky experiments, a call's otherwise), by the delta method.
   */
  numerator?: string;
  denominator?: string;
  /**
   * Heavy tails: a unit's mean per call above the cap counts as the cap; a fixed value, or a percentile in
   * (0, 100) of the units pooled over the variants.
   */
  cap?: { value: number } | { percentile: number };
  /** Regression adjustment (CUPED) on a metric the treatment cannot change, e.g. input_tokens. */
  covariate?: string;
}

export type ExperimentStatus = 'draft' | 'running' | 'paused' | 'completed' | 'released' | 'archived';

export interface Experiment extends EntryRules {
  slug: string;
  name: string;
  description: string;
  status: ExperimentStatus;
  /** true exactly when status is 'running'. */
  active: boolean;
  assignment: 'random' | 'sticky';
  seed: string;
  variants: Variant[];
  /** The declared metrics ([] when none). */
  metrics: MetricDefinition[];
  /** What the guardrail monitor does when a guardrail fails: record it ('notify') or also pause. */
  guardrailAction: 'notify' | 'pause';
  /** Units each variant needs on every guardrail before the monitor judges. */
  minimumUnits: number;
  /** What was decided when it completed: the variant's key that shipped or 'none', why, when; null if none. */
  decision: ExperimentDecision | null;
  /** While 'released' (a rollout completed): the variant everyone who enters gets; else null. Absent from older servers. */
  releasedVariant?: string | null;
  /** Bumped whenever the variants change. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** POST /experiments: a slug and the variants; the rest has defaults (status draft, assignment random). */
export interface CreateExperimentFields extends EntryRules {
  slug: string;
  variants: Variant[];
  name?: string;
  description?: string;
  status?: ExperimentStatus;
  assignment?: 'random' | 'sticky';
  seed?: string;
  metrics?: MetricDefinition[];
  guardrailAction?: 'notify' | 'pause';
  minimumUnits?: number;
}

/** PATCH /experiment/:slug: what changes. */
export interface UpdateExperimentFields extends EntryRules {
  status?: ExperimentStatus;
  variants?: Variant[];
  metrics?: MetricDefinition[];
  name?: string;
  description?: string;
  guardrailAction?: 'notify' | 'pause';
  minimumUnits?: number;
  /** Only with status 'completed' (or on a completed experiment; null removes it). */
  decision?: { variant: string; note?: string } | null;
}

export interface ExperimentDecision {
  variant: string;
  note: string;
  decidedAt: string;
}

/** GET /experiment/:slug/analysis's options; absent: the server's defaults. */
export interface AnalysisParams {
  control?: string;
  /** Metric names (an array, or comma-separated). Default: every metric with data. */
  metrics?: string[] | string;
  alpha?: number;
  method?: 'frequentist' | 'bayesian' | 'sequential';
  sided?: 'two' | 'greater' | 'less' | 'better';
  correction?: 'none' | 'holm' | 'bh';
  /** Only data of this version of the variants. Default: every version, pooled. */
  version?: number;
  /** method=sequential: the sample size at which the confidence sequence is tightest. */
  nStar?: number;
}

export interface Verdict {
  /** winner, no-winner-yet, guardrail-failed, sample-ratio-mismatch or not-enough-data. */
  status: string;
  /** The winner, or the variant that failed a guardrail. */
  variant?: string;
  /** The primary metric, or the guardrail that failed. */
  metric?: string;
  /** One plain sentence: what to do and how sure to be. */
  summary: string;
}

export interface Effect {
  estimate: number | null;
  /** [lower, upper] at 1 − alpha; a bound a one-sided test does not have is null. */
  ci: [number | null, number | null];
  stdError: number | null;
  pValue: number | null;
}

export interface VariantAnalysis {
  key: string;
  n: number;
  mean: number | null;
  stdDev: number | null;
  /** Treatments only (absent for the control). */
  absolute?: Effect;
  relative?: Effect;
  /** The p-value that decides (significant ⟺ pValue < alpha): after the correction when one covers the metric. */
  pValue?: number | null;
  /** The same test's p-value before any correction. */
  rawPValue?: number | null;
  /** The test behind pValue and both intervals: method ('welch', 'score', 'sequence', …) and level. */
  test?: { method: string; level: number };
  /** Proportions with few events: Fisher's exact p beside the score test. */
  exact?: { fisherPValue: number } | null;
  significant?: boolean;
  better?: boolean | null;
  worse?: boolean | null;
  chanceToWin?: number | null;
  risk?: [number | null, number | null];
  guardrail?: {
    status: 'passed' | 'failed' | 'inconclusive';
    threshold: number;
    bound: number | null;
    absolute: Effect;
    relative: Effect;
  };
  quantiles?: { p50: number | null; p90: number | null; p95: number | null; p99: number | null };
  moreUnits?: number | null;
  /** With a cap: the units of this variant above it. */
  capped?: { units: number | null; share: number | null };
  /** With a covariate: the reading before the adjustment (the fields above are the adjusted ones). */
  unadjusted?: {
    mean: number | null;
    /** Treatments only. */
    absolute?: Effect;
    relative?: Effect;
    pValue?: number | null;
    test?: { method: string; level: number };
  };
}

/** What a cap did: the value used, the percentile declared (null: a fixed value), the units it capped. */
export interface CapAnalysis {
  value: number | null;
  percentile: number | null;
  /** Units above the cap, all variants (a straddling bin's users count in part). */
  units: number | null;
  share: number | null;
}

/** A regression adjustment (CUPED): the variants' means, effects and p-values are the adjusted ones. */
export interface AdjustmentAnalysis {
  covariate: string;
  /** false: too few units, or no covariance; the readings are then the unadjusted ones. */
  adjusted: boolean;
  theta: number | null;
  covariateMean: number | null;
  /** 1 − adjusted / unadjusted variance of a difference between variants. */
  varianceReduction: number | null;
}

export interface MetricAnalysis {
  name: string;
  kind: string;
  direction: string | null;
  role: string | null;
  unit: string;
  sided: string;
  minimumDetectableEffect: number | null;
  statistic: string;
  threshold: number | null;
  label: string;
  noVariation: boolean;
  corrected: boolean;
  /** A ratio metric's parts. */
  ratio?: { numerator: string; denominator: string };
  cap?: CapAnalysis;
  adjustment?: AdjustmentAnalysis;
  variants: VariantAnalysis[];
}

/** The analysis, its verdict first. */
export interface Analysis {
  verdict: Verdict;
  slug: string;
  control: string;
  method: string;
  alpha: number;
  sided: string;
  correction: string;
  version: number | null;
  versions: number[];
  unit: string;
  results: Record<string, number>;
  /** Assign calls per variant, a user's repeats included. */
  exposures: Record<string, number>;
  /** The exposures in the unit randomized: distinct users (sticky experiments) or calls (random ones). */
  exposed: { unit: 'user' | 'call'; counts: Record<string, number> };
  srm: {
    chiSquare: number | null;
    pValue: number | null;
    mismatch: boolean;
    unit: 'user' | 'call';
    counts: Record<string, number>;
  };
  metrics: MetricAnalysis[];
  warnings: string[];
}

/** A saved group without its values (GET /groups lists these). */
export interface SavedGroupSummary {
  key: string;
  description: string;
  /** How many values (duplicates dropped). */
  size: number;
  /** Slugs of the non-archived experiments whose targeting or overrides name the group. */
  usedBy: string[];
  createdAt: string;
  updatedAt: string;
}

/** A saved group: a named list of ids that conditions test with `$inGroup` / `$notInGroup`. */
export interface SavedGroup extends SavedGroupSummary {
  /** Up to 100,000 strings or numbers, in the order first sent ("7" is not 7). */
  values: Array<string | number>;
}

/** PUT /groups/:key's body. */
export interface SaveGroupFields {
  values: Array<string | number>;
  description?: string;
}

/** GET /layers/:key: the experiments using the layer and the ranges still free. */
export interface LayerInfo {
  key: string;
  experiments: Array<{
    slug: string;
    status?: ExperimentStatus;
    range: [number, number];
    [field: string]: unknown;
  }>;
  [field: string]: unknown;
}

/** POST /experiment/:slug/preview: what assign would answer `userId` with `context`, recording nothing. */
export interface Preview {
  variant: string;
  payload: JsonObject;
  inExperiment: boolean;
  /** Why the unit would not enter; null when it would. */
  reason: EntryReason | null;
  /** The experiment's status: only a running or released experiment serves assign. */
  status: ExperimentStatus;
  /** The deciding clause, e.g. `targeting: \`plan\` is "free", rule wants {"$in":["pro","team"]}`. */
  explanation: string;
}
