// The decision on the absolute difference alone, as each method reads it, for simulations of power: Welch,
// the confidence sequence, or the flat-prior posterior (P(side) >= 1 - alpha/2 two-sided, 1 - alpha one-sided,
// which is the z-test). It stands in for compareArms while the decision rule moves to the difference's test.
import {
  type AnalysisMethod,
  type ArmData,
  bayesianCompare,
  compareMeans,
  type Sided,
  sequentialCompare,
} from '../../src/stats/index.js';

/** Significant, and the treatment higher than the control (the direction the simulated effects take). */
export function detectsIncrease(
  control: ArmData,
  treatment: ArmData,
  o: { method: AnalysisMethod; alpha: number; sided: Sided; nStar?: number },
): boolean {
  const { method, alpha, sided } = o;
  if (method === 'bayesian') {
    const b = bayesianCompare(control, treatment, { alpha, effect: 'absolute' });
    return b.chanceToWin !== null && b.chanceToWin >= 1 - (sided === 'two' ? alpha / 2 : alpha);
  }
  const options = { alpha, sided, effect: 'absolute' } as const;
  const r =
    method === 'sequential'
      ? sequentialCompare(control, treatment, { ...options, nStar: o.nStar })
      : compareMeans(control, treatment, options);
  return r.pValue !== null && r.pValue < alpha && r.estimate !== null && r.estimate > 0;
}
