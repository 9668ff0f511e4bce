// Users' bins of a capped metric (issue 33 item 10, ADR 0035): in a sticky experiment a cap applies to each
// user's mean per call, so the analysis needs, around any cap, the users above it and their sums. Each user
// sits in the DDSketch bin (stats/sketch.ts) of its mean x/y; a bin keeps its users' count and Σx, Σx², Σy,
// Σy², Σxy, moved at write time as a user's sums change (out of the old bin, into the new). Pure.
import { type SketchSide, sketchBin } from '../stats/sketch.js';
import type { DeclaredSums } from './declared.js';
import { addUserPairs, type PairMoves } from './pairs.js';
import type { HourWatcher } from './unit-hours.js';
import { type UnitSum, unitKey } from './units.js';

/** One bin of users of a variant and metric: how many, and the sums over their (x, y). */
export interface UnitBin {
  experimentId: number;
  version: number;
  variantKey: string;
  metric: string;
  side: SketchSide;
  key: number;
  units: number;
  sumX: number;
  sumX2: number;
  sumY: number;
  sumY2: number;
  sumXY: number;
}

export const unitBinKey = (b: Omit<UnitBin, 'units' | 'sumX' | 'sumX2' | 'sumY' | 'sumY2' | 'sumXY'>) =>
  `${b.experimentId}\u0000${b.version}\u0000${b.variantKey}\u0000${b.metric}\u0000${b.side}\u0000${b.key}`;

/** Moves per bin, in the order first seen. */
export class UnitBinMoves {
  private readonly bins = new Map<string, UnitBin>();

  /** Adds (sign 1) or takes out (-1) a user with sums (x, y), y > 0, to the bin of x / y. */
  move(
    at: Omit<UnitBin, 'side' | 'key' | 'units' | 'sumX' | 'sumX2' | 'sumY' | 'sumY2' | 'sumXY'>,
    x: number,
    y: number,
    sign: number,
  ): void {
    const { side, key } = sketchBin(x / y);
    const id = unitBinKey({ ...at, side, key });
    let b = this.bins.get(id);
    if (!b) {
      b = { ...at, side, key, units: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 };
      this.bins.set(id, b);
    }
    b.units += sign;
    b.sumX += sign * x;
    b.sumX2 += sign * x * x;
    b.sumY += sign * y;
    b.sumY2 += sign * y * y;
    b.sumXY += sign * x * y;
  }

  rows(): UnitBin[] {
    return [...this.bins.values()];
  }
}

/** The bin moves of users whose numeric sums of a capped metric changed from `before` to `after`. */
export function addUserBins(
  moves: UnitBinMoves,
  before: ReadonlyMap<string, UnitSum>,
  after: readonly UnitSum[],
  declared: (experimentId: number) => DeclaredSums | null | undefined,
): void {
  for (const s of after) {
    if (s.kind !== 'mean' || !declared(s.experimentId)?.capped.includes(s.metric)) continue;
    const at = {
      experimentId: s.experimentId,
      version: s.version,
      variantKey: s.variantKey,
      metric: s.metric,
    };
    const old = before.get(unitKey(s));
    if (old && old.n > 0) moves.move(at, old.sum, old.n, -1);
    if (s.n > 0) moves.move(at, s.sum, s.n, 1);
  }
}

/**
 * What watches the users' sums hour by hour (core/unit-hours.ts) for a batch's declared pairs and caps: their
 * moves added to `pairs` and `bins`. None when the batch declares nothing (`declared` null).
 */
export function declaredWatcher(
  declared: ((experimentId: number) => DeclaredSums | undefined) | null,
  pairs: PairMoves,
  bins: UnitBinMoves,
): HourWatcher | undefined {
  if (declared === null) return undefined;
  return (hour, before, after) => {
    addUserPairs(pairs, hour, before, after, declared);
    addUserBins(bins, before, after, declared);
  };
}
