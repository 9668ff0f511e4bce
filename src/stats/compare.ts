// Owns the comparison of one treatment arm with the control under the chosen method, both effect scales.
import { bayesianCompare } from './bayesian.js';
import { compareMeans } from './frequentist.js';
import { sequentialCompare } from './sequential.js';
import type { ArmData, EffectEstimate, EffectType, Interval, Sided } from './types.js';

/** frequentist: fixed-horizon Welch; sequential: always-valid confidence sequence; bayesian: flat prior. */
export type AnalysisMethod = 'frequentist' | 'bayesian' | 'sequential';

export interface CompareOptions {
  method: AnalysisMethod;
  alpha: number;
  sided: Sided;
  /** Sequential only: the total sample size the confidence sequence is tightest at. */
  nStar?: number;
}

export interface ArmComparison {
  absolute: EffectEstimate;
  relative: EffectEstimate;
  /** P(lift > 0), falling back to the absolute effect's; null for the p-value methods. */
  chanceToWin: number | null;
  /** Bayesian expected losses [choosing control, choosing treatment]; [null, null] otherwise. */
  risk: Interval;
  significant: boolean;
  /** Both scales' warnings, each once. */
  warnings: string[];
}

function estimate(r: EffectEstimate): EffectEstimate {
  return { estimate: r.estimate, ci: r.ci, stdError: r.stdError, pValue: r.pValue };
}

function bayesian(control: ArmData, treatment: ArmData, alpha: number): ArmComparison {
  const abs = bayesianCompare(control, treatment, { alpha, effect: 'absolute' });
  const rel = bayesianCompare(control, treatment, { alpha, effect: 'relative' });
  // The lift's chance to win is the one reported; it is undefined when the control mean is 0.
  const chanceToWin = rel.chanceToWin ?? abs.chanceToWin;
  return {
    absolute: { estimate: abs.expected, ci: abs.ci, stdError: abs.stdDev, pValue: null },
    relative: { estimate: rel.expected, ci: rel.ci, stdError: rel.stdDev, pValue: null },
    chanceToWin,
    risk: rel.chanceToWin !== null ? rel.risk : abs.risk,
    significant: chanceToWin !== null && (chanceToWin > 1 - alpha || chanceToWin < alpha),
    warnings: [...new Set([...abs.warnings, ...rel.warnings])],
  };
}

/** Treatment vs control on both the absolute and the relative scale. */
export function compareArms(control: ArmData, treatment: ArmData, o: CompareOptions): ArmComparison {
  if (o.method === 'bayesian') return bayesian(control, treatment, o.alpha);
  const opts = { alpha: o.alpha, sided: o.sided };
  const compare =
    o.method === 'sequential'
      ? (effect: EffectType) => sequentialCompare(control, treatment, { ...opts, effect, nStar: o.nStar })
      : (effect: EffectType) => compareMeans(control, treatment, { ...opts, effect });
  const abs = compare('absolute');
  const rel = compare('relative');
  return {
    absolute: estimate(abs),
    relative: estimate(rel),
    chanceToWin: null,
    risk: [null, null],
    // The absolute effect's test is exact Welch (or its confidence sequence); the lift's needs the
    // delta method and a control mean away from 0, so significance follows the absolute one.
    significant: abs.pValue !== null && abs.pValue < o.alpha,
    warnings: [...new Set([...abs.warnings, ...rel.warnings])],
  };
}
