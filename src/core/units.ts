// Per-user units (ADR 0018): in a sticky experiment the user, not the call, is what was randomized, so a
// metric is read per user as a ratio: unit i has x_i (the sum of its values) and y_i (how many it logged).
// The variant keeps Σx, Σx², Σy, Σy², Σxy over its users, moved at write time by the difference each
// write makes to one user's (x, y): analysis stays O(1) in the number of results. Pure.
import type { MetricKind } from '../stats/arms.js';
import type { UnitRollupRow } from '../stats/metric-arms.js';
import { metricKind, type RolledResult } from './rollups.js';

export interface UnitKey {
  experimentId: number;
  userId: string;
  version: number;
  variantKey: string;
  metric: string;
  kind: MetricKind;
}

/** One user's running sums of one metric: y (`n`, how many values) and x (`sum`). */
export interface UnitSum extends UnitKey {
  n: number;
  sum: number;
}

/** A change to one user's sums: `dn` more values (negative when one moves to another kind) adding `dsum`. */
export interface UnitDelta extends UnitKey {
  dn: number;
  dsum: number;
}

/** What the analysis reads per variant and metric (stats' UnitRollupRow), of one experiment. */
export interface UnitRollup extends UnitRollupRow {
  experimentId: number;
}

export function unitKey(k: UnitKey): string {
  return `${k.experimentId}\u0000${k.userId}\u0000${k.version}\u0000${k.variantKey}\u0000${k.metric}\u0000${k.kind}`;
}

function rollupKey(k: Omit<UnitKey, 'userId'>): string {
  return `${k.experimentId}\u0000${k.version}\u0000${k.variantKey}\u0000${k.metric}\u0000${k.kind}`;
}

/** The variant rollup `k` belongs to in `rollups`, added (all sums 0) when it is not there yet. */
function rollupOf(rollups: Map<string, UnitRollup>, k: Omit<UnitKey, 'userId'>): UnitRollup {
  const key = rollupKey(k);
  let r = rollups.get(key);
  if (!r) {
    r = {
      experimentId: k.experimentId,
      version: k.version,
      variantKey: k.variantKey,
      metric: k.metric,
      kind: k.kind,
      units: 0,
      sumX: 0,
      sumX2: 0,
      sumY: 0,
      sumY2: 0,
      sumXY: 0,
    };
    rollups.set(key, r);
  }
  return r;
}

/** Deltas summed per user and metric: a user who appears twice in one batch is read and written once. */
export function mergeUnitDeltas(deltas: Iterable<UnitDelta>): UnitDelta[] {
  const byKey = new Map<string, UnitDelta>();
  for (const d of deltas) {
    const key = unitKey(d);
    const acc = byKey.get(key);
    if (acc) {
      acc.dn += d.dn;
      acc.dsum += d.dsum;
    } else byKey.set(key, { ...d });
  }
  return [...byKey.values()];
}

/**
 * Applies merged deltas to the users' current sums (absent: 0, 0). Returns the users' new sums and, per
 * variant and metric, how much each rollup column moves: a user going from (a, c) to (a + dx, c + dy)
 * moves Σx² by (a + dx)² − a², Σy² by (c + dy)² − c², Σxy by (a + dx)(c + dy) − ac, and the count of
 * units by one when it starts or stops having values.
 */
export function applyUnitDeltas(
  deltas: readonly UnitDelta[],
  current: ReadonlyMap<string, UnitSum>,
): { sums: UnitSum[]; rollups: UnitRollup[] } {
  const sums: UnitSum[] = [];
  const rollups = new Map<string, UnitRollup>();
  for (const d of deltas) {
    const old = current.get(unitKey(d));
    const a = old?.sum ?? 0;
    const c = old?.n ?? 0;
    const x = a + d.dsum;
    const y = c + d.dn;
    sums.push({ ...stripDelta(d), n: y, sum: x });
    moveUnitRollup(rollupOf(rollups, d), d, a, c);
  }
  return { sums, rollups: [...rollups.values()] };
}

/** The sums over users a unit rollup keeps (UnitRollupRow's), which a user's writes move. */
export type UnitSums = Pick<UnitRollup, 'units' | 'sumX' | 'sumX2' | 'sumY' | 'sumY2' | 'sumXY'>;

/**
 * Moves `r` by one user's sums going from (a, c) to (a + dsum, c + dn): the one place the per-user
 * columns move (the whole analysis' rollups and the segments' alike, core/segment-units.ts).
 */
export function moveUnitRollup(r: UnitSums, d: { dn: number; dsum: number }, a: number, c: number): void {
  const x = a + d.dsum;
  const y = c + d.dn;
  r.units += (y > 0 ? 1 : 0) - (c > 0 ? 1 : 0);
  r.sumX += d.dsum;
  r.sumX2 += x * x - a * a;
  r.sumY += d.dn;
  r.sumY2 += y * y - c * c;
  r.sumXY += x * y - a * c;
}

/** Adds one user's final sums (x = `sum`, y = `n` > 0) to `r` (a rebuild from raw rows). */
export function addUnitSums(r: UnitSums, s: { n: number; sum: number }): void {
  r.units += 1;
  r.sumX += s.sum;
  r.sumX2 += s.sum * s.sum;
  r.sumY += s.n;
  r.sumY2 += s.n * s.n;
  r.sumXY += s.sum * s.n;
}

function stripDelta(d: UnitDelta): UnitKey {
  return {
    experimentId: d.experimentId,
    userId: d.userId,
    version: d.version,
    variantKey: d.variantKey,
    metric: d.metric,
    kind: d.kind,
  };
}

/** The variant rollups of a set of users' final sums (a rebuild from raw rows). */
export function rollUpUnits(sums: Iterable<UnitSum>): UnitRollup[] {
  const rollups = new Map<string, UnitRollup>();
  for (const s of sums) {
    if (s.n <= 0) continue;
    addUnitSums(rollupOf(rollups, s), s);
  }
  return [...rollups.values()];
}

/** The unit deltas of results whose metrics join a user's unit: one more value per metric, per user. */
export function unitDeltasOfResults(results: Iterable<RolledResult>): UnitDelta[] {
  const deltas: UnitDelta[] = [];
  for (const r of results) {
    if (!r.metrics || r.unitUserId === undefined || r.unitUserId === null) continue;
    for (const [metric, value] of Object.entries(r.metrics)) {
      const kind = metricKind(value);
      if (kind === undefined || r.overCap?.has(metric)) continue;
      deltas.push({
        experimentId: r.experimentId,
        userId: r.unitUserId,
        version: r.version,
        variantKey: r.variantKey,
        metric,
        kind,
        dn: 1,
        dsum: kind === 'mean' ? (value as number) : value ? 1 : 0,
      });
    }
  }
  return mergeUnitDeltas(deltas);
}
