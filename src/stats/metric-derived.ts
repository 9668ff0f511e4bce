// Owns the arms of a metric a definition derives (ADR 0035): a ratio of two metrics' per-unit sums, a metric
// capped at a value or a percentile, and a metric adjusted on a covariate (CUPED), from the write-time pair
// sums (core/pairs.ts) and bins (core/unit-bins.ts). Each returns Arms the one comparison path reads, and
// what it did, for the answer. Rules: docs/statistics.md.
import { type Cap, capArms } from './capping.js';
import { capUserArms, type UserBinRow } from './capping-users.js';
import { adjustedArmData, type CovariateMoments, cupedAdjust } from './cuped.js';
import type { Arms, Unit } from './metric-arms.js';
import { binsByVariant, ExtremesFold, type SketchRowLike } from './metric-quantiles.js';
import type { Moments, RatioMoments } from './types.js';

/** A row of pair sums (core/pairs.ts PairRollup) as the analysis reads it, versions already chosen. */
export interface PairRowLike extends CovariateMoments {
  variantKey: string;
  pair: string;
  unit: Unit;
}

const SUMS = ['n', 'sumX', 'sumX2', 'sumY', 'sumY2', 'sumXY', 'sumZ', 'sumZ2', 'sumXZ', 'sumYZ'] as const;
const empty = (): CovariateMoments => ({
  n: 0,
  sumX: 0,
  sumX2: 0,
  sumY: 0,
  sumY2: 0,
  sumXY: 0,
  sumZ: 0,
  sumZ2: 0,
  sumXZ: 0,
  sumYZ: 0,
});

/** The stored name of a pair (core/pairs.ts pairId). */
export const pairName = (role: 'ratio' | 'covariate', first: string, second: string) =>
  JSON.stringify([role, first, second]);

/** Per variant, the sums of one pair in one unit (variants without rows: all 0). */
function pairArms(
  rows: readonly PairRowLike[],
  pair: string,
  unit: Unit,
  keys: readonly string[],
): Map<string, CovariateMoments> {
  const out = new Map(keys.map((k) => [k, empty()]));
  for (const r of rows) {
    const arm = out.get(r.variantKey);
    if (!arm || r.pair !== pair || r.unit !== unit) continue;
    for (const c of SUMS) arm[c] += r[c];
  }
  return out;
}

const unitsIn = (arms: Map<string, CovariateMoments>) => [...arms.values()].reduce((a, m) => a + m.n, 0);

/**
 * A ratio's arms: per user in sticky experiments (calls without a user are left out, with a warning), per
 * call otherwise. `counted` is the numerator's and denominator's sums as their own rollups hold them (the
 * same units'), to warn when the pair sums cover less (declared after values came, until a rebuild).
 */
export function ratioArms(
  name: string,
  ratio: { numerator: string; denominator: string },
  rows: readonly PairRowLike[],
  keys: readonly string[],
  sticky: boolean,
  warnings: string[],
): Arms {
  const pair = pairName('ratio', ratio.numerator, ratio.denominator);
  const unit: Unit = sticky ? 'user' : 'call';
  const arms = pairArms(rows, pair, unit, keys);
  if (sticky) {
    const calls = unitsIn(pairArms(rows, pair, 'call', keys));
    if (calls > 0)
      warnings.push(`${name}: ${calls} calls without a userId are left out of the ratio (users as units)`);
  }
  if (unitsIn(arms) === 0) {
    warnings.push(
      `${name}: no units with ${ratio.numerator} or ${ratio.denominator} yet (values logged before the ratio was declared count after npm run rollups:rebuild)`,
    );
  }
  const data = new Map<string, RatioMoments>(
    keys.map((k) => {
      const { n, sumX, sumX2, sumY, sumY2, sumXY } = arms.get(k)!;
      return [k, { n, sumX, sumX2, sumY, sumY2, sumXY }];
    }),
  );
  return {
    kind: 'mean',
    unit,
    data,
    n: new Map(keys.map((k) => [k, arms.get(k)!.n])),
    users: null,
    extremes: new ExtremesFold(),
  };
}

/** What a cap did: the value used, and the units (calls or users) it capped, in all and per variant. */
export interface CapReport {
  value: number | null;
  percentile: number | null;
  units: number | null;
  share: number | null;
  variants: Map<string, { units: number | null; share: number | null }>;
}

/**
 * A metric's arms capped: per call from the exact sums, extremes and sketch bins (capping.ts); per user from
 * the users' bins (capping-users.ts). Proportions are not capped (the definition refuses it).
 */
