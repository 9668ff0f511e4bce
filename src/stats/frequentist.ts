// Owns Welch's t-test of treatment vs control (absolute effect or relative lift), fixed-horizon.
import { studentTCdf, studentTQuantile } from './distributions.js';
import { effectMoments } from './effect.js';
import { bounds, finiteInterval, finiteOrNull, resolveComparisonOptions } from './guards.js';
import type { ArmData, ComparisonOptions, WelchResult } from './types.js';

/**
 * t = estimate / stdError with Welch–Satterthwaite dof. p-values use the lower tail only (2 F(-|t|) for two-sided),
 * so tiny p-values are not rounded to 0. The CI is estimate ± t_{1-alpha/2} stdError (t_{1-alpha} one-sided).
 */
export function compareMeans(
  control: ArmData,
  treatment: ArmData,
  options: ComparisonOptions = {},
): WelchResult {
  const warnings: string[] = [];
  const { alpha, sided, effect } = resolveComparisonOptions(options, warnings);
  const m = effectMoments(control, treatment, effect);
  warnings.push(...m.warnings);
  const result: WelchResult = {
    method: 'welch',
    effect,
    sided,
    alpha,
    estimate: m.estimate,
    ci: [null, null],
    stdError: m.stdError,
    pValue: null,
    dof: m.dof,
    control: m.control,
    treatment: m.treatment,
    warnings,
  };
  if (m.estimate === null || !m.stdError || m.dof === null) return result;
  const t = m.estimate / m.stdError;
  const p =
    sided === 'two' ? 2 * studentTCdf(-Math.abs(t), m.dof) : studentTCdf(sided === 'greater' ? -t : t, m.dof);
  result.pValue = finiteOrNull(Math.min(1, p), 'p-value', warnings);
  const halfWidth = -studentTQuantile(sided === 'two' ? alpha / 2 : alpha, m.dof) * m.stdError;
  result.ci = finiteInterval(bounds(m.estimate, halfWidth, sided), 'confidence interval', warnings);
  return result;
}
