// Pair sums (issue 33 items 9 and 11, ADR 0035): what a ratio metric (Σ numerator / Σ denominator) and a
// regression adjustment (a metric on its covariate) need beyond each metric's own rollups: per unit, the
// cross products of two metrics' values. A unit is a call (its own values), or a user in sticky experiments
// (its running sums, core/units.ts). Each write moves a variant's row by the difference it makes to its
// units' contributions, so the analysis reads one row per variant and pair. Pure.
import { type DeclaredSums, type Pair, pairId } from './declared.js';

import { metricKind, type RolledResult } from './rollups.js';
import { type UnitSum, unitKey } from './units.js';

/**
 * Sums over units of a pair (CovariateMoments' columns, stats/cuped.ts). Ratio: x = the unit's Σ first,
 * y = its Σ second, over units with either (z columns 0). Adjustment: x = the unit's Σ first, y = its count
 * of first, z = its mean of second (0 without one), over units with first.
 */
export interface PairSums {
  n: number;
  sumX: number;
  sumX2: number;
  sumY: number;
  sumY2: number;
  sumXY: number;
  sumZ: number;
  sumZ2: number;
  sumXZ: number;
  sumYZ: number;
}

export const PAIR_SUMS = [
  'n',
  'sumX',
  'sumX2',
  'sumY',
  'sumY2',
  'sumXY',
  'sumZ',
  'sumZ2',
  'sumXZ',
  'sumYZ',
] as const satisfies readonly (keyof PairSums)[];

/** A row of pair sums of one experiment, version, variant and unit (and hour, for the time series). */
export interface PairRollup extends PairSums {
  experimentId: number;
  version: number;
  variantKey: string;
  /** pairId. */
  pair: string;
  unit: 'user' | 'call';
  hour?: string;
}

export const pairRollupKey = (r: Omit<PairRollup, keyof PairSums>): string =>
  `${r.hour ?? ''}\u0000${r.experimentId}\u0000${r.version}\u0000${r.variantKey}\u0000${r.pair}\u0000${r.unit}`;

/** One unit's values of a metric: how many, and their sum (true = 1). */
export interface Tally {
  n: number;
  sum: number;
}

/** A unit's contribution to its pair's sums, times `sign`, added to `into`. */
export function addContribution(into: PairSums, pair: Pair, a: Tally, b: Tally, sign: number): void {
  if (pair.role === 'ratio') {
    if (a.n === 0 && b.n === 0) return;
    const [x, y] = [a.sum, b.sum];
    into.n += sign;
    into.sumX += sign * x;
    into.sumX2 += sign * x * x;
    into.sumY += sign * y;
    into.sumY2 += sign * y * y;
    into.sumXY += sign * x * y;
    return;
  }
  if (a.n === 0) return;
  const [x, y, z] = [a.sum, a.n, b.n > 0 ? b.sum / b.n : 0];
  into.n += sign;
  into.sumX += sign * x;
  into.sumX2 += sign * x * x;
  into.sumY += sign * y;
  into.sumY2 += sign * y * y;
  into.sumXY += sign * x * y;
  into.sumZ += sign * z;
  into.sumZ2 += sign * z * z;
  into.sumXZ += sign * x * z;
  into.sumYZ += sign * y * z;
}

