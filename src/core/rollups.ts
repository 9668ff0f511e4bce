// Write-time rollups: the sufficient statistics (n, sum, sum of squares) that analysis reads instead
// of scanning results. Pure: the store calls these on the rows it commits and when it rebuilds.
import type { MetricKind, MetricRollupRow } from '../stats/arms.js';
import type { DeclaredSums } from './declared.js';
import type { JsonObject } from './json.js';

export type { MetricKind };

/**
 * Values beyond this magnitude are not rolled up: their squares would overflow the sums (|x|² > 1.8e308
 * past about 1.3e154) and poison the statistics of their metric for good.
 */
export const MAX_METRIC_MAGNITUDE = 1e100;

/** A rollup row as stored: the statistics' row (stats/arms.ts) of one experiment. */
export interface MetricRollup extends MetricRollupRow {
  experimentId: number;
}

export interface ExposureRollup {
  experimentId: number;
  version: number;
  variantKey: string;
  n: number;
}

export interface RolledResult {
  experimentId: number;
  version: number;
  variantKey: string;
  metrics: JsonObject | null;
  /** Names not rolled up: beyond the experiment's cap when the result was committed (metric-cap.ts). */
  overCap?: ReadonlySet<string> | null;
  /** The user whose unit its metrics join (sticky experiments, core/units.ts); null: analysed per call only. */
  unitUserId?: string | null;
  /** The hour it was committed in (core/time.ts hourOf): its time-series bucket. */
  hour?: string;
  /** Its experiment's declared pairs and caps (core/pairs.ts). */
  declared?: DeclaredSums | null;
}

/** Metric sums of one hour (the time series), per experiment, version, variant, metric and kind. */
export interface HourlyRollup extends MetricRollup {
  hour: string;
}

/**
 * What a metric value is analysed as: numbers as values of a mean, booleans as a proportion. Anything
 * else (strings, objects, arrays, null, numbers beyond ±MAX_METRIC_MAGNITUDE) is not a metric value.
 */
export function metricKind(value: unknown): MetricKind | undefined {
  if (typeof value === 'number') return Math.abs(value) <= MAX_METRIC_MAGNITUDE ? 'mean' : undefined;
  return typeof value === 'boolean' ? 'proportion' : undefined;
}

/**
 * Sums the metrics of `results` per experiment, version, variant, metric and kind: the values metricKind
 * accepts, except names over the cap. Keys live in Maps, so metric names such as "__proto__" are just
 * names. Rows come out in the order their keys were first seen.
 */
export function rollUpResults(results: Iterable<RolledResult>): MetricRollup[] {
  return rollUp(results, false);
}

/** rollUpResults per hour: the results' `bucket`s, for the time series (results without one are left out). */
export function rollUpHours(results: Iterable<RolledResult>): HourlyRollup[] {
  return rollUp(results, true) as HourlyRollup[];
}

/** The sums of one experiment, version and variant (and hour), by metric: one map per kind. */
interface Group {
  mean: Map<string, MetricRollup>;
  proportion: Map<string, MetricRollup>;
}

/**
 * One pass, one key string per result rather than per metric: a log's rollups are planned on the
 * event loop for every batch (about 3.5 µs a result when each metric built its own key, 1 µs now).
 */
