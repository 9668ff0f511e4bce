// Owns the arms of one metric as the analysis compares them: per call, or per user (sticky experiments) as a
// ratio of sums, with what decided the unit and the words that say what each number is.
import { foldArms, type MetricKind, type MetricRollupRow, toArmData } from './arms.js';
import { ExtremesFold, unknownExtremesWarning } from './metric-quantiles.js';
import type { ArmData, RatioMoments } from './types.js';

/** What a metric is analysed per: the user (sticky experiments, ADR 0018) or the call. */
export type Unit = 'user' | 'call';

/** Per variant and metric: the sums over the variant's users the delta method reads (core/units.ts). */
export interface UnitRollupRow {
  version: number;
  variantKey: string;
  metric: string;
  kind: MetricKind;
  units: number;
  sumX: number;
  sumX2: number;
  sumY: number;
  sumY2: number;
  sumXY: number;
}

/** One metric's arms per variant, per call or per user, with what decided the unit. */
export interface Arms {
  kind: MetricKind;
  unit: Unit;
  data: Map<string, ArmData>;
  /** Units per variant: users, or calls. */
  n: Map<string, number>;
  /** Per variant, the users' Σy and Σy² (values and their squares per user), for quantiles' effective units. */
  users: Map<string, { sumY: number; sumY2: number }> | null;
  /** Per variant, the min and max of its values (numeric metrics), which its quantiles are read within. */
  extremes: ExtremesFold;
}

const emptyRatio = (): RatioMoments => ({ n: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 });

/**
 * Per user when the experiment is sticky and every value of the metric belongs to a user's unit (the users'
 * Σy equals the values counted per call); otherwise per call, with a warning when sticky.
 */
export function armsOf(
  name: string,
  rows: readonly MetricRollupRow[],
  unitRows: readonly UnitRollupRow[],
  keys: readonly string[],
  sticky: boolean,
  warnings: string[],
): Arms {
  const { kind, arms, warnings: foldWarnings } = foldArms(rows, keys);
  warnings.push(...foldWarnings.map((w) => `${name}: ${w}`));
  const extremes = new ExtremesFold();
  if (kind === 'mean') for (const r of rows) extremes.add(r);
  warnings.push(...unknownExtremesWarning(extremes.unknown(keys)).map((w) => `${name}: ${w}`));
  const perCall: Arms = {
    kind,
    unit: 'call',
    data: new Map(keys.map((k) => [k, toArmData(kind, arms.get(k)!)])),
    n: new Map(keys.map((k) => [k, arms.get(k)!.n])),
    users: null,
    extremes,
  };
  if (!sticky) return perCall;
  const ratios = new Map<string, RatioMoments>(keys.map((k) => [k, emptyRatio()]));
  for (const u of unitRows) {
    const r = ratios.get(u.variantKey);
    if (!r || u.kind !== kind) continue;
    r.n += u.units;
    r.sumX += u.sumX;
    r.sumX2 += u.sumX2;
    r.sumY += u.sumY;
    r.sumY2 += u.sumY2;
    r.sumXY += u.sumXY;
  }
  const values = keys.reduce((a, k) => a + arms.get(k)!.n, 0);
  const withUser = keys.reduce((a, k) => a + ratios.get(k)!.sumY, 0);
  if (values === 0 || withUser !== values) {
    if (values > 0) {
      warnings.push(
        `${name}: ${values - withUser} of ${values} values have no user's unit (results without a userId, or logged before per-user sums: run npm run rollups:rebuild); analysed per call`,
      );
    }
    return perCall;
  }
  return {
    kind,
    unit: 'user',
    data: new Map(keys.map((k) => [k, ratios.get(k)!])),
    n: new Map(keys.map((k) => [k, ratios.get(k)!.n])),
    users: new Map(keys.map((k) => [k, { sumY: ratios.get(k)!.sumY, sumY2: ratios.get(k)!.sumY2 }])),
    extremes,
  };
}

/** 'mean per call, users as units', 'share of calls that were true', 'p95 of calls, users as units'. */
export function labelOf(kind: MetricKind, statistic: string, unit: Unit): string {
  const what =
    statistic !== 'mean'
      ? `${statistic} of calls`
      : kind === 'proportion'
        ? 'share of calls true'
        : 'mean per call';
  return unit === 'user' ? `${what}, users as units` : what;
}
