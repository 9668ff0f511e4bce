// Pair sums per segment value (ADR 0035): a ratio (or an adjusted metric) read within a segment value, with
// the whole analysis' unit. As core/pairs.ts, keyed by the segment key and value too: calls counted in a value
// contribute their own values; users contribute their sums within the value (core/segment-units.ts), moved by
// the difference each write makes. Pure.
import { type DeclaredSums, pairId } from './declared.js';
import { addContribution, noSums, type PairRollup, type PairSums, type Tally } from './pairs.js';
import { metricKind } from './rollups.js';
import { type SegmentOf, type SegmentUnitSum, segmentUnitKey } from './segment-units.js';
import type { SegmentedResult } from './segments.js';

/** A pair row of one segment value (no hours: segments have no time series). */
export interface SegmentPairRollup extends Omit<PairRollup, 'hour'>, SegmentOf {}

type RowKey = Omit<SegmentPairRollup, keyof PairSums>;

export const segmentPairKey = (r: RowKey) =>
  `${r.experimentId}\u0000${r.key}\u0000${r.value}\u0000${r.version}\u0000${r.variantKey}\u0000${r.pair}\u0000${r.unit}`;

/** Moves per segment value's row, in the order first seen. */
export class SegmentPairMoves {
  private readonly rows = new Map<string, SegmentPairRollup>();

  row(key: RowKey): SegmentPairRollup {
    const k = segmentPairKey(key);
    let r = this.rows.get(k);
    if (!r) {
      r = { ...key, ...noSums() };
      this.rows.set(k, r);
    }
    return r;
  }

  all(): SegmentPairRollup[] {
    return [...this.rows.values()];
  }
}

const tallyOfValue = (value: unknown): Tally => {
  const kind = metricKind(value);
  if (kind === undefined) return { n: 0, sum: 0 };
  return { n: 1, sum: kind === 'mean' ? (value as number) : value ? 1 : 0 };
};

/** Calls counted in segment values (results analysed per call, of experiments that declare pairs). */
export function addSegmentCallPairs(moves: SegmentPairMoves, results: Iterable<SegmentedResult>): void {
  for (const { rolled: r, segments } of results) {
    const pairs = r.declared?.pairs;
    if (!pairs || pairs.length === 0 || !r.metrics || (r.unitUserId !== undefined && r.unitUserId !== null)) {
      continue;
    }
    for (const pair of pairs) {
      const value = (name: string) => (r.overCap?.has(name) ? undefined : r.metrics![name]);
      const a = tallyOfValue(value(pair.first));
      const b = tallyOfValue(value(pair.second));
      if (a.n === 0 && b.n === 0) continue;
      for (const key in segments) {
        const row = moves.row({
          experimentId: r.experimentId,
          key,
          value: segments[key]!,
          version: r.version,
          variantKey: r.variantKey,
          pair: pairId(pair),
          unit: 'call',
        });
        addContribution(row, pair, a, b, 1);
      }
    }
  }
}

/** A user's sums of a metric within a segment value, both kinds added. */
function tallyIn(
  sums: (key: string) => SegmentUnitSum | undefined,
  at: Omit<SegmentUnitSum, 'n' | 'sum' | 'kind'>,
): Tally {
  const a = sums(segmentUnitKey({ ...at, kind: 'mean' }));
  const b = sums(segmentUnitKey({ ...at, kind: 'proportion' }));
  return { n: (a?.n ?? 0) + (b?.n ?? 0), sum: (a?.sum ?? 0) + (b?.sum ?? 0) };
}

/**
 * Users' contributions within segment values moved from `before` (every sum read: a user's every value's) to
 * `after` (the sums a batch changed), as core/pairs.ts addUserPairs for the whole analysis.
 */
export function addSegmentUserPairs(
  moves: SegmentPairMoves,
  before: ReadonlyMap<string, SegmentUnitSum>,
  after: readonly SegmentUnitSum[],
  declared: (experimentId: number) => DeclaredSums | null | undefined,
): void {
  const changed = new Map(after.map((s) => [segmentUnitKey(s), s]));
  const old = (k: string) => before.get(k);
  const now = (k: string) => changed.get(k) ?? before.get(k);
  const done = new Set<string>();
  for (const t of after) {
    for (const pair of declared(t.experimentId)?.pairs ?? []) {
      if (t.metric !== pair.first && t.metric !== pair.second) continue;
      const row = {
        experimentId: t.experimentId,
        key: t.key,
        value: t.value,
        version: t.version,
        variantKey: t.variantKey,
        pair: pairId(pair),
        unit: 'user' as const,
      };
      const once = `${t.userId}\u0000${segmentPairKey(row)}`;
      if (done.has(once)) continue;
      done.add(once);
      const user = { ...t, metric: '' };
      const [a, b] = [
        { ...user, metric: pair.first },
        { ...user, metric: pair.second },
      ];
      const into = moves.row(row);
      addContribution(into, pair, tallyIn(old, a), tallyIn(old, b), -1);
      addContribution(into, pair, tallyIn(now, a), tallyIn(now, b), 1);
    }
  }
}
