// Per-user sums by the hour (issue 23): the time series of a sticky experiment needs, for every hour, the
// unit rollups as they stood at its end. Each write batch's moves of the unit rollups (core/units.ts) are
// also kept per hour written, so the cumulative sum of an experiment's hourly increments up to hour t is
// its unit rollup as of t, and over every hour it is unit_rollups itself. Pure.

import type { RolledResult } from './rollups.js';
import {
  applyUnitDeltas,
  mergeUnitDeltas,
  type UnitDelta,
  type UnitRollup,
  type UnitSum,
  unitDeltasOfResults,
  unitKey,
} from './units.js';

/** A unit delta and the hour it was written in (a result's hour; feedback's: the hour of that feedback write). */
export interface HourlyUnitDelta extends UnitDelta {
  hour: string;
}

/** How much the unit rollup of one variant and metric moved in one hour. */
export interface HourlyUnitRollup extends UnitRollup {
  hour: string;
}

/** unitDeltasOfResults per hour: a user with results in two hours of one batch gets a delta in each. */
export function unitDeltasByHour(results: readonly RolledResult[]): HourlyUnitDelta[] {
  const byHour = new Map<string, RolledResult[]>();
  for (const r of results) {
    if (r.hour === undefined || r.unitUserId === undefined || r.unitUserId === null) continue;
    const list = byHour.get(r.hour);
    if (list) list.push(r);
    else byHour.set(r.hour, [r]);
  }
  const out: HourlyUnitDelta[] = [];
  for (const [hour, rows] of byHour) {
    for (const d of unitDeltasOfResults(rows)) out.push({ ...d, hour: hour });
  }
  return out;
}

/**
 * Sees each hour's users' sums before (`before`: every stored sum read, as of the hour's start) and after
 * (`after`: the sums the hour changed), before the next hour is applied.
 */
export type HourWatcher = (
  hour: string,
  before: ReadonlyMap<string, UnitSum>,
  after: readonly UnitSum[],
) => void;

/**
 * Applies deltas hour by hour, oldest first, to the users' `current` sums: what each hour moved (the
 * users' sums at the end of the hour against those at its start, so the order of writes within an hour
 * does not matter), the users' final sums, and the total move (the sum of the hours' moves, so the
 * hourly rows and unit_rollups receive the same numbers).
 */
export function applyUnitDeltasByHour(
  deltas: readonly HourlyUnitDelta[],
  current: ReadonlyMap<string, UnitSum>,
  onHour?: HourWatcher,
): { sums: UnitSum[]; rollups: UnitRollup[]; hourly: HourlyUnitRollup[] } {
  const byHour = new Map<string, UnitDelta[]>();
  for (const d of deltas) {
    const { hour, ...delta } = d;
    const list = byHour.get(hour);
    if (list) list.push(delta);
    else byHour.set(hour, [delta]);
  }
  const hours = [...byHour.keys()].sort();
  // One hour (the usual batch): no copies.
  if (hours.length === 1) {
    const { sums, rollups } = applyUnitDeltas(mergeUnitDeltas(byHour.get(hours[0]!)!), current);
    onHour?.(hours[0]!, current, sums);
    return { sums, rollups, hourly: rollups.map((r) => ({ ...r, hour: hours[0]! })) };
  }
  const state = new Map(current);
  const finalSums = new Map<string, UnitSum>();
  const totals = new Map<string, UnitRollup>();
  const hourly: HourlyUnitRollup[] = [];
  for (const hour of hours) {
    const { sums, rollups } = applyUnitDeltas(mergeUnitDeltas(byHour.get(hour)!), state);
    onHour?.(hour, state, sums);
    for (const s of sums) {
      state.set(unitKey(s), s);
      finalSums.set(unitKey(s), s);
    }
    for (const r of rollups) {
      hourly.push({ ...r, hour });
      addUnitRollup(totals, r);
    }
  }
  return { sums: [...finalSums.values()], rollups: [...totals.values()], hourly };
}

export const unitRollupKey = (r: Omit<UnitRollup, 'units' | 'sumX' | 'sumX2' | 'sumY' | 'sumY2' | 'sumXY'>) =>
  `${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.metric}\u0000${r.kind}`;
export const hourlyUnitRollupKey = (r: HourlyUnitRollup) => `${r.hour}\u0000${unitRollupKey(r)}`;

/** Adds `r`'s moves to its row in `totals` (keyed by `key`, unitRollupKey by default), copying a new one in. */
export function addUnitRollup<T extends UnitRollup>(
  totals: Map<string, T>,
  r: T,
  key: (r: T) => string = unitRollupKey,
): void {
  const k = key(r);
  const total = totals.get(k);
  if (!total) {
    totals.set(k, { ...r });
    return;
  }
  total.units += r.units;
  total.sumX += r.sumX;
  total.sumX2 += r.sumX2;
  total.sumY += r.sumY;
  total.sumY2 += r.sumY2;
  total.sumXY += r.sumXY;
}
