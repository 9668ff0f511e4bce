// Owns the public surface of the statistics module (pure functions over sufficient statistics, no I/O).

export type { Analysis, MetricAnalysis, VariantAnalysis } from './analysis-schema.js';
export { type AnalysisInput, type AnalysisRollups, analyzeRollups } from './analyze.js';
export {
  countExposures,
  type FoldedMetric,
  foldArms,
  groupByMetric,
  type MetricKind,
  type MetricRollupRow,
  toArmData,
  unknownVariantKeys,
} from './arms.js';
export { bayesianCompare, normalRisk } from './bayesian.js';
export {
  type Cap,
  type CappedArm,
  type CappingArm,
  type CappingResult,
  capArms,
  percentileCap,
} from './capping.js';
export {
  type AnalysisMethod,
  type ArmComparison,
  BETTER_NEEDS_DIRECTION,
  type CompareOptions,
  compareArms,
  directionFlags,
  type ExactCheck,
  type ResolvedSided,
  resolveSided,
  type SidedOption,
  type TestMethod,
  type TestUsed,
} from './compare.js';
export { adjustPValues, type Correction, correctFamily } from './corrections.js';
export {
  type AdjustedArm,
  adjustedArmData,
  type CovariateMoments,
  type CupedResult,
  cupedAdjust,
} from './cuped.js';
export {
  chiSquareCdf,
  chiSquareQuantile,
  chiSquareSf,
  normalCdf,
  normalPdf,
  normalQuantile,
  studentTCdf,
  studentTPdf,
  studentTQuantile,
} from './distributions.js';
export { type EffectMoments, effectMoments } from './effect.js';
export { type Counts, fisherExact, SMALL_COUNT } from './exact.js';
export { fiellerLift } from './fieller.js';
export { compareMeans } from './frequentist.js';
export { type GuardrailResult, type GuardrailStatus, guardrailCheck } from './guardrail.js';
export { quantileLevel } from './metric-quantiles.js';
export { isProportion, isRatio, summarizeArm } from './moments.js';
export { DEFAULT_POWER, PLANNING_CONFIDENCE, type PowerInput, unitsForPower } from './power.js';
export { effectiveCounts, type ScoreScale, scoreInterval, scoreZ } from './score.js';
export {
  DEFAULT_N_STAR,
  ONE_SIDED_P_CAP,
  sequentialCompare,
  sequentialHalfWidth,
  sequentialPValue,
  sequentialR,
  sequentialRho,
} from './sequential.js';
export { DEFAULT_SRM_THRESHOLD, srmTest } from './srm.js';
export {
  srmAcrossVersions,
  type VersionExposure,
  type VersionedSrm,
  type VersionWeights,
} from './srm-versions.js';
export {
  cumulativeSeries,
  type HourlyCount,
  type HourlyRow,
  type HourlySketchRow,
  type HourlyUnitRow,
  type Series,
  type SeriesOptions,
  type SeriesPeriod,
  type SeriesVariant,
} from './timeseries.js';
export type * from './types.js';
export {
  decideVerdict,
  guardrailFailureOf,
  MIN_UNITS_PER_VARIANT,
  type Verdict,
  type VerdictInput,
  type VerdictMetric,
  type VerdictStatus,
  type VerdictVariant,
} from './verdict.js';
export type { UnitWord } from './wording.js';
