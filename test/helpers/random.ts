// A seeded uniform source (mulberry32), so tests that draw randomness are repeatable.

export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Alternating draws (0.25, 0.75, 0.25, …): with A/B 50/50 the first assignment goes to A, the next to B,
 * and so on, so 2n assignments put exactly n in each variant.
 */
export function alternating(): () => number {
  let i = 0;
  return () => (i++ % 2 === 0 ? 0.25 : 0.75);
}
