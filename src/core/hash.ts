// GrowthBook's hashes of a unit (the sticky draw, rollouts' membership). Pure: no I/O, no imports.

/** FNV-1a 32-bit over the UTF-16 code units of `s` (as GrowthBook's SDKs do). */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** GrowthBook hash version 2: a number in [0, 1) with 4 decimal places. Frozen by golden vectors. */
export function hashV2(seed: string, value: string): number {
  return (fnv1a32(String(fnv1a32(seed + value))) % 10000) / 10000;
}
