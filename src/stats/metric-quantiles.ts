// Owns a metric's quantiles in the analysis: each variant's p50/p90/p95/p99 from its write-time sketch bins,
// read within the variant's observed min and max, and, for a metric declared with `statistic: pNN`, the arms
// that compare that quantile (quantiles.ts).

import type { MetricRollupRow } from './arms.js';
import { effectiveUnits, type QuantileArm, quantileArm, quantileSummary } from './quantiles.js';
import type { SketchBin, SketchSide } from './sketch.js';
import type { Extremes } from './sketch-layout.js';

export type { Extremes };

/** One bin of one variant's sketch of a metric (versions already chosen). */
export interface SketchRowLike {
  variantKey: string;
  side: SketchSide;
  key: number;
  count: number;
}

export type Quantiles = { p50: number | null; p90: number | null; p95: number | null; p99: number | null };

/** The bins of each variant, in the variants' order (a variant without values has none). */
export function binsByVariant(
  rows: readonly SketchRowLike[],
  keys: readonly string[],
): Map<string, SketchBin[]> {
  const out = new Map<string, SketchBin[]>(keys.map((k) => [k, []]));
  for (const r of rows) out.get(r.variantKey)?.push({ side: r.side, key: r.key, count: r.count });
  return out;
}

export function quantilesOf(bins: readonly SketchBin[], extremes?: Extremes | null): Quantiles {
  const { p50, p90, p95, p99 } = quantileSummary(bins, extremes);
  return { p50, p90, p95, p99 };
}

/**
 * Folds rollup rows' min and max into running extremes per variant (pooled versions, or the hours so far).
 * Only numeric rows holding values count. A variant's extremes are null (unknown: read unclamped, with a
 * warning) once a row with values has none recorded: rows from before migration 017, until npm run
 * rollups:rebuild. Rows without the fields at all come from callers that keep no extremes: a variant with
 * only such rows is read unclamped without a warning; mixed with rows that have them, it is unknown.
 */
export class ExtremesFold {
  private readonly state = new Map<string, Extremes | null | 'untracked'>();

  add(row: MetricRollupRow): void {
    if (row.kind !== 'mean' || !(row.n > 0)) return;
    const { minValue: min, maxValue: max } = row;
    const seen = this.state.get(row.variantKey);
    if (min === undefined && max === undefined) {
      this.state.set(row.variantKey, seen === undefined || seen === 'untracked' ? 'untracked' : null);
      return;
    }
    if (seen === null || seen === 'untracked' || typeof min !== 'number' || typeof max !== 'number') {
      this.state.set(row.variantKey, null);
      return;
    }
    this.state.set(
      row.variantKey,
      seen === undefined ? { min, max } : { min: Math.min(seen.min, min), max: Math.max(seen.max, max) },
    );
  }

  /** A variant's extremes so far: null when unknown, undefined when not tracked (or no values yet). */
  get(key: string): Extremes | null | undefined {
    const seen = this.state.get(key);
    return seen === 'untracked' ? undefined : seen;
  }

  /** The variants whose extremes are unknown, in `keys`' order. */
  unknown(keys: readonly string[]): string[] {
    return keys.filter((k) => this.state.get(k) === null);
  }
}

/** The warning for variants read unclamped because their extremes are unknown (none: no warning). */
export function unknownExtremesWarning(variants: readonly string[]): string[] {
  if (variants.length === 0) return [];
  return [
    `quantiles of ${variants.join(', ')} are not clamped to their min and max (values counted before those were ` +
      'kept: run npm run rollups:rebuild)',
  ];
}

/** 'p95' → 0.95; null for 'mean'. */
export function quantileLevel(statistic: string): number | null {
  const m = /^p(\d\d)$/.exec(statistic);
  return m ? Number(m[1]) / 100 : null;
}

/** What quantileArms reads of a metric's arms (metric-arms.ts's Arms): the users' sums, and the extremes. */
export interface QuantileUnits {
  users: ReadonlyMap<string, { sumY: number; sumY2: number }> | null;
  extremes: ExtremesFold;
}

/**
 * The arms comparing quantile q: per variant the sample quantile and its standard error from the rank
 * interval. Units: the values (random experiments), or the conservative effective number of users,
 * (Σy)²/Σy² (sticky experiments, values correlated within a user). A variant whose arm cannot be computed
 * gets n = 0 (its warnings say why), so nothing is compared with it.
 */
export function quantileArms(
  name: string,
  bins: ReadonlyMap<string, SketchBin[]>,
  q: number,
  arms: QuantileUnits,
  warnings: string[],
): Map<string, QuantileArm> {
  const out = new Map<string, QuantileArm>();
  for (const [key, variantBins] of bins) {
    const values = variantBins.reduce((a, b) => a + b.count, 0);
    const users = arms.users?.get(key);
    const units = users ? effectiveUnits(users.sumY, users.sumY2, warnings) : values;
    const r = units === null ? null : quantileArm(variantBins, q, units, arms.extremes.get(key));
    warnings.push(...(r?.warnings ?? []).map((w) => `${name}/${key}: ${w}`));
    out.set(
      key,
      r && r.n !== null && r.estimate !== null && r.stdError !== null
        ? { n: r.n, estimate: r.estimate, stdError: r.stdError }
        : { n: 0, estimate: 0, stdError: 0 },
    );
  }
  return out;
}
