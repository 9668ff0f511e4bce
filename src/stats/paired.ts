// Owns the paired comparison of two variants run over the same items (issue 40: offline runs on a dataset):
// per item the mean of its trials in each variant, the item's difference d = treatment − control; the mean
// difference with a paired t interval (scipy ttest_rel on the item means), the Wilcoxon signed-rank p-value
// (./signed-rank.ts), a bootstrap interval over items with trials resampled within them, McNemar's exact
// test for pass/fail metrics with one trial (statsmodels mcnemar, exact), wins, ties and losses; with
// repeated trials, the share of the variance that is generation noise against differences between items;
// and the items a run needs to detect a given difference.
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { normalQuantile, studentTCdf, studentTQuantile } from './distributions.js';
import { type SignedRank, signedRank } from './signed-rank.js';
import { betaIncomplete } from './special.js';

/** One variant's values of one metric: each item's trials. */
export type ItemValues = ReadonlyMap<string, readonly number[]>;

export interface PairedOptions {
  /** Two-sided level of the intervals (default 0.05). */
  alpha?: number;
  /** pass/fail (0/1) values: McNemar's test too. */
  proportion?: boolean;
  /** Bootstrap resamples (default 2000) and seed (default 1): the same data give the same interval. */
  resamples?: number;
  seed?: number;
  /** The smallest difference worth detecting (in the metric's units): the items needed for it at 80% power. */
  minimumEffect?: number;
}

export interface VarianceShare {
  /** Share of a single trial's variance that is repeated-generation noise (within an item), 0–1. */
  generation: number;
  /** Share that is differences between items. */
  items: number;
}

