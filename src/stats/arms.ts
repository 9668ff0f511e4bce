// Owns arm folding: a metric's rollup rows (per version, variant and kind) summed into one arm per variant.
import type { ArmData, Moments } from './types.js';

/** 'mean' for numeric values; 'proportion' for true/false values, whose sum counts the trues. */
export type MetricKind = 'mean' | 'proportion';

/** One rollup row: the sufficient statistics of one metric's values of one kind, in one version and variant. */
export interface MetricRollupRow {
  version: number;
  variantKey: string;
  metric: string;
  kind: MetricKind;
  n: number;
  sum: number;
  sumSquares: number;
  /**
   * The smallest and largest value counted (numeric rows; quantiles are read within them). null: unknown
   * (counted before migration 017, until npm run rollups:rebuild). Absent: the caller keeps none.
   */
  minValue?: number | null;
  maxValue?: number | null;
}

export interface FoldedMetric {
  kind: MetricKind;
  /** One arm per variant key, in the order given; a variant without rows has n = 0. */
  arms: Map<string, Moments>;
  warnings: string[];
}

/**
 * A metric logged both as numbers and as true/false cannot be analysed as both: the kind with more
 * values wins (mean on a tie) and the other kind's rows are left out, with a warning. Rows of variant
 * keys that are not among `variantKeys` (results logged under a wrong key) are left out too.
 */
export function foldArms(rows: readonly MetricRollupRow[], variantKeys: readonly string[]): FoldedMetric {
  const count = (kind: MetricKind) => rows.filter((m) => m.kind === kind).reduce((a, m) => a + m.n, 0);
  const kind: MetricKind = count('mean') >= count('proportion') ? 'mean' : 'proportion';
  const warnings: string[] = [];
  if (count('mean') > 0 && count('proportion') > 0) {
    warnings.push(`has both numbers and true/false values; analysed as a ${kind}, the others ignored`);
  }
  const arms = new Map<string, Moments>(variantKeys.map((k) => [k, { n: 0, sum: 0, sumSquares: 0 }]));
  for (const m of rows) {
    const arm = arms.get(m.variantKey);
    if (!arm || m.kind !== kind) continue;
    arm.n += m.n;
    arm.sum += m.sum;
    arm.sumSquares += m.sumSquares;
  }
  return { kind, arms, warnings };
}

/** A folded arm as the comparisons take it: a proportion's sum is its count of successes. */
export function toArmData(kind: MetricKind, arm: Moments): ArmData {
  return kind === 'proportion' ? { n: arm.n, successes: arm.sum } : arm;
}

/** Rows grouped by metric name in one pass, so the work stays linear however many metrics there are. */
export function groupByMetric<T extends { metric: string }>(rows: readonly T[]): Map<string, T[]> {
  const byMetric = new Map<string, T[]>();
  for (const m of rows) {
    const group = byMetric.get(m.metric);
    if (group) group.push(m);
    else byMetric.set(m.metric, [m]);
  }
  return byMetric;
}

/** The variant keys of `rows` that are not variants, once each, in order of first appearance. */
export function unknownVariantKeys(
  rows: ReadonlyArray<{ variantKey: string }>,
  variantKeys: readonly string[],
): string[] {
  const known = new Set(variantKeys);
  return [...new Set(rows.map((m) => m.variantKey).filter((k) => !known.has(k)))];
}

/** Exposures per variant (0 for a variant without any); keys that are not variants are not counted. */
export function countExposures(
  exposures: ReadonlyArray<{ variantKey: string; n: number }>,
  variantKeys: readonly string[],
): Record<string, number> {
  const counts = Object.fromEntries(variantKeys.map((k) => [k, 0]));
  for (const e of exposures) {
    if (Object.hasOwn(counts, e.variantKey)) counts[e.variantKey]! += e.n;
  }
  return counts;
}
