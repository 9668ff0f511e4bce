// Owns the treatment-vs-control effect: point estimate, standard error (delta method for the lift), Welch dof.
import { finiteOrNull } from './guards.js';
import { summarizeArm } from './moments.js';
import type { ArmData, ArmSummary, EffectType } from './types.js';

export interface EffectMoments {
  control: ArmSummary;
  treatment: ArmSummary;
  estimate: number | null;
  /** 0 when neither arm varies: then no interval or test exists. */
  stdError: number | null;
  /** Welch–Satterthwaite degrees of freedom of the two arm variances (used for both effect types). */
  dof: number | null;
  warnings: string[];
}

/** sqrt(a + b) of two variances >= 0, computed from their larger one so that neither overflows nor underflows. */
function hypot(a: number, b: number): number {
  const m = Math.max(a, b);
  if (m === 0 || !Number.isFinite(m)) return m === 0 ? 0 : Number.NaN;
  return Math.sqrt(m) * Math.sqrt(a / m + b / m);
}

/**
 * absolute: d = m_T - m_C, Var = v_T/n_T + v_C/n_C.
 * relative: d = (m_T - m_C) / |m_C|, Var = v_T / (m_C^2 n_T) + v_C m_T^2 / (m_C^4 n_C) (delta method),
 *   computed as (v_T/n_T + (v_C/n_C) (m_T/m_C)^2) / m_C^2.
 * dof = (v_T/n_T + v_C/n_C)^2 / ((v_T/n_T)^2/(n_T - 1) + (v_C/n_C)^2/(n_C - 1)).
 */
export function effectMoments(control: ArmData, treatment: ArmData, effect: EffectType): EffectMoments {
  const c = summarizeArm(control);
  const t = summarizeArm(treatment);
  const warnings = [...c.warnings.map((w) => `control: ${w}`), ...t.warnings.map((w) => `treatment: ${w}`)];
  const result: EffectMoments = {
    control: c,
    treatment: t,
    estimate: null,
    stdError: null,
    dof: null,
    warnings,
  };
  if (c.mean === null || t.mean === null) return result;
  if (effect === 'relative' && c.mean === 0) {
    warnings.push('control mean is 0: the relative lift is undefined');
    return result;
  }
  const diff = t.mean - c.mean;
  result.estimate = finiteOrNull(
    effect === 'absolute' ? diff : diff / Math.abs(c.mean),
    'estimate',
    warnings,
  );
  if (result.estimate === null) return result;
  if (c.variance === null || t.variance === null || c.n === null || t.n === null || c.n < 2 || t.n < 2) {
    warnings.push('each arm needs n >= 2 for a standard error, interval or p-value');
    return result;
  }
  if (c.variance === 0) warnings.push('control: zero variance');
  if (t.variance === 0) warnings.push('treatment: zero variance');
  // Scale-safe forms: metric values reach 1e100, so variances reach 1e200 and their squares (or m_C^4)
  // would overflow; ratios of like quantities do not.
  const vc = c.variance / c.n;
  const vt = t.variance / t.n;
  const ratio = t.mean / c.mean;
  const stdError = effect === 'absolute' ? hypot(vc, vt) : hypot(vt, vc * ratio ** 2) / Math.abs(c.mean);
  result.stdError = finiteOrNull(stdError, 'standard error', warnings);
  if (result.stdError === 0) {
    warnings.push('the effect has zero standard error: no interval or p-value');
  } else if (result.stdError !== null) {
    // (vc + vt)^2 / (vc^2/(n_C - 1) + vt^2/(n_T - 1)) with the shares wc = vc/(vc + vt), wt = vt/(vc + vt).
    const wc = vc / (vc + vt);
    const wt = vt / (vc + vt);
    result.dof = finiteOrNull(
      1 / (wc ** 2 / (c.n - 1) + wt ** 2 / (t.n - 1)),
      'degrees of freedom',
      warnings,
    );
  }
  return result;
}