export const noSums = (): PairSums => ({
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

/** Adds `b`'s sums to `a`. */
export function addSums(a: PairSums, b: PairSums): void {
  for (const k of PAIR_SUMS) a[k] += b[k];
}

/** Collects moves per row key; rows come out in the order first seen. */
export class PairMoves {
  private readonly rows = new Map<string, PairRollup>();

  row(key: Omit<PairRollup, keyof PairSums>): PairRollup {
    const k = pairRollupKey(key);
    let r = this.rows.get(k);
    if (!r) {
      r = { ...key, ...noSums() };
      this.rows.set(k, r);
    }
    return r;
  }

  /** The rows that moved, all-time (no hour) and per hour. */
  split(): { all: PairRollup[]; hourly: PairRollup[] } {
    const all: PairRollup[] = [];
    const hourly: PairRollup[] = [];
    for (const r of this.rows.values()) (r.hour === undefined ? all : hourly).push(r);
    return { all, hourly };
  }
}

const tallyOfValue = (value: unknown): Tally => {
  const kind = metricKind(value);
  if (kind === undefined) return { n: 0, sum: 0 };
  return { n: 1, sum: kind === 'mean' ? (value as number) : value ? 1 : 0 };
};

/**
 * The calls' contributions: results analysed per call (no user's unit) of experiments that declare pairs,
 * all-time and in their hour. Names over the metric cap count as absent.
 */
export function addCallPairs(moves: PairMoves, results: Iterable<RolledResult>): void {
  for (const r of results) {
    const pairs = r.declared?.pairs;
    if (!pairs || pairs.length === 0 || !r.metrics || (r.unitUserId !== undefined && r.unitUserId !== null)) {
      continue;
    }
    for (const pair of pairs) {
      const value = (name: string) => (r.overCap?.has(name) ? undefined : r.metrics![name]);
      const a = tallyOfValue(value(pair.first));
      const b = tallyOfValue(value(pair.second));
      if (a.n === 0 && b.n === 0) continue;
      const key = {
        experimentId: r.experimentId,
        version: r.version,
        variantKey: r.variantKey,
        pair: pairId(pair),
        unit: 'call' as const,
      };
      addContribution(moves.row(key), pair, a, b, 1);
      if (r.hour !== undefined) addContribution(moves.row({ ...key, hour: r.hour }), pair, a, b, 1);
    }
  }
}

/** A user's sums of one metric, both kinds added (`sums` holds UnitSums by unitKey). */
export function tallyOf(
  sums: (key: string) => UnitSum | undefined,
  user: Omit<UnitSum, 'n' | 'sum' | 'kind'>,
): Tally {
  const a = sums(unitKey({ ...user, kind: 'mean' }));
  const b = sums(unitKey({ ...user, kind: 'proportion' }));
  return { n: (a?.n ?? 0) + (b?.n ?? 0), sum: (a?.sum ?? 0) + (b?.sum ?? 0) };
}

/**
 * The sums a batch's user deltas need read besides their own (the memory store reads by key): for every
 * user and metric touched in a pair, the other metric's sums of both kinds.
 */
export function partnerKeys(
  touched: Iterable<Omit<UnitSum, 'n' | 'sum'>>,
  declared: (experimentId: number) => DeclaredSums | null | undefined,
): Array<Omit<UnitSum, 'n' | 'sum'>> {
  const out: Array<Omit<UnitSum, 'n' | 'sum'>> = [];
  for (const t of touched) {
    for (const pair of declared(t.experimentId)?.pairs ?? []) {
      const other = t.metric === pair.first ? pair.second : t.metric === pair.second ? pair.first : undefined;
      if (other === undefined) continue;
      out.push({ ...t, metric: other, kind: 'mean' }, { ...t, metric: other, kind: 'proportion' });
    }
  }
  return out;
}

/** `after` (sums an hour changed) over `before` (every sum read): the sums at the hour's end. */
export function overlay(
  before: ReadonlyMap<string, UnitSum>,
  after: readonly UnitSum[],
): (key: string) => UnitSum | undefined {
  const changed = new Map(after.map((s) => [unitKey(s), s]));
  return (key) => changed.get(key) ?? before.get(key);
}

/**
 * The users' contributions moved by one hour: for every user whose sums of a paired metric changed (`after`),
 * its old contribution (from `before`) out and its new one in, all-time and in the hour's rows. `before` must
 * hold the partner metrics' sums too (a user's every stored sum is read).
 */
export function addUserPairs(
  moves: PairMoves,
  hour: string,
  before: ReadonlyMap<string, UnitSum>,
  after: readonly UnitSum[],
  declared: (experimentId: number) => DeclaredSums | null | undefined,
): void {
  const old = (key: string) => before.get(key);
  const now = overlay(before, after);
  const done = new Set<string>();
  for (const t of after) {
    for (const pair of declared(t.experimentId)?.pairs ?? []) {
      if (t.metric !== pair.first && t.metric !== pair.second) continue;
      const key = {
        experimentId: t.experimentId,
        version: t.version,
        variantKey: t.variantKey,
        pair: pairId(pair),
        unit: 'user' as const,
      };
      const once = `${t.userId}\u0000${pairRollupKey(key)}`;
      if (done.has(once)) continue;
      done.add(once);
      const user = {
        experimentId: t.experimentId,
        userId: t.userId,
        version: t.version,
        variantKey: t.variantKey,
      };
      const [a, b] = [
        { ...user, metric: pair.first },
        { ...user, metric: pair.second },
      ];
      for (const row of [moves.row(key), moves.row({ ...key, hour })]) {
        addContribution(row, pair, tallyOf(old, a), tallyOf(old, b), -1);
        addContribution(row, pair, tallyOf(now, a), tallyOf(now, b), 1);
      }
    }
  }
}
