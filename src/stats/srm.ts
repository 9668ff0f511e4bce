// Owns the sample-ratio-mismatch check: chi-square goodness of fit of arm counts against configured weights.
import { chiSquareSf } from './distributions.js';
import { finiteOrNull, isProbability } from './guards.js';
import type { SrmResult } from './types.js';

export const DEFAULT_SRM_THRESHOLD = 0.001;

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;

/**
 * Arms with weight 0 are left out (their counts too); the others expect total * w_i / sum(w).
 * chiSquare = sum (o - e)^2 / e with (active arms - 1) degrees of freedom; mismatch when p < threshold.
 */
export function srmTest(
  observed: readonly number[],
  weights: readonly number[],
  options: { threshold?: number } = {},
): SrmResult {
  const warnings: string[] = [];
  let threshold = options.threshold ?? DEFAULT_SRM_THRESHOLD;
  if (!isProbability(threshold)) {
    warnings.push(`threshold must be in (0, 1); used ${DEFAULT_SRM_THRESHOLD}`);
    threshold = DEFAULT_SRM_THRESHOLD;
  }
  const expected: (number | null)[] = observed.map(() => null);
  const result: SrmResult = {
    chiSquare: null,
    dof: null,
    pValue: null,
    expected,
    mismatch: null,
    threshold,
    warnings,
  };
  if (observed.length !== weights.length) {
    warnings.push(`observed has ${observed.length} arms but weights has ${weights.length}`);
    return result;
  }
  if (!observed.every(isCount) || !weights.every(isCount)) {
    warnings.push('observed counts and weights must be finite numbers >= 0');
    return result;
  }
  const active = weights.flatMap((w, i) => (w > 0 ? [i] : []));
  for (const [i, w] of weights.entries()) {
    if (w === 0 && observed[i]! > 0)
      warnings.push(`arm ${i} has weight 0 but ${observed[i]} observations (skipped)`);
  }
  if (active.length < 2) {
    warnings.push('need at least two arms with a positive weight');
    return result;
  }
  const total = active.reduce((s, i) => s + observed[i]!, 0);
  const weightSum = active.reduce((s, i) => s + weights[i]!, 0);
  if (total === 0) {
    warnings.push('no observations in arms with a positive weight');
    return result;
  }
  let chiSquare = 0;
  for (const i of active) {
    const e = (weights[i]! / weightSum) * total;
    expected[i] = e;
    chiSquare += (observed[i]! - e) ** 2 / e;
  }
  result.chiSquare = finiteOrNull(chiSquare, 'chi-square', warnings);
  result.dof = active.length - 1;
  if (result.chiSquare === null) return result;
  result.pValue = finiteOrNull(chiSquareSf(result.chiSquare, result.dof), 'p-value', warnings);
  result.mismatch = result.pValue === null ? null : result.pValue < threshold;
  return result;
}
