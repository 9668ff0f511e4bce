// Owns the cumulative time series of one metric: its hourly rollup rows summed, period by period (oldest
// first), into running arms per variant, each treatment compared with the control as of every period.
// Work is linear in the rows and O(periods × variants) comparisons, however many results there are.

import { countExposures, foldArms, type MetricKind, type MetricRollupRow, toArmData } from './arms.js';
import { type AnalysisMethod, compareArms, resolveSided, type SidedOption } from './compare.js';
import type { UnitRollupRow } from './metric-arms.js';
import { ExtremesFold, type SketchRowLike, unknownExtremesWarning } from './metric-quantiles.js';
import { summarizeArm } from './moments.js';
import { effectiveUnits, quantileArm } from './quantiles.js';
import type { SketchBin } from './sketch.js';
import type { ArmData, Direction, Moments, RatioMoments, Sided } from './types.js';

/** One metric's rollup row of one hour (`hour`: the start of the hour, ISO 8601 UTC). */
export interface HourlyRow extends MetricRollupRow {
  hour: string;
}

/** How much one hour's writes moved a variant's per-user sums (sticky experiments). */
export interface HourlyUnitRow extends UnitRollupRow {
  hour: string;
}

/** Exposures of one hour and variant (any version). */
export interface HourlyCount {
  hour: string;
  variantKey: string;
  n: number;
}

export interface SeriesOptions {
  /** The variants, in the order answered; rows of other keys are left out. */
  variantKeys: readonly string[];
  control: string;
  method: AnalysisMethod;
  alpha: number;
  sided: SidedOption;
  nStar?: number;
  /** Which way the metric is better; null: undeclared. */
  direction: Direction | null;
  /** The period an hour is counted in: the hour itself, or its day. Must keep the hours' order. */
  periodOf: (hour: string) => string;
  /**
   * Sticky experiments: the hourly moves of the per-user sums. When every value belongs to a user's unit, the
   * series is per user (the analysis' unit and estimator); otherwise per call.
   */
  units?: readonly HourlyUnitRow[];
  /**
   * A quantile statistic (`statistic: pNN`): the quantile (0.95) and the metric's hourly sketch bins; the
   * series then compares that quantile, as the analysis does.
   */
  quantile?: { level: number; sketches: readonly HourlySketchRow[] };
  /**
   * A ratio metric (core/pairs.ts): the hourly moves of its per-unit sums, in its unit; the series then
   * compares Σ numerator / Σ denominator as the analysis does (`rows` are not read).
   */
  ratio?: { unit: 'user' | 'call'; rows: readonly HourlyUnitRow[] };
}

/** One hour's count in one bin of one variant's sketch. */
export interface HourlySketchRow extends SketchRowLike {
  hour: string;
}

// The answered shapes of a variant and a period are declared once, as schemas (timeseries-schema.ts).
import type { SeriesPeriod, SeriesVariant } from './timeseries-schema.js';

export type { SeriesPeriod, SeriesVariant };

export interface Series {
  kind: MetricKind;
  /** user: each variant's users are its units (a ratio of sums, as the analysis reads it); call: each value. */
  unit: 'user' | 'call';
  /** The alternative tested ('better' resolved by the direction). */
  sided: Sided;
  periods: SeriesPeriod[];
  /** About the data as a whole (e.g. a metric logged as both kinds). */
  warnings: string[];
  /** The latest period's comparison warnings, by treatment (earlier periods' would only repeat them). */
  variantWarnings: Map<string, string[]>;
}

function groupBy<T extends { hour: string }>(rows: readonly T[], periodOf: (hour: string) => string) {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const b = periodOf(r.hour);
    const group = out.get(b);
    if (group) group.push(r);
    else out.set(b, [r]);
  }
  return out;
}

/**
 * The metric's cumulative effect per period. The kind is chosen once from every row (as the analysis
 * does), so the last period compares exactly the arms the analysis of all the data compares.
 */
