// Quantile sketch bins kept at write time (issue 23): every numeric value the metric rollups sum is also
// counted in its DDSketch bin (stats/sketch.ts), per variant and metric, all-time and per hour. Counts are
// signed moves that add, so the store upserts `count = count + k` and any number of writers is safe. Pure.

import { type SketchSide, sketchBin } from '../stats/sketch.js';
import { metricKind, type RolledResult } from './rollups.js';

/** One bin of a variant's sketch of a metric (what readRollups returns; experiment implied). */
export interface SketchRow {
  version: number;
  variantKey: string;
  metric: string;
  side: SketchSide;
  key: number;
  count: number;
}

/** A bin count (or a signed move of one) of an experiment, all-time or, with `hour`, of one hour. */
export interface SketchMove extends SketchRow {
  experimentId: number;
  hour?: string;
}

export const sketchKey = (m: Omit<SketchMove, 'count'>) =>
  `${m.experimentId}\u0000${m.version}\u0000${m.variantKey}\u0000${m.metric}\u0000${m.side}\u0000${m.key}`;
export const hourlySketchKey = (m: Omit<SketchMove, 'count'>) => `${m.hour}\u0000${sketchKey(m)}`;

/** A bin as one number: 0 for zero, ±(OFFSET + key) for a positive or negative value's bin (|key| < 40,000). */
const OFFSET = 100_000;
export const binId = (side: SketchSide, key: number) => (side === 0 ? 0 : side * (OFFSET + key));
export const sideOf = (id: number): SketchSide => (id === 0 ? 0 : id > 0 ? 1 : -1);
export const keyOf = (id: number) => (id === 0 ? 0 : Math.abs(id) - OFFSET);

/** The moves of one experiment, version, variant and hour (or none): per metric, per bin id, a signed count. */
interface Group {
  experimentId: number;
  version: number;
  variantKey: string;
  hour: string | undefined;
  metrics: Map<string, Map<number, number>>;
}

/**
 * Signed bin moves summed per bin, all-time and per hour (moves without a hour count all-time only).
 * A log batch's rollups are planned on the event loop, so the work per value is one logarithm and two
 * lookups by number; key strings and row objects are made once per distinct bin, in rows().
 */
export class SketchMoves {
  private readonly groups = new Map<string, Group>();
  private lastKey: string | undefined;
  private last: Group | undefined;

  /** The group of `at` in `hour`, made on first use; consecutive values of one result reuse it. */
  group(at: { experimentId: number; version: number; variantKey: string }, hour: string | undefined): Group {
    const k = `${at.experimentId}\u0000${at.version}\u0000${at.variantKey}\u0000${hour ?? ''}`;
    if (k === this.lastKey) return this.last!;
    let g = this.groups.get(k);
    if (g === undefined) {
      g = {
        experimentId: at.experimentId,
        version: at.version,
        variantKey: at.variantKey,
        hour: hour,
        metrics: new Map(),
      };
      this.groups.set(k, g);
    }
    this.lastKey = k;
    this.last = g;
    return g;
  }

  /** Counts `value` (`sign` −1 takes it out) in its bin of `g`'s metric. */
  static bump(g: Group, metric: string, value: number, sign: 1 | -1): void {
    const { side, key } = sketchBin(value);
    const id = binId(side, key);
    let bins = g.metrics.get(metric);
    if (bins === undefined) {
      bins = new Map();
      g.metrics.set(metric, bins);
    }
    bins.set(id, (bins.get(id) ?? 0) + sign);
  }

  /** Counts `value` (`sign` −1 takes it out) in its bin, all-time and in `hour` when given. */
  add(
    at: { experimentId: number; version: number; variantKey: string },
    metric: string,
    value: number,
    sign: 1 | -1,
    hour: string | undefined,
  ): void {
    SketchMoves.bump(this.group(at, hour), metric, value, sign);
  }

  /** The moves that change something (a value taken out and put back in the same bin cancels). */
  rows(): { all: SketchMove[]; hourly: SketchMove[] } {
    // All-time: the hours of one experiment, version and variant summed, keyed by group then by number
    // (one key string per group, none per bin).
    const totals = new Map<string, { g: Group; metrics: Map<string, Map<number, number>> }>();
    const hourly: SketchMove[] = [];
    for (const g of this.groups.values()) {
      const k = `${g.experimentId}\u0000${g.version}\u0000${g.variantKey}`;
      let total = totals.get(k);
      if (total === undefined) {
        total = { g, metrics: new Map() };
        totals.set(k, total);
      }
      for (const [metric, bins] of g.metrics) {
        let summed = total.metrics.get(metric);
        if (summed === undefined) {
          summed = new Map();
          total.metrics.set(metric, summed);
        }
        for (const [id, count] of bins) {
          summed.set(id, (summed.get(id) ?? 0) + count);
          if (count !== 0 && g.hour !== undefined) hourly.push(moveOf(g, metric, id, count, g.hour));
        }
      }
    }
    const all: SketchMove[] = [];
    for (const { g, metrics } of totals.values()) {
      for (const [metric, bins] of metrics) {
        for (const [id, count] of bins) if (count !== 0) all.push(moveOf(g, metric, id, count, undefined));
      }
    }
    return { all, hourly };
  }
}

/** A bin's move of group `g` (one object shape, with or without its hour). */
function moveOf(g: Group, metric: string, id: number, count: number, hour: string | undefined): SketchMove {
  const move: SketchMove = {
    experimentId: g.experimentId,
    version: g.version,
    variantKey: g.variantKey,
    metric,
    side: sideOf(id),
    key: keyOf(id),
    count,
  };
  if (hour !== undefined) move.hour = hour;
  return move;
}

/**
 * Counts the numeric values of `results` the metric rollups sum (core/rollups.ts rollUp: kind `mean`,
 * within MAX_METRIC_MAGNITUDE, not over the cap) into `moves`, in each result's hour.
 */
export function addSketchValues(moves: SketchMoves, results: Iterable<RolledResult>): void {
  for (const r of results) {
    const metrics = r.metrics;
    if (!metrics) continue;
    let g: Group | undefined;
    for (const metric in metrics) {
      const value = metrics[metric];
      if (metricKind(value) !== 'mean' || r.overCap?.has(metric)) continue;
      g ??= moves.group(r, r.hour);
      SketchMoves.bump(g, metric, value as number, 1);
    }
  }
}
