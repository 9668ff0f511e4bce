// Owns option validation and the rule that no NaN or Infinity reaches a result (null plus a warning instead).
import type { ComparisonOptions, EffectType, Interval, Sided } from './types.js';

export const DEFAULT_ALPHA = 0.05;

/** The value when finite; otherwise null, and a warning naming what could not be computed. */
export function finiteOrNull(value: number, what: string, warnings: string[]): number | null {
  if (Number.isFinite(value)) return value;
  warnings.push(`${what} could not be computed (non-finite result)`);
  return null;
}

export function finiteInterval(
  interval: [number | null, number | null],
  what: string,
  warnings: string[],
): Interval {
  return [
    interval[0] === null ? null : finiteOrNull(interval[0], `${what} lower bound`, warnings),
    interval[1] === null ? null : finiteOrNull(interval[1], `${what} upper bound`, warnings),
  ];
}

/** Confidence bounds around an estimate; a one-sided test has only the bound on its side. */
export function bounds(estimate: number, halfWidth: number, sided: Sided): Interval {
  if (sided === 'greater') return [estimate - halfWidth, null];
  if (sided === 'less') return [null, estimate + halfWidth];
  return [estimate - halfWidth, estimate + halfWidth];
}

export function isProbability(alpha: unknown): alpha is number {
  return typeof alpha === 'number' && alpha > 0 && alpha < 1;
}

/** Options with defaults filled in; an invalid option falls back to its default with a warning. */
export function resolveComparisonOptions(
  options: ComparisonOptions,
  warnings: string[],
): { alpha: number; sided: Sided; effect: EffectType } {
  const { alpha = DEFAULT_ALPHA, sided = 'two', effect = 'relative' } = options;
  const valid = {
    alpha: isProbability(alpha) ? alpha : DEFAULT_ALPHA,
    sided: (['two', 'greater', 'less'] as const).includes(sided) ? sided : 'two',
    effect: (['absolute', 'relative'] as const).includes(effect) ? effect : 'relative',
  } as const;
  if (valid.alpha !== alpha) warnings.push(`alpha must be in (0, 1); used ${DEFAULT_ALPHA}`);
  if (valid.sided !== sided) warnings.push(`sided must be 'two', 'greater' or 'less'; used 'two'`);
  if (valid.effect !== effect) warnings.push(`effect must be 'absolute' or 'relative'; used 'relative'`);
  return valid;
}
