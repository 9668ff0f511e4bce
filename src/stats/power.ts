// Owns sample-size planning: units per variant needed to detect a minimum detectable effect (MDE).
import { normalQuantile } from './distributions.js';
import { isProbability } from './guards.js';
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
}

/**
 * Two-arm z approximation with equal arms and the control's variance in both:
 * n = (z_{1-alpha/2} (or z_{1-alpha} one-sided) + z_power)^2 2 variance / delta^2, with delta = mde |controlMean|
 * for a relative mde and mde itself for an absolute one. Returns n rounded up (units per variant), or null when
 * it cannot be computed: unknown or zero variance, a control mean of 0 for a relative mde, or an option out of range.
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
  } = input;
  if (variance === null || !(Number.isFinite(variance) && variance > 0)) return null;
  if (!(Number.isFinite(mde) && mde > 0) || !isProbability(alpha) || !isProbability(power)) return null;
  if (!['two', 'greater', 'less'].includes(sided)) return null;
  let delta = mde;
  if (effect === 'relative') {
    if (controlMean === null || !Number.isFinite(controlMean) || controlMean === 0) return null;
    delta = mde * Math.abs(controlMean);
  } else if (effect !== 'absolute') {
    return null;
  }
  const z = -normalQuantile(sided === 'two' ? alpha / 2 : alpha) + normalQuantile(power);
  const n = (z * z * 2 * variance) / (delta * delta);
  return Number.isFinite(n) ? Math.ceil(n) : null;
}