export function cappedArms(
  name: string,
  arms: Arms,
  cap: Cap,
  keys: readonly string[],
  sketches: readonly SketchRowLike[],
  userBins: readonly (UserBinRow & { variantKey: string })[],
  warnings: string[],
): { arms: Arms; report: CapReport } {
  const percentile = 'percentile' in cap ? cap.percentile : null;
  const report: CapReport = { value: null, percentile, units: null, share: null, variants: new Map() };
  if (arms.kind !== 'mean') {
    warnings.push(`${name}: true/false values are not capped`);
    return { arms, report };
  }
  let result: {
    cap: number | null;
    arms: Array<{ data: Moments | RatioMoments | null; units: number | null }>;
    warnings: string[];
  };
  if (arms.unit === 'user') {
    const bins = keys.map((k) => userBins.filter((b) => b.variantKey === k));
    const r = capUserArms(bins, cap);
    const covered = bins.reduce((a, b) => a + b.reduce((s, x) => s + x.units, 0), 0);
    const users = keys.reduce((a, k) => a + arms.n.get(k)!, 0);
    if (Math.abs(covered - users) > 0.5) {
      warnings.push(
        `${name}: the cap's bins hold ${covered} of ${users} users (values logged before the cap was declared count after npm run rollups:rebuild)`,
      );
    }
    result = {
      cap: r.cap,
      arms: r.arms.map((a) => ({ data: a.data, units: a.capped })),
      warnings: r.warnings,
    };
  } else {
    const bins = binsByVariant(sketches, keys);
    const capping = keys.map((k) => {
      const m = arms.data.get(k) as Moments;
      const e = arms.extremes.get(k);
      return { ...m, min: e?.min ?? Number.NaN, max: e?.max ?? Number.NaN, bins: bins.get(k)! };
    });
    const r = capArms(capping, cap);
    result = {
      cap: r.cap,
      arms: r.arms.map((a) => ({ data: a.moments, units: a.capped })),
      warnings: r.warnings,
    };
  }
  warnings.push(...result.warnings.map((w) => `${name}: cap: ${w}`));
  report.value = result.cap;
  const data = new Map(arms.data);
  let [capped, units] = [0, 0];
  keys.forEach((k, i) => {
    const a = result.arms[i]!;
    const n = arms.n.get(k)!;
    if (a.data) data.set(k, a.data);
    report.variants.set(k, { units: a.units, share: a.units === null || n === 0 ? null : a.units / n });
    capped += a.units ?? Number.NaN;
    units += n;
  });
  if (result.cap !== null && Number.isFinite(capped)) {
    report.units = capped;
    report.share = units > 0 ? capped / units : null;
  }
  const failed = keys.some((_, i) => result.arms[i]!.data === null);
  if (failed || result.cap === null) {
    warnings.push(`${name}: not capped (the cap could not be applied to every variant)`);
    return { arms, report: { ...report, value: null, units: null, share: null } };
  }
  return { arms: { ...arms, data }, report };
}

/** What the adjustment did (cuped.ts): the covariate, its slope and mean, the reduction in variance. */
export interface AdjustmentReport {
  covariate: string;
  adjusted: boolean;
  theta: number | null;
  covariateMean: number | null;
  varianceReduction: number | null;
}

/**
 * A metric's arms adjusted on its covariate, in the metric's unit (users or calls), from the pair sums of
 * (metric, covariate); the unadjusted arms stay with the caller. Null arms (with a warning) when the pair
 * sums do not cover the metric's units.
 */
export function adjustedArms(
  name: string,
  arms: Arms,
  covariate: string,
  rows: readonly PairRowLike[],
  keys: readonly string[],
  warnings: string[],
): { arms: Arms | null; report: AdjustmentReport } {
  const report: AdjustmentReport = {
    covariate,
    adjusted: false,
    theta: null,
    covariateMean: null,
    varianceReduction: null,
  };
  const sums = pairArms(rows, pairName('covariate', name, covariate), arms.unit, keys);
  const uncovered = keys.filter((k) => sums.get(k)!.n !== arms.n.get(k));
  if (uncovered.length > 0) {
    warnings.push(
      `${name}: the covariate's sums cover ${unitsIn(sums)} of ${keys.reduce((a, k) => a + arms.n.get(k)!, 0)} units (values logged before the covariate was declared count after npm run rollups:rebuild); not adjusted`,
    );
    return { arms: null, report };
  }
  const result = cupedAdjust(keys.map((k) => sums.get(k)!));
  warnings.push(...result.warnings.map((w) => `${name}: adjustment: ${w}`));
  report.theta = result.theta;
  report.covariateMean = result.covariateMean;
  report.varianceReduction = result.varianceReduction;
  const data = keys.map((k, i) => [k, adjustedArmData(result.arms[i]!)] as const);
  if (!result.adjusted || data.some(([, d]) => d === null)) return { arms: null, report };
  report.adjusted = true;
  return {
    arms: { ...arms, data: new Map(data as Array<[string, NonNullable<(typeof data)[number][1]>]>) },
    report,
  };
}
