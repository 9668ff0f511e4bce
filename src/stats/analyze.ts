// Owns the analysis of an experiment as a pure function: its rollups (write-time sums) in, the answer of
// GET /experiment/:slug/analysis out (counts, sample-ratio check, per-metric comparisons, corrections and the
// verdict). No I/O: the service fetches the rollups and passes them here; test vectors pin the output.
import type { Analysis, MetricAnalysis, VariantAnalysis } from './analysis-schema.js';
import { countExposures, groupByMetric, type MetricRollupRow, unknownVariantKeys } from './arms.js';
import type { UserBinRow } from './capping-users.js';
import { directionFlags } from './compare.js';
import { type Correction, correctFamily, type Tested } from './corrections.js';
import { deriveArms, describeDerived } from './derived-arms.js';
import {
  analyseMetric,
  compareWith,
  comparisonFields,
  type MethodOptions,
  type MetricDeclaration,
  type MetricDraft,
} from './metric-analysis.js';
import { armsOf, type Unit, type UnitRollupRow } from './metric-arms.js';
import type { PairRowLike } from './metric-derived.js';
import type { SketchRowLike } from './metric-quantiles.js';
import { srmAcrossVersions, type VersionExposure, type VersionWeights } from './srm-versions.js';
import { decideVerdict, type VerdictMetric } from './verdict.js';

export interface AnalysisRollups {
  /** Assign calls per version and variant. */
  exposures: readonly VersionExposure[];
  /** Distinct users exposed per version and variant (sticky experiments); absent or empty: not counted. */
  exposureUsers?: readonly VersionExposure[];
  /** Results per version and variant key (keys that are not variants included). */
  results: readonly VersionExposure[];
  metrics: readonly MetricRollupRow[];
  units: readonly UnitRollupRow[];
  /** DDSketch bin counts of numeric values, per version, variant and metric (quantiles). */
  sketches?: ReadonlyArray<SketchRowLike & { metric: string; version: number }>;
  /** Ratios' and covariates' sums per variant, pair and unit (core/pairs.ts). */
  pairs?: readonly PairRowLike[];
  /**
   * Sticky experiments' users of capped metrics by bin (core/unit-bins.ts). Absent: caps are not applied
   * (a segment's reading: its values keep no users' bins).
   */
  unitBins?: ReadonlyArray<UserBinRow & { variantKey: string; metric: string }>;
}

export interface AnalysisExperiment {
  slug: string;
  assignment: 'sticky' | 'random';
  /** The variants of the version analysed (the current ones when pooled), in order: keys and weights. */
  variants: ReadonlyArray<{ key: string; trafficPercent: number }>;
  metrics: readonly MetricDeclaration[];
}

export interface AnalysisOptions extends MethodOptions {
  control: string;
  /** Absent: 'bh' across the secondary and undeclared metrics. Given: across every metric but guardrails. */
  correction?: Correction;
  /** null: every version pooled. */
  version: number | null;
  /** Which metrics (default: every metric with data). */
  metrics?: readonly string[];
}

export interface AnalysisInput {
  experiment: AnalysisExperiment;
  /** Every version's weights, for the sample-ratio check. */
  versions: readonly VersionWeights[];
  rollups: AnalysisRollups;
  options: AnalysisOptions;
}

