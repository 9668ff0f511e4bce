// Owns what a metric's definition derives before the comparison (ADR 0035): a ratio's arms instead of the
// metric's own, then a cap, then an adjustment on a covariate; and, after it, what the answer says about
// them (the ratio's parts, the cap used and what it capped, the adjustment and the unadjusted effects).
import type { MetricAnalysis, VariantAnalysis } from './analysis-schema.js';
import type { UserBinRow } from './capping-users.js';
import { compareArms } from './compare.js';
import {
  comparisonFields,
  type MethodOptions,
  type MetricDeclaration,
  type MetricDraft,
} from './metric-analysis.js';
import type { Arms } from './metric-arms.js';
import {
  type AdjustmentReport,
  adjustedArms,
  type CapReport,
  cappedArms,
  type PairRowLike,
  ratioArms,
} from './metric-derived.js';
import type { SketchRowLike } from './metric-quantiles.js';
import { summarizeArm } from './moments.js';
import type { ArmData } from './types.js';

export interface DeriveInput {
  /** The metric's own arms (armsOf), read only when no ratio replaces them. */
  metric: () => Arms;
  pairs: readonly PairRowLike[];
  sketches: readonly SketchRowLike[];
  /** null: caps are not applied here (segments), with a warning. */
  unitBins: ReadonlyArray<UserBinRow & { variantKey: string }> | null;
  keys: readonly string[];
  sticky: boolean;
  warnings: string[];
}

export interface Derived {
  arms: Arms;
  /** The sketches the quantiles read (none for a ratio: its values are not logged). */
  sketches: readonly SketchRowLike[];
  ratio: { numerator: string; denominator: string } | null;
  cap: CapReport | null;
  adjustment: AdjustmentReport | null;
  /** The arms before the adjustment, when one was made. */
  unadjusted: Arms | null;
}

export function deriveArms(name: string, d: MetricDeclaration | undefined, input: DeriveInput): Derived {
  const { keys, warnings } = input;
  const ratio =
    d?.numerator !== undefined && d.denominator !== undefined
      ? { numerator: d.numerator, denominator: d.denominator }
      : null;
  let arms = ratio ? ratioArms(name, ratio, input.pairs, keys, input.sticky, warnings) : input.metric();
  let cap: CapReport | null = null;
  if (d?.cap !== undefined && !ratio && input.unitBins === null) {
    warnings.push(`${name}: not capped within a segment (the cap applies to the whole analysis)`);
  } else if (d?.cap !== undefined && !ratio) {
    const capped = cappedArms(name, arms, d.cap, keys, input.sketches, input.unitBins ?? [], warnings);
    arms = capped.arms;
    cap = capped.report;
  }
  let adjustment: AdjustmentReport | null = null;
  let unadjusted: Arms | null = null;
  if (d?.covariate !== undefined && !ratio && d.cap === undefined) {
    const adjusted = adjustedArms(name, arms, d.covariate, input.pairs, keys, warnings);
    adjustment = adjusted.report;
    if (adjusted.arms) {
      unadjusted = arms;
      arms = adjusted.arms;
    }
  }
  return { arms, sketches: ratio ? [] : input.sketches, ratio, cap, adjustment, unadjusted };
}

/** Adds what was derived to the metric's answer (after analyseMetric). */
export function describeDerived(draft: MetricDraft, derived: Derived, o: MethodOptions): void {
  const m: MetricAnalysis = draft.analysis;
  if (derived.ratio) {
    m.ratio = derived.ratio;
    m.label = `${derived.ratio.numerator} per ${derived.ratio.denominator}${m.unit === 'user' ? ', users as units' : ', calls as units'}`;
    for (const v of m.variants) delete v.quantiles;
  }
  if (derived.cap) {
    const { variants, ...cap } = derived.cap;
    m.cap = cap;
    // Four significant digits, as the dashboard shows means: the percentile's value is an estimate (within ~2%).
    if (cap.value !== null) m.label += `, capped at ${Number(cap.value.toPrecision(4))}`;
    for (const v of m.variants) v.capped = variants.get(v.key) ?? { units: null, share: null };
  }
  if (derived.adjustment) {
    m.adjustment = derived.adjustment;
    if (derived.adjustment.adjusted) m.label += `, adjusted on ${derived.adjustment.covariate}`;
  }
  const before = derived.unadjusted;
  if (!before) return;
  const control = before.data.get(draft.control)! as ArmData;
  for (const v of m.variants) {
    const arm = before.data.get(v.key)! as ArmData;
    const mean = summarizeArm(arm).mean;
    if (v.key === draft.control || m.noVariation) {
      v.unadjusted = { mean };
      continue;
    }
    const c = compareArms(control, arm, {
      method: o.method,
      alpha: o.alpha,
      sided: o.sided,
      nStar: o.nStar,
      direction: draft.options.direction,
      kind: draft.options.kind,
    } as Parameters<typeof compareArms>[2]);
    const { absolute, relative, pValue, test } = comparisonFields(c) as VariantAnalysis;
    v.unadjusted = { mean, absolute, relative, pValue, test };
  }
}