export interface PairedComparison {
  /** Items with values in both variants (the others are left out, counted in `unpaired`). */
  items: number;
  unpaired: number;
  control: { mean: number };
  treatment: { mean: number };
  difference: {
    estimate: number;
    /** Paired t interval on the items' differences. */
    ci: [number, number] | null;
    se: number | null;
    /** Paired t test's two-sided p-value. */
    pValue: number | null;
  };
  wilcoxon: SignedRank | null;
  /** Percentile interval of the mean difference, items resampled and trials within them. */
  bootstrap: { ci: [number, number]; resamples: number } | null;
  /** Pass/fail with one trial per item: b (control passed, treatment failed), c (the reverse), exact p. */
  mcnemar: { b: number; c: number; pValue: number } | null;
  wins: number;
  ties: number;
  losses: number;
  /** With repeated trials in both variants: where the variance of one trial comes from (pooled over both). */
  variance: VarianceShare | null;
  /** Items needed to detect `minimumEffect` (else the observed difference) at alpha, 80% power. */
  itemsNeeded: number | null;
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

function sampleVariance(xs: readonly number[]): number {
  if (xs.length < 2) return Number.NaN;
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

/** Two-sided exact binomial test of b successes in b + c at 1/2 (statsmodels mcnemar, exact=True). */
function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // P(X ≤ k) for X ~ Binomial(n, 1/2) = I_{1/2}(n − k, k + 1).
  const cdf = k >= n ? 1 : betaIncomplete(0.5, 0.5, n - k, k + 1);
  return Math.min(1, 2 * cdf);
}

/**
 * One-way random effects over items (each variant apart, then pooled): within-item variance (trials) and
 * between-item variance of the true item means, by the ANOVA estimator (negative estimates taken as 0).
 */
function varianceShare(variants: ReadonlyArray<readonly (readonly number[])[]>): VarianceShare | null {
  let within = 0;
  let between = 0;
  let used = 0;
  for (const items of variants) {
    const groups = items.filter((g) => g.length > 0);
    const total = groups.reduce((s, g) => s + g.length, 0);
    const k = groups.length;
    if (k < 2 || total - k < 1) continue;
    const grand = groups.reduce((s, g) => s + g.reduce((a, x) => a + x, 0), 0) / total;
    let ssw = 0;
    let ssb = 0;
    for (const g of groups) {
      const m = mean(g);
      ssb += g.length * (m - grand) ** 2;
      for (const x of g) ssw += (x - m) ** 2;
    }
    const msw = ssw / (total - k);
    const msb = ssb / (k - 1);
    // The effective trials per item (unbalanced designs: n0 of the ANOVA estimator).
    const n0 = (total - groups.reduce((s, g) => s + g.length ** 2, 0) / total) / (k - 1);
    within += msw;
    between += Math.max(0, (msb - msw) / n0);
    used++;
  }
  if (used === 0 || within + between === 0) return null;
  return { generation: within / (within + between), items: between / (within + between) };
}

/** The paired comparison of `treatment` against `control` over the items both have. */
export function comparePaired(
  control: ItemValues,
  treatment: ItemValues,
  o: PairedOptions = {},
): PairedComparison {
  const alpha = o.alpha ?? 0.05;
  const ids = [...control.keys()]
    .filter((id) => (control.get(id)?.length ?? 0) > 0 && (treatment.get(id)?.length ?? 0) > 0)
    .sort();
  const all = new Set([...control.keys(), ...treatment.keys()]);
  const a = ids.map((id) => control.get(id)!);
  const b = ids.map((id) => treatment.get(id)!);
  const ma = a.map(mean);
  const mb = b.map(mean);
  const d = mb.map((x, i) => x - ma[i]!);
  const n = d.length;
  const estimate = n > 0 ? mean(d) : Number.NaN;
  let ci: [number, number] | null = null;
  let se: number | null = null;
  let pValue: number | null = null;
  if (n >= 2) {
    const sd = Math.sqrt(sampleVariance(d));
    se = sd / Math.sqrt(n);
    if (se > 0) {
      const t = estimate / se;
      pValue = Math.min(1, 2 * studentTCdf(-Math.abs(t), n - 1));
      const q = studentTQuantile(1 - alpha / 2, n - 1);
      ci = [estimate - q * se, estimate + q * se];
    } else {
      pValue = estimate === 0 ? 1 : 0;
      ci = [estimate, estimate];
    }
  }
  const wins = d.filter((x) => x > 0).length;
  const losses = d.filter((x) => x < 0).length;
  let mcnemar: PairedComparison['mcnemar'] = null;
  const single = a.every((t) => t.length === 1) && b.every((t) => t.length === 1);
  if (o.proportion === true && single && n > 0) {
    let bc = 0;
    let cb = 0;
    for (let i = 0; i < n; i++) {
      if (a[i]![0] === 1 && b[i]![0] === 0) bc++;
      if (a[i]![0] === 0 && b[i]![0] === 1) cb++;
    }
    mcnemar = { b: bc, c: cb, pValue: mcnemarExact(bc, cb) };
  }
  const repeated = a.some((t) => t.length > 1) && b.some((t) => t.length > 1);
  const sdD = n >= 2 ? Math.sqrt(sampleVariance(d)) : Number.NaN;
  const effect = o.minimumEffect ?? Math.abs(estimate);
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(0.8);
  const itemsNeeded =
    Number.isFinite(sdD) && effect > 0 ? Math.max(2, Math.ceil(((z * sdD) / effect) ** 2)) : null;
  return {
    items: n,
    unpaired: all.size - n,
    control: { mean: n > 0 ? mean(ma) : Number.NaN },
    treatment: { mean: n > 0 ? mean(mb) : Number.NaN },
    difference: { estimate, ci, se, pValue },
    wilcoxon: signedRank(d),
    bootstrap: n >= 2 ? bootstrap(a, b, alpha, o.resamples ?? 2000, o.seed ?? 1) : null,
    mcnemar,
    wins,
    ties: n - wins - losses,
    losses,
    variance: repeated ? varianceShare([a, b]) : null,
    itemsNeeded,
  };
}

/**
 * The percentile interval of the mean item difference: items drawn with replacement, and within each drawn
 * item its trials drawn with replacement in each variant (the two-stage bootstrap of nested data).
 */
function bootstrap(
  a: ReadonlyArray<readonly number[]>,
  b: ReadonlyArray<readonly number[]>,
  alpha: number,
  resamples: number,
  seed: number,
): { ci: [number, number]; resamples: number } {
  const rng = xoroshiro128plus(seed);
  const index = (n: number) => Math.floor(uniformFloat64(rng) * n);
  const drawMean = (t: readonly number[]) => {
    if (t.length === 1) return t[0]!;
    let s = 0;
    for (let j = 0; j < t.length; j++) s += t[index(t.length)]!;
    return s / t.length;
  };
  const n = a.length;
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const k = index(n);
      s += drawMean(b[k]!) - drawMean(a[k]!);
    }
    means[r] = s / n;
  }
  means.sort();
  // numpy.percentile's default (linear) interpolation.
  const at = (q: number) => {
    const h = (resamples - 1) * q;
    const lo = Math.floor(h);
    const hi = Math.min(resamples - 1, lo + 1);
    return means[lo]! + (h - lo) * (means[hi]! - means[lo]!);
  };
  return { ci: [at(alpha / 2), at(1 - alpha / 2)], resamples };
}