export function cumulativeSeries(
  rows: readonly HourlyRow[],
  exposures: readonly HourlyCount[],
  o: SeriesOptions,
): Series {
  const keys = o.variantKeys;
  const { kind, warnings } = foldArms(rows, keys);
  const units = o.ratio?.rows ?? o.units?.filter((u) => u.kind === kind) ?? [];
  const values = rows
    .filter((r) => r.kind === kind && keys.includes(r.variantKey))
    .reduce((a, r) => a + r.n, 0);
  const withUser = units.filter((u) => keys.includes(u.variantKey)).reduce((a, u) => a + u.sumY, 0);
  // A ratio is read from its sums (users' or calls'), which have the RatioMoments shape either way.
  const perUser = o.ratio !== undefined || (o.units !== undefined && values > 0 && withUser === values);
  const rowsByHour = groupBy(rows, o.periodOf);
  const unitsByHour = groupBy(units, o.periodOf);
  const exposuresByHour = groupBy(exposures, o.periodOf);
  const sketchesByHour = groupBy(o.quantile?.sketches ?? [], o.periodOf);
  const bins = new Map<string, Map<string, SketchBin>>(keys.map((k) => [k, new Map()]));
  const periods = [
    ...new Set([...rowsByHour.keys(), ...unitsByHour.keys(), ...exposuresByHour.keys()]),
  ].sort();
  const calls = new Map<string, Moments>(keys.map((k) => [k, { n: 0, sum: 0, sumSquares: 0 }]));
  const users = new Map<string, RatioMoments>(
    keys.map((k) => [k, { n: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 }]),
  );
  const momentsOf = (key: string): ArmData =>
    perUser ? { ...users.get(key)! } : toArmData(kind, { ...calls.get(key)! });
  const quantile = kind === 'mean' ? o.quantile : undefined;
  // Each hour's min and max folded as the hours pass: the quantiles as of a period lie within its data.
  const extremes = new ExtremesFold();
  // A quantile's arm: its units are the values, or the users' effective number (as the analysis counts them).
  const armOf = (key: string): ArmData => {
    if (!quantile) return momentsOf(key);
    const variantBins = [...bins.get(key)!.values()];
    const u = users.get(key)!;
    const units = perUser ? effectiveUnits(u.sumY, u.sumY2) : calls.get(key)!.n;
    const r = units === null ? null : quantileArm(variantBins, quantile.level, units, extremes.get(key));
    return r && r.n !== null && r.estimate !== null && r.stdError !== null
      ? { n: r.n, estimate: r.estimate, stdError: r.stdError }
      : { n: 0, estimate: 0, stdError: 0 };
  };
  const compare = {
    method: o.method,
    alpha: o.alpha,
    sided: o.sided,
    nStar: o.nStar,
    direction: o.direction,
    kind,
  };
  const variantWarnings = new Map<string, string[]>();
  const series = periods.map((period): SeriesPeriod => {
    for (const r of rowsByHour.get(period) ?? []) {
      const arm = calls.get(r.variantKey);
      if (!arm || r.kind !== kind) continue;
      arm.n += r.n;
      arm.sum += r.sum;
      arm.sumSquares += r.sumSquares;
      extremes.add(r);
    }
    for (const b of sketchesByHour.get(period) ?? []) {
      const variant = bins.get(b.variantKey);
      if (!variant) continue;
      const id = `${b.side}:${b.key}`;
      const bin = variant.get(id);
      if (bin) bin.count += b.count;
      else variant.set(id, { side: b.side, key: b.key, count: b.count });
    }
    for (const u of unitsByHour.get(period) ?? []) {
      const arm = users.get(u.variantKey);
      if (!arm) continue;
      arm.n += u.units;
      arm.sumX += u.sumX;
      arm.sumX2 += u.sumX2;
      arm.sumY += u.sumY;
      arm.sumY2 += u.sumY2;
      arm.sumXY += u.sumXY;
    }
    const control = armOf(o.control);
    const variants = keys.map((key): SeriesVariant => {
      const data = armOf(key);
      const base = {
        key,
        n: perUser ? users.get(key)!.n : calls.get(key)!.n,
        mean: summarizeArm(quantile ? momentsOf(key) : data).mean,
        ...(quantile ? { quantile: summarizeArm(data).mean } : {}),
      };
      if (key === o.control) return base;
      const c = compareArms(control, data, compare);
      variantWarnings.set(key, c.warnings);
      return {
        ...base,
        absolute: c.absolute,
        relative: c.relative,
        test: c.test,
        significant: c.significant,
        better: c.better,
        worse: c.worse,
        chanceToWin: c.chanceToWin,
      };
    });
    return { start: period, exposures: countExposures(exposuresByHour.get(period) ?? [], keys), variants };
  });
  if (quantile) warnings.push(...unknownExtremesWarning(extremes.unknown(keys)));
  if (o.ratio === undefined && o.units !== undefined && !perUser && values > 0) {
    warnings.push(
      `${values - withUser} of ${values} values have no user's unit (results without a userId, or written before hourly per-user sums: run npm run rollups:rebuild); the series is per call`,
    );
  }
  return {
    kind,
    unit: o.ratio?.unit ?? (perUser ? 'user' : 'call'),
    sided: resolveSided(o.sided, o.direction).sided,
    periods: series,
    warnings,
    variantWarnings,
  };
}