/** The rollups already filtered to the versions analysed, and every metric name checked to have data. */
export function analyzeRollups(input: AnalysisInput): Analysis {
  const { experiment, rollups, options: o } = input;
  const keys = experiment.variants.map((v) => v.key);
  const warnings: string[] = [];
  const sticky = experiment.assignment === 'sticky';
  const srm = sampleRatio(rollups, input.versions, sticky, keys, warnings);

  const byMetric = groupByMetric(rollups.metrics);
  const unitsByMetric = groupByMetric(rollups.units);
  const sketchesByMetric = groupByMetric(rollups.sketches ?? []);
  const ratios = experiment.metrics.filter((m) => m.numerator !== undefined && m.denominator !== undefined);
  const names = o.metrics ?? [...new Set([...byMetric.keys(), ...ratios.map((m) => m.name)])].sort();
  const binsByMetric = groupByMetric(rollups.unitBins ?? []);
  const unknownVariants = unknownVariantKeys(rollups.metrics, keys);
  if (unknownVariants.length > 0) {
    warnings.push(
      `results for variant keys that are not variants are left out: ${unknownVariants.join(', ')}`,
    );
  }
  const declared = (name: string) => experiment.metrics.find((m) => m.name === name);
  const drafts = names.map((name) => {
    const definition = declared(name);
    const sketches = sketchesByMetric.get(name) ?? [];
    const derived = deriveArms(name, definition, {
      metric: () =>
        armsOf(name, byMetric.get(name) ?? [], unitsByMetric.get(name) ?? [], keys, sticky, warnings),
      pairs: rollups.pairs ?? [],
      sketches,
      unitBins: rollups.unitBins === undefined ? null : (binsByMetric.get(name) ?? []),
      keys,
      sticky,
      warnings,
    });
    const draft = analyseMetric(
      name,
      definition,
      derived.arms,
      keys,
      o.control,
      o,
      warnings,
      derived.sketches,
    );
    describeDerived(draft, derived, o);
    return draft;
  });
  // A metric without variation (a client's error flag while nothing fails) says so in its own entry
  // (noVariation), once, and adds nothing to the warnings.
  const undeclared = drafts.filter((d) => !declared(d.analysis.name) && !d.analysis.noVariation);
  if (undeclared.length > 0 && experiment.metrics.length > 0) {
    warnings.unshift(
      `no direction declared for ${undeclared.map((d) => d.analysis.name).join(', ')}: effects and intervals only, no chance to win`,
    );
  }
  const correction = correct(drafts, o);
  const metrics = drafts.map((d) => d.analysis);
  if (srm.mismatch) {
    warnings.push(
      `sample-ratio mismatch: ${srm.unit === 'user' ? 'users' : 'exposures'} do not match trafficPercent (p = ${srm.pValue}); check assignment before trusting effects`,
    );
  }
  const verdictMetrics = verdictInput(experiment.metrics, metrics, keys, o.control);
  const primary = verdictMetrics.find((m) => m.role === 'primary');
  const unit: Unit = sticky && metrics.every((m) => m.unit === 'user') ? 'user' : 'call';
  const primaryUnit = metrics.find((m) => m.name === primary?.name)?.unit ?? unit;
  const verdict = decideVerdict({
    metrics: verdictMetrics,
    srm,
    method: o.method,
    unit: primaryUnit === 'user' ? { one: 'user', other: 'users' } : { one: 'call', other: 'calls' },
  });
  const analysedVersions = [
    ...new Set([...rollups.exposures, ...rollups.metrics].map((r) => r.version)),
  ].sort((a, b) => a - b);
  return {
    slug: experiment.slug,
    control: o.control,
    method: o.method,
    alpha: o.alpha,
    sided: o.sided,
    correction,
    version: o.version,
    versions: o.version === null ? analysedVersions : [o.version],
    unit,
    exposures: countExposures(rollups.exposures, keys),
    // What was exposed, counted as it was randomized: the sample-ratio check's units, shown where exposures are.
    exposed: { unit: srm.unit, counts: { ...srm.counts } },
    results: countExposures(rollups.results, keys),
    srm,
    verdict,
    metrics,
    // Once each: a guardrail's check repeats its comparison's warnings (both compare the same arms).
    warnings: [...new Set(warnings)],
  };
}

/**
 * The randomized unit is what the split applies to: users in a sticky experiment (a user's repeat calls are
 * one unit), calls in a random one. Sticky experiments whose users were not counted (exposures from before
 * the counts existed: npm run rollups:rebuild) fall back to calls, with a warning; one with no exposures yet
 * has 0 users, not 0 calls.
 */
