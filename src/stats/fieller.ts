// Owns the lift's interval derived from the difference's test (Fieller 1954): the set of ratios ρ = m_T / m_C
// that the same statistic, with the same critical value, does not reject. At ρ = 1 Fieller's statistic is
// the difference's, so the lift's interval excludes 0 exactly when the difference's test rejects.
import type { Interval, Sided } from './types.js';

export const LIFT_UNBOUNDED =
  "the lift's interval is unbounded (the control mean is within noise of 0): read the absolute effect";

/**
 * {ρ : (m_T − ρ m_C)² ≤ c² (s_T² + ρ² s_C²)} − 1 as a lift (t − ρ)² ≤ c² (b + ρ² a) in units of m_C, with
 * t = m_T/m_C, a = s_C²/m_C², b = s_T²/m_C² (so values up to 1e100 do not overflow); s² are the variances of
 * the arms' means and c the test's critical value (two-sided: its 1 − α/2 quantile; one-sided: 1 − α, one
 * bound). The lift is (m_T − m_C)/|m_C|, so for a negative control mean it is 1 − ρ. null when the set is
 * not a bounded interval (c² a ≥ 1: the control mean is not distinguishable from 0 at this level).
 */
export function fiellerLift(
  control: { mean: number; varianceOfMean: number },
  treatment: { mean: number; varianceOfMean: number },
  c: number,
  sided: Sided,
): Interval | null {
  const mC = control.mean;
  if (mC === 0 || !Number.isFinite(c)) return null;
  const t = treatment.mean / mC;
  const a = control.varianceOfMean / (mC * mC);
  const b = treatment.varianceOfMean / (mC * mC);
  const denominator = 1 - c * c * a;
  if (!(denominator > 0) || !Number.isFinite(t)) return null;
  const spread = c * Math.sqrt(Math.max(0, a * t * t + b - c * c * a * b));
  const [r1, r2] = [(t - spread) / denominator, (t + spread) / denominator];
  const [lo, hi] = mC > 0 ? [r1 - 1, r2 - 1] : [1 - r2, 1 - r1];
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  // The lift rises with m_T whatever the sign of m_C: 'greater' keeps the lower bound, 'less' the upper.
  if (sided === 'two') return [lo, hi];
  return sided === 'greater' ? [lo, null] : [null, hi];
}
