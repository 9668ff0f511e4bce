// Owns the comparison of numeric arms (means, per-user ratios, quantiles): the method's test of the difference
// decides (Welch's t, the confidence sequence, or the flat-prior posterior) and the lift's interval is
// Fieller's with the same critical value, so the two intervals agree with the decision and each other.
import type { ArmComparison, ResolvedCompare, TestMethod } from './comparison.js';
import { bayesianReadout, directionFlags, normalCritical, normalPValue } from './decision.js';
import { studentTCdf, studentTQuantile } from './distributions.js';
import { effectMoments } from './effect.js';
import { fiellerLift, LIFT_UNBOUNDED } from './fieller.js';
import { bounds } from './guards.js';
import { DEFAULT_N_STAR, sequentialHalfWidth, sequentialPValue, sequentialR } from './sequential.js';
import type { ArmData, EffectEstimate, Sided } from './types.js';

const METHODS = { frequentist: 'welch', sequential: 'sequence', bayesian: 'posterior' } as const;

interface Test {
  pValue: number;
  /** The critical value in standard errors: the interval is estimate ± critical · SE. */
  critical: number;
}

function testOf(
  r: ResolvedCompare,
  z: number,
  dof: number | null,
  units: number,
  warnings: string[],
): Test | null {
  const { alpha, sided } = r;
  if (r.method === 'sequential') {
    if (sided !== 'two' && alpha >= 0.5) {
      warnings.push('one-sided sequential tests need alpha < 0.5');
      return null;
    }
    const nStar = r.nStar !== undefined && r.nStar > 0 && Number.isFinite(r.nStar) ? r.nStar : DEFAULT_N_STAR;
    const rr = sequentialR(units, alpha, sided, nStar);
    return { pValue: sequentialPValue(z, rr, sided), critical: sequentialHalfWidth(1, rr, alpha, sided) };
  }
  if (r.method === 'bayesian')
    return { pValue: normalPValue(z, sided), critical: normalCritical(alpha, sided) };
  if (dof === null) return null;
  return {
    pValue: welchP(z, dof, sided),
    critical: -studentTQuantile(sided === 'two' ? alpha / 2 : alpha, dof),
  };
}

/** Welch's p from t, as compareMeans computes it (lower tail only, so tiny p-values keep their digits). */
function welchP(t: number, dof: number, sided: Sided): number {
  const p =
    sided === 'two' ? 2 * studentTCdf(-Math.abs(t), dof) : studentTCdf(sided === 'greater' ? -t : t, dof);
  return Math.min(1, p);
}

const none = (): EffectEstimate => ({ estimate: null, ci: [null, null], stdError: null, pValue: null });

export function compareMeanArms(
  control: ArmData,
  treatment: ArmData,
  r: ResolvedCompare,
): Omit<ArmComparison, 'sided' | 'direction'> & Pick<ArmComparison, 'sided' | 'direction'> {
  const abs = effectMoments(control, treatment, 'absolute');
  const rel = effectMoments(control, treatment, 'relative');
  const warnings = [...abs.warnings, ...rel.warnings];
  const method: TestMethod = METHODS[r.method];
  const absolute: EffectEstimate = { ...none(), estimate: abs.estimate, stdError: abs.stdError };
  const relative: EffectEstimate = { ...none(), estimate: rel.estimate, stdError: rel.stdError };
  const result = {
    absolute,
    relative,
    sided: r.sided,
    direction: r.direction,
    chanceToWin: null as number | null,
    risk: [null, null] as [number | null, number | null],
    pValue: null as number | null,
    exact: null,
    test: { method, level: 1 - r.alpha },
    significant: false,
    better: r.direction === null ? null : false,
    worse: r.direction === null ? null : false,
    warnings,
  };
  const { control: c, treatment: t } = abs;
  if (abs.estimate === null || !abs.stdError || c.n === null || t.n === null) return result;
  const z = abs.estimate / abs.stdError;
  const test = testOf(r, z, abs.dof, c.n + t.n, warnings);
  if (test === null || !Number.isFinite(test.pValue)) return result;
  absolute.pValue = test.pValue;
  absolute.ci = bounds(abs.estimate, test.critical * abs.stdError, r.sided);
  if (rel.estimate !== null && c.mean !== null && t.mean !== null) {
    relative.pValue = test.pValue;
    const lift = fiellerLift(
      { mean: c.mean, varianceOfMean: (c.variance ?? 0) / c.n },
      { mean: t.mean, varianceOfMean: (t.variance ?? 0) / t.n },
      test.critical,
      r.sided,
    );
    if (lift === null) warnings.push(LIFT_UNBOUNDED);
    else relative.ci = lift;
  }
  result.pValue = test.pValue;
  result.significant = test.pValue < r.alpha;
  Object.assign(result, directionFlags(result.significant, abs.estimate, r.direction));
  if (r.method === 'bayesian')
    Object.assign(result, bayesianReadout(z, rel.estimate, rel.stdError, r.direction));
  return result;
}
