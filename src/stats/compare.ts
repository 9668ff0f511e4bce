// Owns the comparison of one treatment arm with the control: which test decides (one per kind of metric),
// read in the metric's direction (which way is better). Each test prints its own interval on both scales.
import { compareKnown } from './compare-known.js';
import { compareMeanArms } from './compare-means.js';
import { compareProportions } from './compare-proportions.js';
import type {
  ArmComparison,
  CompareOptions,
  ResolvedCompare,
  ResolvedSided,
  SidedOption,
} from './comparison.js';
import { summarizeArm } from './moments.js';
import { countsOf } from './small-counts.js';
import type { ArmData, Direction } from './types.js';

export type {
  AnalysisMethod,
  ArmComparison,
  CompareOptions,
  ExactCheck,
  ResolvedCompare,
  ResolvedSided,
  SidedOption,
  TestMethod,
  TestUsed,
} from './comparison.js';
export { directionFlags } from './decision.js';

export const BETTER_NEEDS_DIRECTION = 'sided=better needs a declared direction; tested two-sided';

const isDirection = (d: unknown): d is Direction => d === 'increase' || d === 'decrease';

/**
 * The alternative to test and the direction to read results in. 'better' is 'greater' for 'increase' and
 * 'less' for 'decrease' (two-sided, with a warning, without a direction). Without a declared direction,
 * sided=greater reads as 'increase' and sided=less as 'decrease' (wording only: the test stays literal).
 */
export function resolveSided(sided: SidedOption, direction: Direction | null | undefined): ResolvedSided {
  const warnings: string[] = [];
  let declared: Direction | null = null;
  if (isDirection(direction)) declared = direction;
  else if (direction !== null && direction !== undefined) {
    warnings.push(`direction must be 'increase' or 'decrease'; none used`);
  }
  if (sided === 'better') {
    if (declared === null) warnings.push(BETTER_NEEDS_DIRECTION);
    return {
      sided: declared === null ? 'two' : declared === 'increase' ? 'greater' : 'less',
      direction: declared,
      warnings,
    };
  }
  if (!(['two', 'greater', 'less'] as const).includes(sided)) {
    warnings.push(`sided must be 'two', 'greater', 'less' or 'better'; used 'two'`);
    return { sided: 'two', direction: declared, warnings };
  }
  const implied = sided === 'greater' ? 'increase' : sided === 'less' ? 'decrease' : null;
  return { sided, direction: declared ?? implied, warnings };
}

/**
 * Treatment vs control. One test decides, on the absolute difference, and its interval is printed on both
 * scales (the lift's derived from the same test): proportions by the score test, means by Welch's t (the
 * sequence or the flat-prior posterior under those methods), arms without spread exactly.
 */
export function compareArms(control: ArmData, treatment: ArmData, o: CompareOptions): ArmComparison {
  const { sided, direction, warnings } = resolveSided(o.sided, o.direction);
  const r: ResolvedCompare = { method: o.method, alpha: o.alpha, sided, direction, nStar: o.nStar };
  const proportion = o.kind === 'proportion';
  const counts = [countsOf(control, proportion), countsOf(treatment, proportion)] as const;
  const c = summarizeArm(control);
  const t = summarizeArm(treatment);
  const out =
    counts[0] && counts[1]
      ? compareProportions(control, treatment, counts[0], counts[1], r)
      : !proportion && c.variance === 0 && t.variance === 0 && (c.n ?? 0) >= 2 && (t.n ?? 0) >= 2
        ? compareKnown(c, t, r)
        : compareMeanArms(control, treatment, r);
  return { ...out, warnings: [...new Set([...warnings, ...out.warnings])] };
}
