// The values of one segment key an analysis shows: the TOP_SEGMENTS (or fewer) with most units, each with its rows
// (counts, metric sums, per-user sums, sketch bins), and the rest merged as one OTHER_SEGMENT value. Pure.
import { addSums } from './pairs.js';
import type { SegmentPairRollup } from './segment-pairs.js';
import type { SegmentSketchMove, SegmentUnitRollup } from './segment-units.js';
import { OTHER_SEGMENT, type SegmentCount, type SegmentRollup, TOP_SEGMENTS } from './segments.js';

/** One value's rows (or the merged rest's, `mergedValues` saying how many values it merges). */
export interface ShownSegment {
  value: string;
  mergedValues?: number;
  counts: SegmentCount[];
  metrics: SegmentRollup[];
  units: SegmentUnitRollup[];
  sketches: SegmentSketchMove[];
  pairs: SegmentPairRollup[];
}

const SEP = '\u0000';

/**
 * The units of each value: users where per-user rows exist (sticky experiments; a user counted once per
 * variant and version, by the metric most of them have), else results (calls).
 */
function unitsByValue(
  counts: readonly SegmentCount[],
  units: readonly SegmentUnitRollup[],
): Map<string, number> {
  const totals = new Map<string, number>();
  if (units.length === 0) {
    for (const c of counts) totals.set(c.value, (totals.get(c.value) ?? 0) + c.n);
    return totals;
  }
  const most = new Map<string, { value: string; users: number }>();
  for (const u of units) {
    const at = `${u.value}${SEP}${u.version}${SEP}${u.variantKey}`;
    const seen = most.get(at);
    if (!seen) most.set(at, { value: u.value, users: u.units });
    else if (u.units > seen.users) seen.users = u.units;
  }
  for (const { value, users } of most.values()) totals.set(value, (totals.get(value) ?? 0) + users);
  for (const c of counts) if (!totals.has(c.value)) totals.set(c.value, 0);
  return totals;
}

/**
 * Ranked by units (`unitsByValue`; ties by value; values only feedback gave, with no result, last); the
 * first `limit` shown one by one. The merged rest sums
 * its rows per version, variant, metric and kind (and bin): per-user sums of several values add as if each
 * (user, value) were a unit, so a user with calls in two merged values counts twice there.
 */
export function topSegments(
  metrics: readonly SegmentRollup[],
  counts: readonly SegmentCount[],
  more: {
    units: readonly SegmentUnitRollup[];
    sketches: readonly SegmentSketchMove[];
    pairs?: readonly SegmentPairRollup[];
  } = {
    units: [],
    sketches: [],
  },
  limit = TOP_SEGMENTS,
): ShownSegment[] {
  const totals = unitsByValue(counts, more.units);
  // A value only feedback gave (on assignments, with no result of that value yet) ranks with 0 results.
  for (const m of metrics) if (m.n > 0 && !totals.has(m.value)) totals.set(m.value, 0);
  const ranked = [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: ShownSegment[] = ranked
    .slice(0, limit)
    .map(([value]) => ({ value, counts: [], metrics: [], units: [], sketches: [], pairs: [] }));
  const byValue = new Map(out.map((s) => [s.value, s]));
  const other = {
    counts: new Map<string, SegmentCount>(),
    metrics: new Map<string, SegmentRollup>(),
    units: new Map<string, SegmentUnitRollup>(),
    sketches: new Map<string, SegmentSketchMove>(),
    pairs: new Map<string, SegmentPairRollup>(),
  };
  const variant = (r: { version: number; variantKey: string }) => `${r.version}${SEP}${r.variantKey}`;
  const metric = (r: SegmentRollup | SegmentUnitRollup) => `${variant(r)}${SEP}${r.metric}${SEP}${r.kind}`;
  // Not ranked: a value with neither results nor feedback left (rows moved back to n = 0) shows nowhere.
  const place = <T extends { value: string }>(
    row: T,
    shown: (s: ShownSegment) => T[],
    merged: Map<string, T>,
    key: string,
    add: (into: T, row: T) => void,
  ) => {
    const s = byValue.get(row.value);
    if (s) shown(s).push(row);
    else if (totals.has(row.value)) {
      const acc = merged.get(key);
      if (acc) add(acc, row);
      else merged.set(key, { ...row, value: OTHER_SEGMENT });
    }
  };
  for (const c of counts)
    place(
      c,
      (s) => s.counts,
      other.counts,
      variant(c),
      (a, r) => (a.n += r.n),
    );
  for (const m of metrics) {
    place(
      m,
      (s) => s.metrics,
      other.metrics,
      metric(m),
      (a, r) => {
        a.n += r.n;
        a.sum += r.sum;
        a.sumSquares += r.sumSquares;
      },
    );
  }
  for (const u of more.units) {
    place(
      u,
      (s) => s.units,
      other.units,
      metric(u),
      (a, r) => {
        a.units += r.units;
        a.sumX += r.sumX;
        a.sumX2 += r.sumX2;
        a.sumY += r.sumY;
        a.sumY2 += r.sumY2;
        a.sumXY += r.sumXY;
      },
    );
  }
  for (const b of more.sketches) {
    const key = `${variant(b)}${SEP}${b.metric}${SEP}${b.side}${SEP}${b.bin}`;
    place(
      b,
      (s) => s.sketches,
      other.sketches,
      key,
      (a, r) => (a.count += r.count),
    );
  }
  for (const p of more.pairs ?? []) {
    place(p, (s) => s.pairs, other.pairs, `${variant(p)}${SEP}${p.pair}${SEP}${p.unit}`, addSums);
  }
  if (other.counts.size > 0 || other.metrics.size > 0) {
    out.push({
      value: OTHER_SEGMENT,
      mergedValues: ranked.length - byValue.size,
      counts: [...other.counts.values()],
      metrics: [...other.metrics.values()],
      units: [...other.units.values()],
      sketches: [...other.sketches.values()],
      pairs: [...other.pairs.values()],
    });
  }
  return out;
}
