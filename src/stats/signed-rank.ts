// Owns the Wilcoxon signed-rank test of paired differences, as scipy.stats.wilcoxon (1.17) computes it with
// its defaults (zero_method 'wilcox', no continuity correction, method 'auto'): zeros dropped, average ranks
// of |d|; exact null distribution for n ≤ 50 without ties or zeros; every sign flip enumerated (scipy's
// exact permutation test) for n ≤ 13 otherwise; the normal approximation with the tie correction beyond.
import { normalCdf } from './distributions.js';

export interface SignedRank {
  /** min(R+, R−): scipy's statistic for the two-sided test. */
  statistic: number;
  /** Two-sided p-value. */
  pValue: number;
  method: 'exact' | 'permutation' | 'normal';
  /** Non-zero differences ranked. */
  n: number;
}

/** Average ranks (1-based) of `values`, and the sizes of the groups of ties. */
function averageRanks(values: readonly number[]): { ranks: number[]; ties: number[] } {
  const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const ranks = new Array<number>(values.length);
  const ties: number[] = [];
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && values[order[j + 1]!] === values[order[i]!]) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k]!] = rank;
    ties.push(j - i + 1);
    i = j + 1;
  }
  return { ranks, ties };
}

/** R+ of differences `d` (zeros dropped): the sum of the ranks of |d| over the positive ones. */
function rankSums(d: readonly number[]): { plus: number; minus: number; count: number; ties: number[] } {
  const nonzero = d.filter((x) => x !== 0);
  const { ranks, ties } = averageRanks(nonzero.map(Math.abs));
  let plus = 0;
  let minus = 0;
  nonzero.forEach((x, i) => {
    if (x > 0) plus += ranks[i]!;
    else minus += ranks[i]!;
  });
  return { plus, minus, count: nonzero.length, ties };
}

/** P(W+ = k) for k = 0 … n(n+1)/2 under the null (no ties): the counts of subsets of 1…n summing to k, / 2^n. */
function exactDistribution(n: number): number[] {
  const max = (n * (n + 1)) / 2;
  let counts = new Array<number>(max + 1).fill(0);
  counts[0] = 1;
  for (let r = 1; r <= n; r++) {
    const next = counts.slice();
    for (let k = r; k <= max; k++) next[k]! += counts[k - r]!;
    counts = next;
  }
  const total = 2 ** n;
  return counts.map((c) => c / total);
}

/** The two-sided signed-rank test of paired differences `d` (treatment − control). */
export function signedRank(d: readonly number[]): SignedRank | null {
  const { plus, minus, count, ties } = rankSums(d);
  if (count === 0) return null;
  const statistic = Math.min(plus, minus);
  const zeros = d.length - count;
  const tied = ties.some((t) => t > 1);
  if (d.length <= 50 && !tied && zeros === 0) {
    const pmf = exactDistribution(count);
    let cdf = 0;
    let sf = 0;
    for (let k = 0; k < pmf.length; k++) {
      if (k <= Math.ceil(plus)) cdf += pmf[k]!;
      if (k >= Math.floor(plus)) sf += pmf[k]!;
    }
    return { statistic, pValue: Math.min(1, 2 * Math.min(cdf, sf)), method: 'exact', n: count };
  }
  if (d.length <= 13) {
    // Every sign flip of the differences (zeros stay zero), R+ recomputed: scipy's exact permutation test.
    const flips = 2 ** d.length;
    const eps = Math.abs(plus) * 1e-14 * 100;
    let below = 0;
    let above = 0;
    for (let mask = 0; mask < flips; mask++) {
      const flipped = d.map((x, i) => ((mask >> i) & 1 ? -x : x));
      const r = rankSums(flipped).plus;
      if (r <= plus + eps) below++;
      if (r >= plus - eps) above++;
    }
    return {
      statistic,
      pValue: Math.min(1, (2 * Math.min(below, above)) / flips),
      method: 'permutation',
      n: count,
    };
  }
  const mean = (count * (count + 1)) / 4;
  const tieCorrection = ties.reduce((sum, t) => sum + t ** 3 - t, 0);
  const se = Math.sqrt((count * (count + 1) * (2 * count + 1) - tieCorrection / 2) / 24);
  if (se === 0) return { statistic, pValue: 1, method: 'normal', n: count };
  const z = (plus - mean) / se;
  return { statistic, pValue: Math.min(1, 2 * normalCdf(-Math.abs(z))), method: 'normal', n: count };
}
