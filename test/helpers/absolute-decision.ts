// The decision as the analysis makes it, for simulations of power: compareArms (one test of the difference per
// kind of metric: Welch, the confidence sequence or the flat posterior for numbers; the score test for
// proportions), read as "significantly higher".
import { type AnalysisMethod, type ArmData, compareArms, type Sided } from '../../src/stats/index.js';

/** Significant, and the treatment higher than the control (the direction the simulated effects take). */
export function detectsIncrease(
  control: ArmData,
  treatment: ArmData,
  o: { method: AnalysisMethod; alpha: number; sided: Sided; nStar?: number },
): boolean {
  const r = compareArms(control, treatment, { ...o, direction: 'increase' });
  return r.significant && r.absolute.estimate !== null && r.absolute.estimate > 0;
}