function rollUp(results: Iterable<RolledResult>, byHour: boolean): MetricRollup[] {
  const out: MetricRollup[] = [];
  const groups = new Map<string, Group>();
  let lastKey: string | undefined;
  let group: Group | undefined;
  for (const r of results) {
    const metrics = r.metrics;
    if (!metrics || (byHour && r.hour === undefined)) continue;
    // key parts are joined with NUL, which no accepted string contains
    const key = byHour
      ? `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.hour}`
      : `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}`;
    if (key !== lastKey) {
      lastKey = key;
      group = groups.get(key);
      if (group === undefined) {
        group = { mean: new Map(), proportion: new Map() };
        groups.set(key, group);
      }
    }
    for (const metric in metrics) {
      const value = metrics[metric];
      const kind = metricKind(value);
      if (kind === undefined || r.overCap?.has(metric)) continue;
      const x = kind === 'mean' ? (value as number) : value ? 1 : 0;
      const byName = group![kind];
      let acc = byName.get(metric);
      if (acc === undefined) {
        acc = {
          experimentId: r.experimentId,
          version: r.version,
          variantKey: r.variantKey,
          metric,
          kind,
          n: 0,
          sum: 0,
          sumSquares: 0,
          minValue: null,
          maxValue: null,
        };
        if (byHour) (acc as HourlyRollup).hour = r.hour!;
        byName.set(metric, acc);
        out.push(acc);
      }
      acc.n += 1;
      acc.sum += x;
      acc.sumSquares += x * x;
      if (typeof acc.minValue !== 'number' || x < acc.minValue) acc.minValue = x;
      if (typeof acc.maxValue !== 'number' || x > acc.maxValue) acc.maxValue = x;
    }
  }
  return out;
}

/**
 * Sums signed rollup changes per key (feedback replacing a value moves n by 0 and the sums by the difference).
 * Their min and max widen to the values the changes add (null: a change that adds none, such as a value
 * taken out: an extreme cannot be taken back out, see extremesAfter).
 */
export function mergeRollups<T extends MetricRollup>(parts: Iterable<T>, key: (t: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const p of parts) {
    const k = key(p);
    const acc = byKey.get(k);
    if (acc) {
      acc.n += p.n;
      acc.sum += p.sum;
      acc.sumSquares += p.sumSquares;
      // Rows that keep none (segment rollups) stay without them.
      if (acc.minValue !== undefined || p.minValue !== undefined) {
        acc.minValue = lesser(acc.minValue, p.minValue);
        acc.maxValue = greater(acc.maxValue, p.maxValue);
      }
    } else byKey.set(k, { ...p });
  }
  return [...byKey.values()];
}

const known = (x: number | null | undefined): x is number => typeof x === 'number';
const lesser = (a: number | null | undefined, b: number | null | undefined) =>
  known(a) && known(b) ? Math.min(a, b) : known(a) ? a : known(b) ? b : null;
const greater = (a: number | null | undefined, b: number | null | undefined) =>
  known(a) && known(b) ? Math.max(a, b) : known(a) ? a : known(b) ? b : null;

/**
 * A stored row's min and max after a move (the rule of the SQL upserts, row-statements.ts, and of the memory
 * store): each moves only to a value past it, so a stored null (unknown: rows from before migration 017)
 * stays null until a rebuild, and a move that adds no value changes nothing. A value taken out leaves
 * them as they were: live extremes are those of every value ever counted, a rebuild's those counted now.
 */
export function extremesAfter(
  stored: Pick<MetricRollup, 'minValue' | 'maxValue'>,
  move: Pick<MetricRollup, 'minValue' | 'maxValue'>,
): { minValue: number | null; maxValue: number | null } {
  const [min, max] = [stored.minValue ?? null, stored.maxValue ?? null];
  return {
    minValue: known(move.minValue) && min !== null && move.minValue < min ? move.minValue : min,
    maxValue: known(move.maxValue) && max !== null && move.maxValue > max ? move.maxValue : max,
  };
}

export const metricRollupKey = (r: MetricRollup) =>
  `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`;
export const hourlyRollupKey = (r: HourlyRollup) => `${r.hour}\u0000${metricRollupKey(r)}`;

/** Counts exposures per experiment, version and variant (`n` when one item stands for several). */
export function rollUpExposures(
  exposures: Iterable<{ experimentId: number; version: number; variantKey: string; n?: number }>,
): ExposureRollup[] {
  const byKey = new Map<string, ExposureRollup>();
  for (const e of exposures) {
    const key = `${e.experimentId}\u0000${e.version}\u0000${e.variantKey}`;
    const n = e.n ?? 1;
    const acc = byKey.get(key);
    if (acc) acc.n += n;
    else byKey.set(key, { experimentId: e.experimentId, version: e.version, variantKey: e.variantKey, n });
  }
  return [...byKey.values()];
}
