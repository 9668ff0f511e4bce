// Owns regression adjustment on a pre-experiment covariate (CUPED; Deng et al. 2013): each arm's metric minus one
// pooled slope θ times how far the arm's covariate mean sits from the pooled one, with the delta-method variance.
// Rules and references: docs/statistics.md, "Regression adjustment (CUPED)".
import { finiteOrNull } from './guards.js';
import { NO_SPREAD } from './moments.js';
import type { RatioMoments } from './types.js';

/**
 * An arm's ratio sums plus its covariate's, over the same n units: z_i is unit i's covariate total (measured
 * before the experiment: it must not depend on the variant), x_i and y_i as in RatioMoments. Per call: y_i = 1.
 */
export interface CovariateMoments extends RatioMoments {
  sumZ: number;
  sumZ2: number;
  sumXZ: number;
  sumYZ: number;
}

/** One arm after the adjustment. n, estimate and stdError are QuantileMoments-shaped (adjustedArmData). */
export interface AdjustedArm {
  n: number | null;
  /** R − θ (Z̄_arm − Z̄_pooled); the unadjusted R when no adjustment was made. */
  estimate: number | null;
  /** √ of adjustedVariance. */
  stdError: number | null;
  /** R = ΣX / ΣY. */
  unadjusted: number | null;
  /** Var(R̂) by the delta method (the variance of the estimate, not per unit). */
  unadjustedVariance: number | null;
  /** Var(R̂) − 2θ Cov(R̂, Z̄) + θ² Var(Z̄), θ taken as fixed. */
  adjustedVariance: number | null;
  /** 1 − adjustedVariance / unadjustedVariance (may be slightly negative: θ is pooled over the arms). */
  varianceReduction: number | null;
}

export interface CupedResult {
  /** Whether θ was applied; when false every arm's estimate and variance are the unadjusted ones. */
  adjusted: boolean;
  /** The pooled within-arm slope of the metric on the covariate's per-unit mean; null when not estimated. */
  theta: number | null;
  /** Z̄_pooled = ΣZ / Σn over all arms. */
  covariateMean: number | null;
  arms: AdjustedArm[];
  /** 1 − Σ adjusted / Σ unadjusted variance: the reduction in the variance of a difference of arms. */
  varianceReduction: number | null;
  warnings: string[];
}

/** As in moments.ts: negative centered sums within this relative rounding read as 0; beyond, inconsistent. */
const ROUNDING = 1e-10;

/** An arm's centered sums in scaled units: u_i = (x_i − R y_i) / ȳ is the unit's linearized metric. */
interface Centered {
  n: number;
  ratio: number;
  meanZ: number;
  suu: number;
  suz: number;
  szz: number;
}

const SUMS = ['sumX', 'sumX2', 'sumY', 'sumY2', 'sumXY', 'sumZ', 'sumZ2', 'sumXZ', 'sumYZ'] as const;

/** A common scale per variable (the root mean square over all arms), so that no product of sums overflows. */
function scaleOf(arms: CovariateMoments[], square: 'sumX2' | 'sumY2' | 'sumZ2'): number {
  const s = Math.sqrt(Math.max(0, ...arms.map((a) => (a.n > 0 ? a[square] / a.n : 0))));
  return s > 0 && Number.isFinite(s) ? s : 1;
}

