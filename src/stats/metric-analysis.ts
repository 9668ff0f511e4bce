// Owns one metric's reading: each treatment compared with the control under the chosen method (in the
// metric's direction), guardrails against their threshold, the units still needed, and constant metrics.
import type { MetricAnalysis, VariantAnalysis } from './analysis-schema.js';
import type { Cap } from './capping.js';
import { type AnalysisMethod, type ArmComparison, compareArms, type SidedOption } from './compare.js';
import { guardrailCheck } from './guardrail.js';
import { type Arms, labelOf } from './metric-arms.js';
import {
  binsByVariant,
  quantileArms,
  quantileLevel,
  quantilesOf,
  type SketchRowLike,
} from './metric-quantiles.js';
import { summarizeArm } from './moments.js';
import { unitsForPower } from './power.js';
import type { ArmData, Direction, MetricRole, Sided } from './types.js';

/** What an experiment declares about a metric (core/metric-definitions.ts), as the analysis reads it. */
export interface MetricDeclaration {
  name: string;
  direction: Direction;
  role: MetricRole;
  kind?: 'mean' | 'proportion';
  minimumDetectableEffect?: number;
  threshold?: number;
  statistic?: string;
  /** A ratio metric's parts, a cap, a covariate (core/metric-definitions.ts; metric-derived.ts reads them). */
  numerator?: string;
  denominator?: string;
  cap?: Cap;
  covariate?: string;
}

export interface MethodOptions {
  method: AnalysisMethod;
  alpha: number;
  sided: SidedOption;
  nStar?: number;
}

/** A metric being analysed: its answer, plus the arms a correction needs to recompute intervals. */
export interface MetricDraft {
  analysis: MetricAnalysis;
  arms: Arms;
  control: string;
  /** The comparisons' options, so that a correction can recompute them at its adjusted level. */
  options: MethodOptions & { direction: Direction | null; kind: Arms['kind'] };
}

/** Every arm with data has no spread and they all share one value: nothing to compare. */
function noVariation(arms: Arms, keys: readonly string[]): boolean {
  const summaries = keys.map((k) => summarizeArm(arms.data.get(k)!)).filter((s) => (s.n ?? 0) > 0);
  if (summaries.length < 2) return false;
  const first = summaries[0]!.mean;
  return summaries.every((s) => s.stdDev === 0 && s.mean === first);
}

/** The comparison of a treatment, as the answer carries it (warnings go to the analysis). */
export function comparisonFields(c: ArmComparison): Partial<VariantAnalysis> {
  const { warnings: _w, sided: _s, direction: _d, ...fields } = c;
  return fields as Partial<VariantAnalysis>;
}

export function compareWith(draft: MetricDraft, key: string, alpha: number): ArmComparison {
  const { options } = draft;
  return compareArms(
    draft.arms.data.get(draft.control)! as ArmData,
    draft.arms.data.get(key)! as ArmData,
    {
      ...options,
      alpha,
    } as Parameters<typeof compareArms>[2],
  );
}

export function analyseMetric(
  name: string,
  definition: MetricDeclaration | undefined,
  arms: Arms,
  keys: readonly string[],
  control: string,
  o: MethodOptions,
  warnings: string[],
  sketches: readonly SketchRowLike[] = [],
): MetricDraft {
  const direction = definition?.direction ?? null;
  const role = definition?.role ?? null;
  const mde = definition?.minimumDetectableEffect ?? null;
  if (definition?.kind !== undefined && definition.kind !== arms.kind) {
    warnings.push(`${name}: declared as a ${definition.kind} but its values are analysed as a ${arms.kind}`);
  }
  const bins = arms.kind === 'mean' ? binsByVariant(sketches, keys) : null;
  let statistic = definition?.statistic ?? 'mean';
  const level = quantileLevel(statistic);
  if (level !== null && bins === null) {
    warnings.push(`${name}: ${statistic} needs numeric values; its mean (share of true) is compared`);
    statistic = 'mean';
  }
  // The comparison reads the quantile's arms; the variants still show their means and spread.
  const compared: Arms =
    level !== null && bins !== null
      ? { ...arms, data: new Map(quantileArms(name, bins, level, arms, warnings)) }
      : arms;
  const draft: MetricDraft = {
    arms: compared,
    control,
    options: { ...o, direction, kind: arms.kind },
    analysis: {
      name,
      kind: arms.kind,
      direction,
      role,
      unit: arms.unit,
      sided: o.sided === 'better' ? 'two' : o.sided,
      minimumDetectableEffect: mde,
      statistic,
      threshold: role === 'guardrail' ? (definition?.threshold ?? 0) : null,
      label: labelOf(arms.kind, statistic, arms.unit),
      noVariation: noVariation(arms, keys),
      corrected: false,
      variants: [],
    },
  };
  const controlData = compared.data.get(control)!;
  const controlSummary = summarizeArm(controlData);
  draft.analysis.variants = keys.map((key): VariantAnalysis => {
    const data = compared.data.get(key)!;
    const summary = summarizeArm(arms.data.get(key)!);
    const base: VariantAnalysis = { key, n: arms.n.get(key)!, mean: summary.mean, stdDev: summary.stdDev };
    if (bins !== null) base.quantiles = quantilesOf(bins.get(key)!, arms.extremes.get(key));
    if (key === control || draft.analysis.noVariation) return base;
    const comparison = compareWith(draft, key, o.alpha);
    draft.analysis.sided = comparison.sided as Sided;
    warnings.push(...comparison.warnings.map((w) => `${name}/${key}: ${w}`));
    const out: VariantAnalysis = {
      ...base,
      ...comparisonFields(comparison),
      rawPValue: comparison.pValue,
    };
    if (role === 'guardrail') {
      const g = guardrailCheck(controlData, data, {
        method: o.method,
        alpha: o.alpha,
        direction,
        threshold: definition?.threshold ?? 0,
        kind: arms.kind,
        nStar: o.nStar,
      });
      warnings.push(...g.warnings.map((w) => `${name}/${key}: ${w}`));
      const { warnings: _w, ...guardrail } = g;
      out.guardrail = guardrail;
    }
    // Not yet significant: how many more units the declared effect needs at 80% power, planned on the
    // control's variance and mean at their confidence bounds (both are estimates from the units so far).
    if (mde !== null && !comparison.significant) {
      const needed = unitsForPower({
        variance: controlSummary.variance,
        controlMean: controlSummary.mean,
        units: controlSummary.n,
        kind: arms.kind,
        mde,
        alpha: o.alpha,
        sided: comparison.sided,
        method: o.method,
        nStar: o.nStar,
      });
      out.moreUnits = needed === null ? null : Math.max(0, needed - Math.min(base.n, arms.n.get(control)!));
    }
    return out;
  });
  return draft;
}
