// Owns sample-size planning: units per variant needed to detect a minimum detectable effect (MDE), with a
// margin for a variance and a control mean that are themselves estimates from the units seen so far.
import type { MetricKind } from './arms.js';
import type { AnalysisMethod } from './comparison.js';
import { chiSquareQuantile, normalCdf, normalQuantile } from './distributions.js';
import { isProbability } from './guards.js';
import { DEFAULT_N_STAR, sequentialHalfWidth, sequentialRho } from './sequential.js';
import type { EffectType, Sided } from './types.js';

export const DEFAULT_POWER = 0.8;
/**
 * One-sided confidence of the bounds a measured variance and control mean are read at. With the point
 * estimates, a pilot's noise leaves the plan short as often as long, and power falls faster on the short side
 * than it rises on the long one: test/stats-power-pilot.test.ts measured 0.57–0.77 from 30-unit pilots at the
 * plug-in n, and 0.815–0.898 with these bounds for every method and pilot size (docs/statistics.md). 80% is
 * Browne's (1995) choice for the variance of a pilot.
 */
export const PLANNING_CONFIDENCE = 0.8;

export interface PowerInput {
  /** Per-unit variance of the metric (the control arm's `ArmSummary.variance`); null: unknown. */
  variance: number | null;
  /** The control arm's mean; null: unknown. */
  controlMean: number | null;
  /** The effect to detect: a fraction of the control mean for 'relative' (0.05 = 5%), else in metric units. */
  mde: number;
  alpha: number;
  /** Chance to detect an effect of size mde. Default 0.8. */
  power?: number;
  /** The alternative the test will use ('greater' and 'less' need z_{1-alpha}, 'two' z_{1-alpha/2}). Default 'two'. */
  sided?: Sided;
  /** Default 'relative'. */
  effect?: EffectType;
  /** The method the experiment is analysed with: the sequential test needs more units. Default 'frequentist'. */
  method?: AnalysisMethod;
  /** Sequential only: the confidence sequence's tuning (total sample size it is tightest at). Default 5000. */
  nStar?: number;
  /**
   * 'proportion': a share of trues, whose variance moves with the rate (the treatment's is read at the shifted
   * rate). Default 'mean'.
   */
  kind?: MetricKind;
  /**
   * The units the variance and control mean were measured on (the control's n). Given, the plan reads them at
   * their one-sided `confidence` bounds (the worse side); absent or null, they are taken as known.
   */
  units?: number | null;
  /** Confidence of those bounds. Default PLANNING_CONFIDENCE (0.8). */
  confidence?: number;
}

/**
 * Means: spread = v_C + v_T. The treatment's variance is read at the shifted mean under the larger of two
 * models: a shift (v_T = v_C) and, for a relative mde, a scale change (v_T = v_C (1 + mde)^2 for an increase:
 * a cost 15% higher with the same shape has a 32% larger variance). Measured on `units`, v is read at its
 * chi-square upper bound v (units - 1) / chi2_{1-confidence}(units - 1), and for a relative mde |m_C| at its
 * lower bound |m_C| - z_confidence sqrt(v / units) (no plan when that reaches 0: the effect's size is unknown).
 */
function meanPlan(variance: number, mean: number | null, o: Resolved): number | null {
  const { mde, effect, units, z } = o;
  const upper =
    units === null ? variance : (variance * (units - 1)) / chiSquareQuantile(1 - o.confidence, units - 1);
  let delta = mde;
  let scale = 1;
  if (effect === 'relative') {
    if (mean === null || !Number.isFinite(mean) || mean === 0) return null;
    const size = Math.abs(mean) - (units === null ? 0 : z * Math.sqrt(variance / units));
    if (!(size > 0)) return null;
    delta = mde * size;
    // Under the scale model only a move away from 0 grows the variance; a move toward 0 plans as a shift.
    const away = o.sided === 'two' || (o.sided === 'greater') === mean > 0;
    if (away) scale = (1 + mde) ** 2;
  }
  // A ratio of like units (spread / delta / delta), so that values up to 1e100 neither overflow nor underflow.
  return ((1 + scale) * upper) / delta / delta;
}

/** Wilson's score interval for a rate p measured on n units at normal quantile z (one bound each side). */
function wilsonBounds(p: number, n: number, z: number): [number, number] {
  const z2n = (z * z) / n;
  const center = (p + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n))) / (1 + z2n);
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

/**
 * Proportions: spread = D (p(1 - p) + p'(1 - p')) with p' = p ± delta the shifted rate (the larger of the two
 * sides two-sided) and D = variance / (p(1 - p)) the design effect (1 per call; per user, the clustering the
 * delta method measured, kept as measured). Measured on `units`, p ranges over its Wilson interval on the
 * effective units / D at z_confidence each side, and the plan takes the rate there that needs the most units
 * (the lower bound for a relative mde; for an absolute one, the rate nearest 1/2 that the interval allows).
 */
