// Owns per-arm summaries (n, mean, variance, standard deviation) from sufficient statistics or proportions.
import { finiteOrNull } from './guards.js';
import type { ArmData, ArmSummary, Proportion } from './types.js';

export function isProportion(arm: ArmData): arm is Proportion {
  return 'successes' in arm;
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

/**
 * Numeric metrics: mean = sum / n and the sample variance (sumSquares - sum^2 / n) / (n - 1).
 * Boolean metrics: p = successes / n and variance p (1 - p) (GrowthBook's convention, which the vectors use).
 */
export function summarizeArm(arm: ArmData): ArmSummary {
  const { n } = arm;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    return summary(null, null, null, ['n must be a finite number >= 0']);
  }
  if (n === 0) return summary(n, null, null, ['no observations (n = 0)']);
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
  // Rounding can leave a tiny negative value for constant data; anything larger is inconsistent input.
  if (centered < -1e-10 * Math.abs(sumSquares)) {
    return summary(n, mean, null, ['sumSquares < sum^2 / n: inconsistent sufficient statistics']);
  }
  return summary(n, mean, Math.max(centered, 0) / (n - 1), []);
}
