// Owns the comparison of arms without spread (a fixed price per model: 0.003 in A, 0.001 in B): the
// difference is known exactly, so it is decided without a test and its interval is the point itself.
import type { ArmComparison, ResolvedCompare } from './comparison.js';
import { directionFlags } from './decision.js';
import { NO_SPREAD } from './moments.js';
import type { ArmSummary, Interval } from './types.js';

/**
 * Both arms have variance 0 (after rounding noise: moments.ts). The difference d = m_T − m_C (0 when within
 * 1e-9 of the larger mean, rounding) is significant when it points the tested way; pValue 0 then, 1 otherwise.
 * Intervals are [d, d] (one-sided: the one bound), stdError 0; Bayesian: chance to win 1 or 0 (0.5 when equal).
 */
export function compareKnown(
  c: ArmSummary,
  t: ArmSummary,
  r: ResolvedCompare,
): Omit<ArmComparison, 'sided' | 'direction'> & Pick<ArmComparison, 'sided' | 'direction'> {
  const mC = c.mean ?? 0;
  const mT = t.mean ?? 0;
  const raw = mT - mC;
  const d = Math.abs(raw) <= NO_SPREAD * Math.max(Math.abs(mC), Math.abs(mT)) ? 0 : raw;
  const lift = mC === 0 ? null : d / Math.abs(mC);
  const significant = r.sided === 'greater' ? d > 0 : r.sided === 'less' ? d < 0 : d !== 0;
  const p = significant ? 0 : 1;
  const point = (x: number | null): Interval =>
    x === null ? [null, null] : r.sided === 'greater' ? [x, null] : r.sided === 'less' ? [null, x] : [x, x];
  const warnings = lift === null ? ['control mean is 0: the relative lift is undefined'] : [];
  const result = {
    absolute: { estimate: d, ci: point(d), stdError: 0, pValue: p },
    relative: { estimate: lift, ci: point(lift), stdError: lift === null ? null : 0, pValue: p },
    sided: r.sided,
    direction: r.direction,
    chanceToWin: null as number | null,
    risk: [null, null] as Interval,
    pValue: p,
    exact: null,
    test: { method: 'known' as const, level: 1 },
    significant,
    ...directionFlags(significant, d, r.direction),
    warnings,
  };
  if (r.method === 'bayesian' && r.direction !== null) {
    const gain = (r.direction === 'increase' ? 1 : -1) * (lift ?? d);
    result.chanceToWin = gain > 0 ? 1 : gain < 0 ? 0 : 0.5;
    result.risk = [Math.max(gain, 0), Math.max(-gain, 0)];
  }
  return result;
}