function proportionPlan(variance: number, p: number | null, o: Resolved): number | null {
  if (p === null || !(p > 0 && p < 1)) return null;
  const { mde, effect, units, z } = o;
  const design = variance / (p * (1 - p));
  const [lo, hi] = units === null ? [p, p] : wilsonBounds(p, units / design, z);
  const clamp = (q: number) => Math.min(hi, Math.max(lo, q));
  const rates = effect === 'relative' ? [lo, hi] : [lo, hi, clamp((1 - mde) / 2), clamp((1 + mde) / 2)];
  const signs = o.sided === 'greater' ? [1] : o.sided === 'less' ? [-1] : [1, -1];
  let ratio: number | null = null;
  for (const q of rates) {
    const delta = effect === 'relative' ? mde * q : mde;
    for (const sign of signs) {
      const shifted = q + sign * delta;
      if (!(delta > 0 && shifted >= 0 && shifted <= 1)) continue;
      const r = (design * (q * (1 - q) + shifted * (1 - shifted))) / delta / delta;
      if (ratio === null || r > ratio) ratio = r;
    }
  }
  return ratio;
}

/** Power of the sequence's test at its last look, N = 2n, for a true effect of mu standard errors. */
function sequentialPower(mu: number, n: number, alpha: number, sided: Sided, nStar: number): number {
  const r = 2 * n * sequentialRho(sided === 'two' ? alpha : 2 * alpha, nStar) ** 2;
  const c = sequentialHalfWidth(1, r, alpha, sided);
  return normalCdf(mu - c) + (sided === 'two' ? normalCdf(-mu - c) : 0);
}

/** The smallest n per variant at which the sequence's last-look test (read at the total, N = 2n) has the power. */
function sequentialUnits(ratio: number, o: Resolved): number | null {
  const at = (n: number) => sequentialPower(Math.sqrt(n / ratio), n, o.alpha, o.sided, o.nStar);
  let [lo, hi] = [1, 2];
  while (at(hi) < o.power) {
    [lo, hi] = [hi, hi * 2];
    if (hi > 1e15) return null;
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (at(mid) >= o.power) hi = mid;
    else lo = mid;
  }
  return hi;
}

interface Resolved {
  mde: number;
  alpha: number;
  power: number;
  sided: Sided;
  effect: EffectType;
  nStar: number;
  units: number | null;
  confidence: number;
  /** z_confidence: the normal quantile of the pilot bounds. */
  z: number;
}

/** The options with defaults, or null when one is out of range. */
function resolve(input: PowerInput): Resolved | null {
  const {
    mde,
    alpha,
    power = DEFAULT_POWER,
    sided = 'two',
    effect = 'relative',
    method = 'frequentist',
    nStar = DEFAULT_N_STAR,
    units = null,
    confidence = PLANNING_CONFIDENCE,
  } = input;
  if (!(Number.isFinite(mde) && mde > 0) || !isProbability(alpha) || !isProbability(power)) return null;
  if (!['two', 'greater', 'less'].includes(sided) || !['relative', 'absolute'].includes(effect)) return null;
  if (!['frequentist', 'bayesian', 'sequential'].includes(method) || !(Number.isFinite(nStar) && nStar > 0)) {
    return null;
  }
  if (units !== null && !(Number.isFinite(units) && units >= 2)) return null;
  if (!isProbability(confidence)) return null;
  return { mde, alpha, power, sided, effect, nStar, units, confidence, z: normalQuantile(confidence) };
}

/**
 * Two-arm normal approximation with equal arms. Significance is decided by the absolute difference's test
 * (Welch, its score or sequential counterpart, or the flat-prior posterior, which equals the z-test), so the
 * effect's variance at n units per arm is spread / n with spread = v_C + v_T: 2 v for means, p(1 - p) +
 * p'(1 - p') at the shifted rate for proportions, each read at the pilot's bounds when `units` is given
 * (meanPlan, proportionPlan). With delta the effect in metric units:
 * frequentist and bayesian: n = (z_{1-alpha/2} (or z_{1-alpha}) + z_power)^2 spread / delta^2;
 * sequential: the smallest n at which the confidence sequence's test at N = 2n (tuned to nStar) has that power.
 * Returns n rounded up (the total units per variant, those measured included), or null when it cannot be
 * computed: unknown or zero variance, a control mean of 0 (or not known to differ from 0) for a relative mde,
 * a rate outside (0, 1) or an impossible shift for a proportion, or an option out of range.
 */
export function unitsForPower(input: PowerInput): number | null {
  const o = resolve(input);
  const { variance, controlMean } = input;
  if (o === null || variance === null || !(Number.isFinite(variance) && variance > 0)) return null;
  // ratio = spread / delta^2: the units per arm at which the effect is one standard error.
  const ratio =
    input.kind === 'proportion'
      ? proportionPlan(variance, controlMean, o)
      : meanPlan(variance, controlMean, o);
  if (ratio === null || !Number.isFinite(ratio)) return null;
  if (input.method === 'sequential') {
    if (o.sided !== 'two' && o.alpha >= 0.5) return null;
    return sequentialUnits(ratio, o);
  }
  const z = -normalQuantile(o.sided === 'two' ? o.alpha / 2 : o.alpha) + normalQuantile(o.power);
  const n = z * z * ratio;
  return Number.isFinite(n) ? Math.ceil(n) : null;
}
