// The draw, exactly as the server makes it (src/core/assignment.ts, ported; the client imports nothing
// from the server). GrowthBook's v2 hash for sticky experiments, a weighted pick for random ones.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a 32-bit over the UTF-16 code units of `s` (as GrowthBook's SDKs do). */
export function fnv1a32(s: string): number {
  return fnvContinue(FNV_OFFSET, s) >>> 0;
}

/** Continues an FNV-1a 32 state over `s`; the state is an int32 (use `>>> 0` for the unsigned value). */
export function fnvContinue(state: number, s: string): number {
  let h = state;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

/** GrowthBook hash version 2: a number in [0, 1) with 4 decimal places. */
export function hashV2(seed: string, value: string): number {
  return (fnv1a32(String(fnv1a32(seed + value))) % 10000) / 10000;
}

/**
 * hashV2 with the seed's FNV state computed once (`seedState = fnvContinue(FNV offset, seed)`): the same
 * number, without building `seed + value` or `String(n)`.
 */
export function hashV2From(seedState: number, value: string): number {
  const n = fnvContinue(seedState, value) >>> 0;
  // FNV over the decimal digits of n, as String(n) would give them. n < 2^32 splits into two parts that
  // stay small integers (a double's % and floor cost several times more).
  const hi = Math.floor(n / 100000);
  const lo = n - hi * 100000;
  let h = 0x811c9dc5;
  let width = 1;
  if (hi > 0) {
    h = fnvDigits(h, hi, 1);
    width = 5; // lo is zero-padded after a leading part
  }
  h = fnvDigits(h, lo, width);
  return ((h >>> 0) % 10000) / 10000;
}

/** FNV over the decimal digits of x (a small non-negative integer), padded with zeros to `width`. */
function fnvDigits(state: number, x: number, width: number): number {
  let div = 1;
  let len = 1;
  while (len < width || div * 10 <= x) {
    div *= 10;
    len++;
  }
  let h = state;
  let rest = x;
  while (div > 0) {
    const d = (rest / div) | 0;
    h = Math.imul(h ^ (48 + d), FNV_PRIME);
    rest -= d * div;
    div = (div / 10) | 0;
  }
  return h;
}

/** The FNV state after `seed`, for hashV2From. */
export function seedState(seed: string): number {
  return fnvContinue(FNV_OFFSET, seed);
}

/** GrowthBook hash version 1 (biased; kept for namespaces): a number in [0, 1) with 3 decimal places. */
export function hashV1(seed: string, value: string): number {
  return (fnv1a32(value + seed) % 1000) / 1000;
}

/** GrowthBook's hash(seed, value, version): null for a version it does not know. */
export function hash(seed: string, value: string, version: number): number | null {
  if (version === 1) return hashV1(seed, value);
  if (version === 2) return hashV2(seed, value);
  return null;
}

/** GrowthBook's namespace test (a layer): hash v1 of the unit id, seed "__" + key, in [start, end). */
export function inNamespace(unitId: string, namespace: readonly [string, number, number]): boolean {
  const n = hashV1(`__${namespace[0]}`, unitId);
  return n >= namespace[1] && n < namespace[2];
}

/** `n` equal weights summing to 1 (none for n <= 0), as GrowthBook's getEqualWeights. */
export function getEqualWeights(n: number): number[] {
  return n <= 0 ? [] : new Array<number>(n).fill(1 / n);
}

export type BucketRange = [number, number];

/**
 * GrowthBook's getBucketRanges: the weights (equal ones when they are missing, of the wrong length or do
 * not sum to 1 within 0.01) laid end to end, each range shrunk from its start to `coverage` (clamped to
 * [0, 1]) of its width, so raising coverage only adds units.
 */
export function bucketRanges(numVariants: number, coverage = 1, weights?: number[] | null): BucketRange[] {
  const c = Math.min(1, Math.max(0, coverage));
  const total = weights ? weights.reduce((a, b) => a + b, 0) : 0;
  const w =
    weights && weights.length === numVariants && total >= 0.99 && total <= 1.01
      ? weights
      : getEqualWeights(numVariants);
  let cumulative = 0;
  return w.map((weight) => {
    const start = cumulative;
    cumulative += weight;
    return [start, start + c * weight];
  });
}

/** Index of the range that holds `n` (start inclusive, end exclusive), or -1 when none does. */
export function chooseVariant(n: number, ranges: BucketRange[]): number {
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i]!;
    if (n >= r[0] && n < r[1]) return i;
  }
  return -1;
}

/**
 * Picks an index by weight: the first cumulative weight strictly above the draw. A zero weight never
 * wins, because its cumulative value equals its predecessor's.
 */
export function pickWeighted(cumulative: Float64Array, random: () => number): number {
  const total = cumulative[cumulative.length - 1]!;
  const u = random() * total;
  for (let i = 0; i < cumulative.length; i++) {
    if (u < cumulative[i]!) return i;
  }
  return pickLastWeighted(cumulative);
}

/** The last variant with a weight above 0 (float dust at the very end of the hash space). */
export function pickLastWeighted(cumulative: Float64Array): number {
  for (let i = cumulative.length - 1; i > 0; i--) {
    if (cumulative[i]! > cumulative[i - 1]!) return i;
  }
  return 0;
}