/** The arm's centered sums, or a reason why they do not exist. Inputs already scaled. */
function center(a: CovariateMoments): Centered | string {
  const { n, sumX, sumX2, sumY, sumY2, sumXY, sumZ, sumZ2, sumXZ, sumYZ } = a;
  if (sumY === 0) return 'sumY = 0: no observations to average';
  if (n < 2) return 'n < 2: the variance is undefined';
  const [mx, my, mz] = [sumX / n, sumY / n, sumZ / n];
  const ratio = sumX / sumY;
  const sxx = sumX2 - sumX * mx;
  const syy = sumY2 - sumY * my;
  const szz = sumZ2 - sumZ * mz;
  if (sxx < -ROUNDING * sumX2 || syy < -ROUNDING * sumY2 || szz < -ROUNDING * sumZ2) {
    return 'a sum of squares below its sum² / n: inconsistent sufficient statistics';
  }
  const sxy = sumXY - sumX * my;
  const sxz = sumXZ - sumX * mz;
  const syz = sumYZ - sumY * mz;
  // Σ(x − R y)² / ȳ² expanded; exactly ≥ 0, and Cauchy–Schwarz bounds Σ u (z − z̄) by it and Σ(z − z̄)².
  const positive = (Math.max(sxx, 0) + ratio * ratio * Math.max(syy, 0)) / (my * my);
  const suu = positive - (2 * ratio * sxy) / (my * my);
  const suz = (sxz - ratio * syz) / my;
  const scale = positive + Math.abs((2 * ratio * sxy) / (my * my));
  if (suu < -ROUNDING * scale) return 'sumXY is inconsistent with sumX2 and sumY2 (|covariance| too large)';
  const szzPos = Math.max(szz, 0);
  // A correlation beyond 1 by more than the centered sums' rounding (their cancellation when the mean is far
  // from 0 relative to the spread) is an inconsistency; within it, the variance below is clamped at 0.
  if (suz * suz > (Math.max(suu, 0) + ROUNDING * scale) * (szzPos + ROUNDING * sumZ2) * (1 + 1e-6)) {
    return 'sumXZ or sumYZ is inconsistent with the sums of squares (|covariance| too large)';
  }
  return { n, ratio, meanZ: mz, suu: Math.max(suu, 0), suz, szz: szzPos };
}

const empty = (n: number | null): AdjustedArm => ({
  n,
  estimate: null,
  stdError: null,
  unadjusted: null,
  unadjustedVariance: null,
  adjustedVariance: null,
  varianceReduction: null,
});

/** Why the arms cannot be adjusted together (then each is reported unadjusted), or null when they can. */
function blocker(centered: (Centered | string)[], pooledMeanZ: number, sumZ2: number): string | null {
  if (centered.length === 0) return 'no arms';
  const broken = centered.findIndex((c) => typeof c === 'string');
  if (broken >= 0) return `arm ${broken} has no variance`;
  const arms = centered as Centered[];
  const small = arms.findIndex((c) => c.n < 3);
  if (small >= 0) return `arm ${small} has n < 3: too few units to fit a slope and keep a residual variance`;
  const szz = arms.reduce((s, c) => s + c.szz, 0);
  const units = arms.reduce((s, c) => s + c.n, 0);
  const dof = units - arms.length;
  const noise = 16 * Math.sqrt(units) * Number.EPSILON * sumZ2;
  if (szz <= noise || szz <= dof * (NO_SPREAD * pooledMeanZ) ** 2) {
    return 'the covariate does not vary within the arms: nothing to adjust on';
  }
  return null;
}

/**
 * Regression adjustment of every arm's R = ΣX/ΣY on the per-unit covariate mean Z̄ = ΣZ/n, with one slope
 * θ = Σ_arms Σ u (z − z̄) / Σ_arms Σ (z − z̄)², u = (x − R y)/ȳ (the delta-method linearization of R): the
 * pooled within-arm regression, so that per call (y = 1) a difference of adjusted arms equals the treatment
 * coefficient of OLS `x ~ arm + z`. Each arm: R_adj = R − θ (Z̄_arm − Z̄_pooled), variance (θ fixed)
 * Var(R̂) − 2θ Cov(R̂, Z̄) + θ² Var(Z̄). When no adjustment is possible, the arms come back unadjusted with a
 * warning saying why; nothing is ever NaN or infinite.
 */
