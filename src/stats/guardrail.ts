// Owns guardrails: a metric that must not get worse by more than a tolerated relative change (its
// threshold), judged by where the effect's interval lies against that threshold.

import type { MetricKind } from './arms.js';
import { type AnalysisMethod, compareArms, type TestUsed } from './compare.js';
import type { ArmData, Direction, EffectEstimate } from './types.js';

export type GuardrailStatus = 'passed' | 'failed' | 'inconclusive';

export interface GuardrailOptions {
  method: AnalysisMethod;
  alpha: number;
  /** Which way the metric is better; without one nothing can be judged. */
  direction: Direction | null;
  /** The tolerated change in the worse direction, relative (0.05: at most 5% worse). */
  threshold: number;
  kind?: MetricKind;
  nStar?: number;
}

export interface GuardrailResult {
  /**
   * failed: the whole interval lies beyond the threshold on the worse side; passed: the whole interval lies
   * within it; inconclusive: neither (or the lift cannot be computed).
   */
  status: GuardrailStatus;
  threshold: number;
  /** The interval's worse end, as a relative change (signed: -0.079 is 7.9% lower); null when unknown. */
  bound: number | null;
  /** The effects with the guardrail's interval: two-sided at level 1 − 2·alpha, so each end is a one-sided test at alpha. */
  absolute: EffectEstimate;
  relative: EffectEstimate;
  /** The test whose interval this is (its level 1 − 2·alpha; 1 for a difference known exactly). */
  test: TestUsed;
  warnings: string[];
}

export const GUARDRAIL_NEEDS_DIRECTION = 'a guardrail needs a declared direction; it cannot pass or fail';

/**
 * Each end of a two-sided 1 − 2α interval is a one-sided bound at level α: "passed" is the non-inferiority
 * test (worse end within the threshold) and "failed" the inferiority test (better end beyond it), each at α,
 * the level of a one-sided harm test. Threshold 0 makes "failed" today's significant-harm test.
 */
export function guardrailCheck(control: ArmData, treatment: ArmData, o: GuardrailOptions): GuardrailResult {
  const level = Math.min(2 * o.alpha, 0.5);
  const r = compareArms(control, treatment, {
    method: o.method,
    alpha: level,
    sided: 'two',
    direction: o.direction,
    nStar: o.nStar,
    ...(o.kind ? { kind: o.kind } : {}),
  });
  const base = { threshold: o.threshold, absolute: r.absolute, relative: r.relative, test: r.test };
  const warnings = [...r.warnings];
  if (o.direction !== 'increase' && o.direction !== 'decrease') {
    return {
      ...base,
      status: 'inconclusive',
      bound: null,
      warnings: [GUARDRAIL_NEEDS_DIRECTION, ...warnings],
    };
  }
  const [lo, hi] = r.relative.ci;
  if (lo === null || hi === null) {
    return { ...base, status: 'inconclusive', bound: null, warnings };
  }
  // Read in "better" units: for a metric that should decrease, a rise is the loss.
  const worseEnd = o.direction === 'increase' ? lo : hi;
  const betterEnd = o.direction === 'increase' ? hi : lo;
  const loss = (x: number) => (o.direction === 'increase' ? -x : x);
  // A difference known exactly (no spread in either arm) passes when its loss is at most the threshold.
  const within = r.test.method === 'known' ? loss(worseEnd) <= o.threshold : loss(worseEnd) < o.threshold;
  const status: GuardrailStatus =
    loss(betterEnd) > o.threshold ? 'failed' : within ? 'passed' : 'inconclusive';
  return { ...base, status, bound: worseEnd, warnings };
}
