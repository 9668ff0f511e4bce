// Owns per-arm summaries (n, mean, variance, standard deviation) from sufficient statistics, proportions or ratios.
import { finiteOrNull } from './guards.js';
import type { ArmData, ArmSummary, Proportion, QuantileMoments, RatioMoments } from './types.js';

export function isProportion(arm: ArmData): arm is Proportion {
  return 'successes' in arm;
}

export function isQuantile(arm: ArmData): arm is QuantileMoments {
  return 'stdError' in arm && 'estimate' in arm;
}

export function isRatio(arm: ArmData): arm is RatioMoments {
  return 'sumXY' in arm;
}

function summary(
  n: number | null,
  mean: number | null,
  variance: number | null,
  warnings: string[],
): ArmSummary {
  const finiteMean = mean === null ? null : finiteOrNull(mean, 'mean', warnings);
  const finiteVariance =
    variance === null || finiteMean === null ? null : finiteOrNull(variance, 'variance', warnings);
  const stdDev = finiteVariance === null ? null : Math.sqrt(finiteVariance);
  return { n, mean: finiteMean, variance: finiteVariance, stdDev, warnings };
}

// Rounding can leave a tiny negative value where the exact one is 0 (constant data); anything larger is
// inconsistent input.
const ROUNDING = 1e-10;

/** Below this many standard deviations per unit of |mean|, an arm has no spread (issue 33: fixed prices). */
export const NO_SPREAD = 1e-9;

/**
 * A variance that is rounding noise reads as 0: a standard deviation of at most 1e-9 × |mean|, or a variance
 * within the typical error of accumulating the sums in doubles (16 √n ε of their mean square). A fixed price
 * of 0.003 per call otherwise shows sd 4e-11 in one arm and 0 in another, and a p-value of 1e-263.
 */
function withoutNoise(variance: number, mean: number, meanSquare: number, n: number): number {
  const noise = 16 * Math.sqrt(n) * Number.EPSILON * Math.abs(meanSquare);
  return variance <= (NO_SPREAD * mean) ** 2 || variance <= noise ? 0 : variance;
}

/**
 * R = sumX / sumY, and n Var(R) by the delta method (GrowthBook's ratio metric): with mx = sumX/n, my = sumY/n
 * and the sample (n - 1) variances vx, vy and covariance cxy of the per-unit x and y,
 * n Var(R) = vx/my^2 - 2 mx cxy/my^3 + mx^2 vy/my^4.
 */
function summarizeRatio(n: number, arm: RatioMoments): ArmSummary {
  const { sumX, sumX2, sumY, sumY2, sumXY } = arm;
  if (![sumX, sumX2, sumY, sumY2, sumXY].every(Number.isFinite)) {
    return summary(n, null, null, ['sumX, sumX2, sumY, sumY2 and sumXY must be finite numbers']);
  }
  if (sumY === 0) return summary(n, null, null, ['sumY = 0: no observations to average']);
  const mean = sumX / sumY;
  if (n < 2) return summary(n, mean, null, ['n < 2: the variance is undefined']);
  const mx = sumX / n;
  const my = sumY / n;
  const centeredX = sumX2 - sumX * mx;
  const centeredY = sumY2 - sumY * my;
  if (centeredX < -ROUNDING * Math.abs(sumX2) || centeredY < -ROUNDING * Math.abs(sumY2)) {
    return summary(n, mean, null, [
      'sumX2 < sumX^2 / n or sumY2 < sumY^2 / n: inconsistent sufficient statistics',
    ]);
  }
  const vx = Math.max(centeredX, 0) / (n - 1);
  const vy = Math.max(centeredY, 0) / (n - 1);
  const cxy = (sumXY - sumX * my) / (n - 1);
  const positive = vx / my ** 2 + (mx ** 2 * vy) / my ** 4;
  const variance = positive - (2 * mx * cxy) / my ** 3;
  // Exactly, the variance is Var(x - R y) / my^2 >= 0; below 0 the covariance exceeds what vx and vy allow.
  if (variance < -ROUNDING * positive) {
    return summary(n, mean, null, ['sumXY is inconsistent with sumX2 and sumY2 (|covariance| too large)']);
  }
  const scale = positive + Math.abs((2 * mx * cxy) / my ** 3);
  return summary(n, mean, withoutNoise(Math.max(variance, 0), mean, scale, n), []);
}

/**
 * Numeric metrics: mean = sum / n and the sample variance (sumSquares - sum^2 / n) / (n - 1).
 * Boolean metrics: p = successes / n and variance p (1 - p) (GrowthBook's convention, which the vectors use).
 * Ratio metrics: R = sumX / sumY, and a variance such that variance / n is the delta-method Var(R).
 */
export function summarizeArm(arm: ArmData): ArmSummary {
  const { n } = arm;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    return summary(null, null, null, ['n must be a finite number >= 0']);
  }
  if (n === 0) return summary(n, null, null, ['no observations (n = 0)']);
  if (isRatio(arm)) return summarizeRatio(n, arm);
  if (isQuantile(arm)) {
    const { estimate, stdError } = arm;
    if (!(Number.isFinite(estimate) && Number.isFinite(stdError) && stdError >= 0)) {
      return summary(n, null, null, ['estimate and stdError must be finite numbers']);
    }
    return summary(n, estimate, stdError * stdError * n, []);
  }
  if (isProportion(arm)) {
    const { successes } = arm;
    if (!(Number.isFinite(successes) && successes >= 0 && successes <= n)) {
      return summary(n, null, null, ['successes must be a number between 0 and n']);
    }
    const p = successes / n;
    return summary(n, p, p * (1 - p), []);
  }
  const { sum, sumSquares } = arm;
  if (!(Number.isFinite(sum) && Number.isFinite(sumSquares))) {
    return summary(n, null, null, ['sum and sumSquares must be finite numbers']);
  }
  const mean = sum / n;
  if (n < 2) return summary(n, mean, null, ['n < 2: the variance is undefined']);
  const centered = sumSquares - sum * mean;
  if (centered < -ROUNDING * Math.abs(sumSquares)) {
    return summary(n, mean, null, ['sumSquares < sum^2 / n: inconsistent sufficient statistics']);
  }
  return summary(n, mean, withoutNoise(Math.max(centered, 0) / (n - 1), mean, sumSquares / (n - 1), n), []);
}
