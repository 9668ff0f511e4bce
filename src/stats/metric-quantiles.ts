// Owns a metric's quantiles in the analysis: each variant's p50/p90/p95/p99 from its write-time sketch bins,
// and, for a metric declared with `statistic: pNN`, the arms that compare that quantile (quantiles.ts).

import type { Arms } from './metric-arms.js';
import { effectiveUnits, type QuantileArm, quantileArm, quantileSummary } from './quantiles.js';
import type { SketchBin, SketchSide } from './sketch.js';

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

export function quantilesOf(bins: readonly SketchBin[]): Quantiles {
  const { p50, p90, p95, p99 } = quantileSummary(bins);
  return { p50, p90, p95, p99 };
}

/** 'p95' → 0.95; null for 'mean'. */
export function quantileLevel(statistic: string): number | null {
  const m = /^p(\d\d)$/.exec(statistic);
  return m ? Number(m[1]) / 100 : null;
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
  arms: Arms,
  warnings: string[],
): Map<string, QuantileArm> {
  const out = new Map<string, QuantileArm>();
  for (const [key, variantBins] of bins) {
    const values = variantBins.reduce((a, b) => a + b.count, 0);
    const users = arms.users?.get(key);
    const units = users ? effectiveUnits(users.sumY, users.sumY2, warnings) : values;
    const r = units === null ? null : quantileArm(variantBins, q, units);
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
