// Owns sequential (always-valid) testing: asymptotic confidence sequences as GrowthBook implements them.
import { effectMoments } from './effect.js';
import { bounds, finiteInterval, finiteOrNull, resolveComparisonOptions } from './guards.js';
import type { ArmData, SequentialOptions, SequentialResult, Sided } from './types.js';

export const DEFAULT_N_STAR = 5000;
/** GrowthBook reports one-sided sequential p-values in (0, 0.4999]: its one-sided sequence needs alpha < 0.5. */
export const ONE_SIDED_P_CAP = 0.4999;

/** rho = sqrt((-2 ln a + ln(-2 ln a + 1)) / N*), the mixture scale tuned to be tightest at N = N*. */
export function sequentialRho(alpha: number, nStar: number): number {
  const l = -2 * Math.log(alpha);
  return Math.sqrt((l + Math.log(l + 1)) / nStar);
}

/**
 * Half-width of the confidence sequence of Waudby-Smith et al. (2023) at level alpha, for r = N rho^2 with
 * N = n_C + n_T (SE sqrt(N) is the per-observation standard deviation):
 * two-sided  SE sqrt(N) sqrt(2 (r + 1) / (N r) ln(sqrt(r + 1) / alpha)), with rho = sequentialRho(alpha);
 * one-sided  SE sqrt(N) sqrt(2 (r + 1) / (N r) ln(1 + sqrt(r + 1) / (2 alpha))), with rho = sequentialRho(2 alpha).
 */
export function sequentialHalfWidth(stdError: number, r: number, alpha: number, sided: Sided): number {
  const log =
    sided === 'two' ? Math.log(Math.sqrt(r + 1) / alpha) : Math.log1p(Math.sqrt(r + 1) / (2 * alpha));
  return stdError * Math.sqrt(((2 * (r + 1)) / r) * log);
}

/**
 * Always-valid comparison: the interval holds simultaneously at every look. The p-value is the smallest alpha
 * whose sequence (with rho kept at the configured alpha, as GrowthBook does) excludes 0, in closed form.
 */
export function sequentialCompare(
  control: ArmData,
  treatment: ArmData,
  options: SequentialOptions = {},
): SequentialResult {
  const warnings: string[] = [];
  const { alpha, sided, effect } = resolveComparisonOptions(options, warnings);
  let nStar = options.nStar ?? DEFAULT_N_STAR;
  if (!(Number.isFinite(nStar) && nStar > 0)) {
    warnings.push(`nStar must be a positive number; used ${DEFAULT_N_STAR}`);
    nStar = DEFAULT_N_STAR;
  }
  const m = effectMoments(control, treatment, effect);
  warnings.push(...m.warnings);
  const result: SequentialResult = {
    method: 'sequential',
    effect,
    sided,
    alpha,
    nStar,
    estimate: m.estimate,
    ci: [null, null],
    stdError: m.stdError,
    pValue: null,
    control: m.control,
    treatment: m.treatment,
    warnings,
  };
  if (m.estimate === null || !m.stdError || m.control.n === null || m.treatment.n === null) return result;
  if (sided !== 'two' && alpha >= 0.5) {
    warnings.push('one-sided sequential tests need alpha < 0.5');
    return result;
  }
  const r = sequentialR(m.control.n + m.treatment.n, alpha, sided, nStar);
  const halfWidth = sequentialHalfWidth(m.stdError, r, alpha, sided);
  result.ci = finiteInterval(bounds(m.estimate, halfWidth, sided), 'confidence interval', warnings);
  result.pValue = finiteOrNull(sequentialPValue(m.estimate / m.stdError, r, sided), 'p-value', warnings);
  return result;
}

/** r = N rho^2 for N units in total, with rho tuned at alpha two-sided and at 2 alpha one-sided. */
export function sequentialR(units: number, alpha: number, sided: Sided, nStar: number): number {
  return units * sequentialRho(sided === 'two' ? alpha : 2 * alpha, nStar) ** 2;
}

/**
 * The sequence's p-value for a statistic z (an effect in standard errors): two-sided
 * min(1, 1 / e-value) with e-value = exp(r z^2 / (2 (r + 1))) / sqrt(r + 1) (eq. 155 of arXiv:2103.06476v7);
 * one-sided the alpha at which the one bound reaches 0.
 */
export function sequentialPValue(z: number, r: number, sided: Sided): number {
  if (sided !== 'two') return oneSidedPValue(sided === 'greater' ? z : -z, r);
  const logP = 0.5 * Math.log(r + 1) - (r * z * z) / (2 * (r + 1));
  return Math.exp(Math.min(0, logP));
}

/**
 * Solves halfWidth(a) = |estimate| for a: ln(1 + sqrt(r + 1) / (2 a)) = L with L = r z^2 / (2 (r + 1)), so
 * a = sqrt(r + 1) / (2 (e^L - 1)), computed in logs so that tiny values do not underflow early.
 * A z on the wrong side of 0 never rejects, and values above the cap are reported as the cap (as GrowthBook does).
 */
function oneSidedPValue(z: number, r: number): number {
  if (!(z > 0)) return ONE_SIDED_P_CAP;
  const l = (r * z * z) / (2 * (r + 1));
  const logExpm1 = l > 30 ? l + Math.log1p(-Math.exp(-l)) : Math.log(Math.expm1(l));
  return Math.min(ONE_SIDED_P_CAP, Math.exp(0.5 * Math.log(r + 1) - Math.LN2 - logExpm1));
}
