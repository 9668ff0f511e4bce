// Quantile sketch bins kept at write time (issue 23): every numeric value the metric rollups sum is also
// counted in its DDSketch bin (core/sketch.ts), per variant and metric, all-time and per hour. Counts are
// signed moves that add, so the store upserts `count = count + k` and any number of writers is safe. Pure.
import { metricKind, type RolledResult } from './rollups.js';
import { type SketchSide, sketchBin } from './sketch.js';

/** One bin of a variant's sketch of a metric (what readRollups returns; experiment implied). */
export interface SketchRow {
  version: number;
  variantKey: string;
  metric: string;
  side: SketchSide;
  key: number;
  count: number;
}

/** A bin count (or a signed move of one) of an experiment, all-time or, with `bucket`, of one hour. */
export interface SketchMove extends SketchRow {
  experimentId: number;
  bucket?: string;
}

export const sketchKey = (m: Omit<SketchMove, 'count'>) =>
  `${m.experimentId}\u0000${m.version}\u0000${m.variantKey}\u0000${m.metric}\u0000${m.side}\u0000${m.key}`;
export const bucketSketchKey = (m: Omit<SketchMove, 'count'>) => `${m.bucket}\u0000${sketchKey(m)}`;

/** Signed bin moves summed per bin, all-time and per hour (moves without a bucket count all-time only). */
export class SketchMoves {
  readonly all = new Map<string, SketchMove>();
  readonly hourly = new Map<string, SketchMove>();

  /** Counts `value` (`sign` −1 takes it out) in its bin, all-time and in `bucket` when given. */
  add(
    at: { experimentId: number; version: number; variantKey: string },
    metric: string,
    value: number,
    sign: 1 | -1,
    bucket: string | undefined,
  ): void {
    const { side, key } = sketchBin(value);
    const move = {
      experimentId: at.experimentId,
      version: at.version,
      variantKey: at.variantKey,
      metric,
      side,
      key,
    };
    bump(this.all, sketchKey(move), move, sign);
    if (bucket !== undefined)
      bump(this.hourly, bucketSketchKey({ ...move, bucket }), { ...move, bucket }, sign);
  }

  /** The moves that change something (a value taken out and put back in the same bin cancels). */
  rows(): { all: SketchMove[]; hourly: SketchMove[] } {
    const nonzero = (m: Map<string, SketchMove>) => [...m.values()].filter((r) => r.count !== 0);
    return { all: nonzero(this.all), hourly: nonzero(this.hourly) };
  }
}

function bump(map: Map<string, SketchMove>, k: string, move: Omit<SketchMove, 'count'>, by: number): void {
  const acc = map.get(k);
  if (acc) acc.count += by;
  else map.set(k, { ...move, count: by });
}

/**
 * Counts the numeric values of `results` the metric rollups sum (core/rollups.ts rollUp: kind `mean`,
 * within MAX_METRIC_MAGNITUDE, not over the cap) into `moves`, in each result's hour.
 */
export function addSketchValues(moves: SketchMoves, results: Iterable<RolledResult>): void {
  for (const r of results) {
    const metrics = r.metrics;
    if (!metrics) continue;
    for (const metric in metrics) {
      const value = metrics[metric];
      if (metricKind(value) !== 'mean' || r.overCap?.has(metric)) continue;
      moves.add(r, metric, value as number, 1, r.bucket);
    }
  }
}