export function cupedAdjust(arms: CovariateMoments[]): CupedResult {
  const warnings: string[] = [];
  const result: CupedResult = {
    adjusted: false,
    theta: null,
    covariateMean: null,
    arms: [],
    varianceReduction: null,
    warnings,
  };
  const valid = arms.map((a) => {
    const ok = typeof a?.n === 'number' && Number.isFinite(a.n) && a.n >= 0;
    return ok && SUMS.every((k) => typeof a[k] === 'number' && Number.isFinite(a[k]));
  });
  valid.forEach((ok, i) => {
    if (!ok) warnings.push(`arm ${i}: n must be a finite number >= 0 and every sum a finite number`);
  });
  const usable = arms.filter((_, i) => valid[i]);
  const [sx, sy, sz] = [scaleOf(usable, 'sumX2'), scaleOf(usable, 'sumY2'), scaleOf(usable, 'sumZ2')];
  const scaled = arms.map((a) => ({
    n: a?.n,
    sumX: a?.sumX / sx,
    sumX2: a?.sumX2 / sx / sx,
    sumY: a?.sumY / sy,
    sumY2: a?.sumY2 / sy / sy,
    sumXY: a?.sumXY / sx / sy,
    sumZ: a?.sumZ / sz,
    sumZ2: a?.sumZ2 / sz / sz,
    sumXZ: a?.sumXZ / sx / sz,
    sumYZ: a?.sumYZ / sy / sz,
  }));
  const centered = scaled.map((a, i): Centered | string => {
    if (!valid[i]) return 'invalid sums';
    if (a.n === 0) return 'no units (n = 0)';
    return center(a);
  });
  centered.forEach((c, i) => {
    if (typeof c === 'string' && valid[i]) warnings.push(`arm ${i}: ${c}`);
  });
  const units = usable.reduce((s, a) => s + a.n, 0);
  const pooledZ = units > 0 ? usable.reduce((s, a) => s + a.sumZ / sz, 0) / units : Number.NaN;
  const totalZ2 = scaled.reduce((s, a, i) => (valid[i] ? s + a.sumZ2 : s), 0);
  const reason = valid.every(Boolean) ? blocker(centered, pooledZ, totalZ2) : 'invalid sums';
  let theta = 0;
  if (reason === null) {
    const cs = centered as Centered[];
    theta = cs.reduce((s, c) => s + c.suz, 0) / cs.reduce((s, c) => s + c.szz, 0);
    result.adjusted = true;
    result.theta = finiteOrNull((theta * (sx / sy)) / sz, 'theta', warnings);
  } else warnings.push(`not adjusted: ${reason}`);
  if (units > 0) result.covariateMean = finiteOrNull(pooledZ * sz, 'covariate mean', warnings);

  // Back to the metric's unit: estimates and standard errors times f = sx/sy, variances times f² (which may
  // overflow: then null with a warning, while the standard error, computed from the scaled one, survives).
  const f = sx / sy;
  let [sumUnadjusted, sumAdjusted] = [0, 0];
  result.arms = centered.map((c, i) => {
    const a = scaled[i]!;
    if (typeof c === 'string') {
      const arm = empty(valid[i] ? a.n : null);
      if (valid[i] && a.n > 0 && a.sumY !== 0) {
        arm.unadjusted = finiteOrNull((a.sumX / a.sumY) * f, `arm ${i} mean`, warnings);
        arm.estimate = arm.unadjusted;
      }
      return arm;
    }
    const perUnit = c.n * (c.n - 1);
    const unadjusted = c.suu / perUnit;
    const quadratic = c.suu - 2 * theta * c.suz + theta * theta * c.szz;
    const adjusted = Math.max(quadratic, 0) / perUnit;
    sumUnadjusted += unadjusted;
    sumAdjusted += adjusted;
    return {
      n: c.n,
      estimate: finiteOrNull((c.ratio - theta * (c.meanZ - pooledZ)) * f, `arm ${i} estimate`, warnings),
      stdError: finiteOrNull(Math.sqrt(adjusted) * f, `arm ${i} standard error`, warnings),
      unadjusted: finiteOrNull(c.ratio * f, `arm ${i} mean`, warnings),
      unadjustedVariance: finiteOrNull(unadjusted * f * f, `arm ${i} unadjusted variance`, warnings),
      adjustedVariance: finiteOrNull(adjusted * f * f, `arm ${i} adjusted variance`, warnings),
      varianceReduction: unadjusted > 0 ? 1 - adjusted / unadjusted : null,
    };
  });
  if (sumUnadjusted > 0 && centered.every((c) => typeof c !== 'string')) {
    result.varianceReduction = 1 - sumAdjusted / sumUnadjusted;
  }
  return result;
}

/** An adjusted arm as compareArms takes it ({ n, estimate, stdError }), or null when it has no estimate or SE. */
export function adjustedArmData(arm: AdjustedArm): { n: number; estimate: number; stdError: number } | null {
  const { n, estimate, stdError } = arm;
  return n === null || estimate === null || stdError === null ? null : { n, estimate, stdError };
}