function sampleRatio(
  rollups: AnalysisRollups,
  versions: readonly VersionWeights[],
  sticky: boolean,
  keys: readonly string[],
  warnings: string[],
): Analysis['srm'] {
  const users = rollups.exposureUsers ?? [];
  const calls = rollups.exposures.reduce((a, e) => a + e.n, 0);
  const byUser = sticky && (users.length > 0 || calls === 0);
  if (sticky && !byUser && calls > 0) {
    warnings.push(
      'srm: users exposed were not counted for these exposures (run npm run rollups:rebuild); calls tested instead',
    );
  }
  const rows = byUser ? users : rollups.exposures;
  const { warnings: srmWarnings, ...srm } = srmAcrossVersions(rows, versions);
  warnings.push(...srmWarnings.map((w) => `srm: ${w}`));
  return { ...srm, unit: byUser ? 'user' : 'call', counts: countExposures(rows, keys) };
}

/**
 * Default: Benjamini–Hochberg across secondary and undeclared metrics (the scorecard's many readings), the
 * primary and guardrails as they are. Asked for (holm or bh): across every metric but guardrails.
 */
function correct(drafts: MetricDraft[], o: AnalysisOptions): Correction {
  const method = o.correction ?? 'bh';
  if (method === 'none') return 'none';
  const inFamily = (d: MetricDraft) =>
    !d.analysis.noVariation &&
    d.analysis.role !== 'guardrail' &&
    (o.correction !== undefined || d.analysis.role === 'secondary' || d.analysis.role === null);
  const members: Array<{ draft: MetricDraft; variant: VariantAnalysis }> = [];
  for (const draft of drafts.filter(inFamily)) {
    draft.analysis.corrected = true;
    for (const variant of draft.analysis.variants) if (variant.absolute) members.push({ draft, variant });
  }
  if (members.length === 0) return method;
  const family: Tested<ReturnType<typeof compareWith>>[] = members.map(({ draft, variant }) => ({
    pValue: variant.rawPValue ?? null,
    at: (alpha) => compareWith(draft, variant.key, alpha),
  }));
  const corrected = correctFamily(family, { method, alpha: o.alpha });
  corrected.forEach((c, i) => {
    const { draft, variant } = members[i]!;
    const raw = variant.rawPValue ?? null;
    // The intervals (and Bayesian read-outs) are recomputed at the adjusted level; every p-value field keeps
    // its meaning: pValue decides (adjusted), rawPValue and the scales' p-values are before the correction.
    if (c.comparison) {
      const { pValue: _p, absolute, relative, ...fields } = comparisonFields(c.comparison);
      Object.assign(variant, fields);
      if (absolute && variant.absolute) variant.absolute = { ...absolute, pValue: variant.absolute.pValue };
      if (relative && variant.relative) variant.relative = { ...relative, pValue: variant.relative.pValue };
    }
    variant.pValue = c.adjustedPValue;
    variant.rawPValue = raw;
    variant.significant = c.significant;
    const estimate = variant.absolute?.estimate ?? null;
    if (draft.analysis.direction !== null || variant.better !== undefined) {
      Object.assign(variant, directionFlags(c.significant, estimate, draft.options.direction));
    }
  });
  return method;
}

/** The declared metrics as the verdict reads them; a declared metric without data has n = 0 everywhere. */
function verdictInput(
  definitions: readonly MetricDeclaration[],
  metrics: readonly MetricAnalysis[],
  keys: readonly string[],
  control: string,
): VerdictMetric[] {
  return definitions.map((d): VerdictMetric => {
    const m = metrics.find((x) => x.name === d.name);
    return {
      name: d.name,
      role: d.role,
      direction: d.direction,
      kind: m?.kind === 'proportion' ? 'proportion' : m ? 'mean' : (d.kind ?? 'mean'),
      control,
      mde: d.minimumDetectableEffect ?? null,
      variants: m
        ? m.variants.map((v) => ({
            key: v.key,
            n: v.n,
            comparison:
              v.absolute && v.relative
                ? {
                    absolute: v.absolute as never,
                    relative: v.relative as never,
                    pValue: v.pValue ?? null,
                    rawPValue: v.rawPValue ?? null,
                    corrected: m.corrected,
                    test: v.test ?? null,
                    chanceToWin: v.chanceToWin ?? null,
                    better: v.better ?? null,
                    worse: v.worse ?? null,
                  }
                : null,
            guardrail: (v.guardrail as never) ?? null,
            moreUnits: v.moreUnits ?? null,
          }))
        : keys.map((key) => ({ key, n: 0 })),
    };
  });
}
