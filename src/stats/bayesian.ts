// Owns the Bayesian analysis: normal posterior on the effect, chance to win, expected loss (GrowthBook's model).
import { normalCdf, normalPdf, normalQuantile } from './distributions.js';
import { effectMoments } from './effect.js';
import { finiteInterval, finiteOrNull, resolveComparisonOptions } from './guards.js';
import type { ArmData, BayesianOptions, BayesianResult, Interval, NormalPrior } from './types.js';

/** E[max(Z - u, 0)] for a standard normal Z: phi(u) - u Q(u), with Q the upper tail. */
function expectedExcess(u: number): number {
  const q = normalCdf(-u);
  if (u <= 5) return normalPdf(u) - u * q;
  // For large u the difference cancels; phi/Q - u equals Laplace's continued fraction 1/(u + 2/(u + 3/(u + ...))).
  let tail = u;
  for (let k = 100; k >= 2; k--) tail = u + k / tail;
  return q / tail;
}

/**
 * Expected loss of each decision when the effect is N(mean, stdDev^2):
 * [choosing control: E[max(effect, 0)], choosing treatment: E[max(-effect, 0)]].
 */
export function normalRisk(mean: number, stdDev: number): Interval {
  if (!Number.isFinite(mean) || !Number.isFinite(stdDev) || stdDev < 0) return [null, null];
  if (stdDev === 0) return [Math.max(mean, 0), Math.max(-mean, 0)];
  const z = mean / stdDev;
  return [stdDev * expectedExcess(-z), stdDev * expectedExcess(z)];
}

function validPrior(prior: NormalPrior | undefined, warnings: string[]): NormalPrior | null {
  if (prior === undefined) return null;
  const { mean, variance } = prior;
  if (Number.isFinite(mean) && Number.isFinite(variance) && variance > 0) return { mean, variance };
  warnings.push('prior needs a finite mean and a finite variance > 0; used a flat prior');
  return null;
}

/**
 * Data likelihood: effect ~ N(estimate, stdError^2) (delta method for the lift). With a prior N(m0, s0^2):
 * precision = 1/stdError^2 + 1/s0^2, mean = (estimate/stdError^2 + m0/s0^2) / precision. Flat prior: the data alone.
 */
export function bayesianCompare(
  control: ArmData,
  treatment: ArmData,
  options: BayesianOptions = {},
): BayesianResult {
  const warnings: string[] = [];
  const { alpha, effect } = resolveComparisonOptions(
    { alpha: options.alpha, effect: options.effect },
    warnings,
  );
  const prior = validPrior(options.prior, warnings);
  const m = effectMoments(control, treatment, effect);
  warnings.push(...m.warnings);
  const result: BayesianResult = {
    effect,
    alpha,
    prior,
    expected: null,
    ci: [null, null],
    stdDev: null,
    chanceToWin: null,
    risk: [null, null],
    control: m.control,
    treatment: m.treatment,
    warnings,
  };
  if (m.estimate === null || !m.stdError) return result;
  const dataPrecision = 1 / m.stdError ** 2;
  const precision = dataPrecision + (prior ? 1 / prior.variance : 0);
  const mean = prior ? (m.estimate * dataPrecision + prior.mean / prior.variance) / precision : m.estimate;
  const stdDev = Math.sqrt(1 / precision);
  const halfWidth = -normalQuantile(alpha / 2) * stdDev;
  result.expected = finiteOrNull(mean, 'posterior mean', warnings);
  result.stdDev = finiteOrNull(stdDev, 'posterior standard deviation', warnings);
  if (result.expected === null || result.stdDev === null) return result;
  result.ci = finiteInterval([mean - halfWidth, mean + halfWidth], 'credible interval', warnings);
  result.chanceToWin = finiteOrNull(normalCdf(mean / stdDev), 'chance to win', warnings);
  result.risk = finiteInterval(normalRisk(mean, stdDev), 'risk', warnings);
  return result;
}
