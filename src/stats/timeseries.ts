// Owns the cumulative time series of one metric: its hourly rollup rows summed, bucket by bucket (oldest
// first), into running arms per variant, each treatment compared with the control as of every bucket.
// Work is linear in the rows and O(buckets × variants) comparisons, however many results there are.
import { countExposures, foldArms, type MetricKind, type MetricRollupRow, toArmData } from './arms.js';
import { type AnalysisMethod, compareArms, resolveSided, type SidedOption } from './compare.js';
import { summarizeArm } from './moments.js';
import type { Direction, EffectEstimate, Moments, Sided } from './types.js';

/** One metric's rollup row of one hour (`bucket`: the start of the hour, ISO 8601 UTC). */
export interface BucketRow extends MetricRollupRow {
  bucket: string;
}

/** Exposures of one hour and variant (any version). */
export interface BucketCount {
  bucket: string;
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
  /** The bucket an hour is counted in: the hour itself, or its day. Must keep the hours' order. */
  bucketOf: (hour: string) => string;
}

export interface SeriesVariant {
  key: string;
  /** Values up to and including the bucket. */
  n: number;
  mean: number | null;
  absolute?: EffectEstimate;
  relative?: EffectEstimate;
  significant?: boolean;
  better?: boolean | null;
  worse?: boolean | null;
  chanceToWin?: number | null;
}

export interface SeriesBucket {
  bucket: string;
  /** Exposures in this bucket alone. */
  exposures: Record<string, number>;
  /** Every variant as of the end of this bucket (cumulative); treatments with their effect. */
  variants: SeriesVariant[];
}

export interface Series {
  kind: MetricKind;
  /** The alternative tested ('better' resolved by the direction). */
  sided: Sided;
  buckets: SeriesBucket[];
  /** About the data as a whole (e.g. a metric logged as both kinds). */
  warnings: string[];
  /** The latest bucket's comparison warnings, by treatment (earlier buckets' would only repeat them). */
  variantWarnings: Map<string, string[]>;
}

function groupBy<T extends { bucket: string }>(rows: readonly T[], bucketOf: (hour: string) => string) {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const b = bucketOf(r.bucket);
    const group = out.get(b);
    if (group) group.push(r);
    else out.set(b, [r]);
  }
  return out;
}

/**
 * The metric's cumulative effect per bucket. The kind is chosen once from every row (as the analysis
 * does), so the last bucket compares exactly the arms the analysis of all the data compares.
 */
export function cumulativeSeries(
  rows: readonly BucketRow[],
  exposures: readonly BucketCount[],
  o: SeriesOptions,
): Series {
  const keys = o.variantKeys;
  const { kind, warnings } = foldArms(rows, keys);
  const rowsByBucket = groupBy(rows, o.bucketOf);
  const exposuresByBucket = groupBy(exposures, o.bucketOf);
  const buckets = [...new Set([...rowsByBucket.keys(), ...exposuresByBucket.keys()])].sort();
  const running = new Map<string, Moments>(keys.map((k) => [k, { n: 0, sum: 0, sumSquares: 0 }]));
  const compare = {
    method: o.method,
    alpha: o.alpha,
    sided: o.sided,
    nStar: o.nStar,
    direction: o.direction,
  };
  const variantWarnings = new Map<string, string[]>();
  const series = buckets.map((bucket): SeriesBucket => {
    for (const r of rowsByBucket.get(bucket) ?? []) {
      const arm = running.get(r.variantKey);
      if (!arm || r.kind !== kind) continue;
      arm.n += r.n;
      arm.sum += r.sum;
      arm.sumSquares += r.sumSquares;
    }
    const control = toArmData(kind, { ...running.get(o.control)! });
    const variants = keys.map((key): SeriesVariant => {
      const arm = running.get(key)!;
      const data = toArmData(kind, { ...arm });
      const base = { key, n: arm.n, mean: summarizeArm(data).mean };
      if (key === o.control) return base;
      const c = compareArms(control, data, compare);
      variantWarnings.set(key, c.warnings);
      return {
        ...base,
        absolute: c.absolute,
        relative: c.relative,
        significant: c.significant,
        better: c.better,
        worse: c.worse,
        chanceToWin: c.chanceToWin,
      };
    });
    return { bucket, exposures: countExposures(exposuresByBucket.get(bucket) ?? [], keys), variants };
  });
  return {
    kind,
    sided: resolveSided(o.sided, o.direction).sided,
    buckets: series,
    warnings,
    variantWarnings,
  };
}
