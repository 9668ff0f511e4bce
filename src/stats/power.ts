// Owns sample-size planning: units per variant needed to detect a minimum detectable effect (MDE).
import type { AnalysisMethod } from './compare.js';
import { normalCdf, normalQuantile } from './distributions.js';
import { isProbability } from './guards.js';
import { DEFAULT_N_STAR, sequentialHalfWidth, sequentialRho } from './sequential.js';
import type { EffectType, Sided } from './types.js';

export const DEFAULT_POWER = 0.8;

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
}

/** Power of the sequence's test at its last look, N = 2n, for a true effect of mu standard errors. */
function sequentialPower(mu: number, n: number, alpha: number, sided: Sided, nStar: number): number {
  const r = 2 * n * sequentialRho(sided === 'two' ? alpha : 2 * alpha, nStar) ** 2;
  const c = sequentialHalfWidth(1, r, alpha, sided);
  return normalCdf(mu - c) + (sided === 'two' ? normalCdf(-mu - c) : 0);
}

/** The smallest n per variant at which the sequence's last-look test has the power asked for. */
function sequentialUnits(
  delta: number,
  spread: number,
  alpha: number,
  power: number,
  sided: Sided,
  nStar: number,
) {
  const at = (n: number) => sequentialPower(delta * Math.sqrt(n / spread), n, alpha, sided, nStar);
  let [lo, hi] = [1, 2];
  while (at(hi) < power) {
    [lo, hi] = [hi, hi * 2];
    if (hi > 1e15) return null;
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (at(mid) >= power) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * Two-arm z approximation with equal arms and the control's variance in both. The decision needs the
 * absolute and the relative test to reject (compareArms), and the lift's standard error carries the
 * control's variance times (m_T/m_C)^2, so the binding variance of the effect is
 * spread / n = variance (1 + (1 + delta/|m_C|)^2) / n (2 variance / n when the control mean is unknown, for
 * an absolute mde), taking the larger (increasing) case:
 * frequentist and bayesian (flat prior, the calibrated rule): n = (z_{1-alpha/2} (or z_{1-alpha}) + z_power)^2
 * spread / delta^2; sequential: the smallest n at which the confidence sequence's test at N = 2n (tuned to
 * nStar) has that power. Returns n rounded up (units per variant), or null when it cannot be computed:
 * unknown or zero variance, a control mean of 0 for a relative mde, or an option out of range.
 */
export function unitsForPower(input: PowerInput): number | null {
  const {
    variance,
    controlMean,
    mde,
    alpha,
    power = DEFAULT_POWER,
    sided = 'two',
    effect = 'relative',
    method = 'frequentist',
    nStar = DEFAULT_N_STAR,
  } = input;
  if (variance === null || !(Number.isFinite(variance) && variance > 0)) return null;
  if (!(Number.isFinite(mde) && mde > 0) || !isProbability(alpha) || !isProbability(power)) return null;
  if (!['two', 'greater', 'less'].includes(sided)) return null;
  if (!['frequentist', 'bayesian', 'sequential'].includes(method) || !(Number.isFinite(nStar) && nStar > 0)) {
    return null;
  }
  const knownMean = controlMean !== null && Number.isFinite(controlMean) && controlMean !== 0;
  let delta = mde;
  if (effect === 'relative') {
    if (!knownMean) return null;
    delta = mde * Math.abs(controlMean);
  } else if (effect !== 'absolute') {
    return null;
  }
  // Scale-free: the lift's share is (1 + delta/|m_C|)^2, and variance / delta^2 is a ratio of like units.
  const share = knownMean ? (1 + delta / Math.abs(controlMean)) ** 2 : 1;
  const spread = (1 + share) * (variance / delta / delta);
  if (method === 'sequential') {
    if (sided !== 'two' && alpha >= 0.5) return null;
    return sequentialUnits(1, spread, alpha, power, sided, nStar);
  }
  const z = -normalQuantile(sided === 'two' ? alpha / 2 : alpha) + normalQuantile(power);
  const n = z * z * spread;
  return Number.isFinite(n) ? Math.ceil(n) : null;
}
