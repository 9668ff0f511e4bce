// Owns the comparison of proportions: the Miettinen–Nurminen score test decides in every method (with the
// sequence's critical value under sequential) and both intervals are its duals, so a normal approximation
// never overrules it, however few the events. Per-user arms enter with Rao–Scott effective counts.
import type { ArmComparison, ExactCheck, ResolvedCompare } from './comparison.js';
import { bayesianReadout, directionFlags, normalCritical, normalPValue } from './decision.js';
import { effectMoments } from './effect.js';
import { type Counts, fisherExact, isSmallCount } from './exact.js';
import { isRatio, summarizeArm } from './moments.js';
import { effectiveCounts, scoreInterval, scoreZ } from './score.js';
import { DEFAULT_N_STAR, sequentialHalfWidth, sequentialPValue, sequentialR } from './sequential.js';
import type { ArmData, Interval } from './types.js';

/** A per-user arm's counts shrunk by its design effect; per-call counts as they are. */
function counted(arm: ArmData, counts: Counts): Counts {
  if (!isRatio(arm)) return counts;
  const s = summarizeArm(arm);
  return effectiveCounts(counts, s.variance === null || !s.n ? null : s.variance / s.n);
}

export function compareProportions(
  control: ArmData,
  treatment: ArmData,
  controlCounts: Counts,
  treatmentCounts: Counts,
  r: ResolvedCompare,
): Omit<ArmComparison, 'sided' | 'direction'> & Pick<ArmComparison, 'sided' | 'direction'> {
  const { alpha, sided } = r;
  const abs = effectMoments(control, treatment, 'absolute');
  const rel = effectMoments(control, treatment, 'relative');
  const warnings = [...abs.warnings, ...rel.warnings].filter((w) => !w.startsWith('the effect has zero'));
  const ec = counted(control, controlCounts);
  const et = counted(treatment, treatmentCounts);
  const pC = controlCounts.successes / controlCounts.trials;
  const pT = treatmentCounts.successes / treatmentCounts.trials;
  const d = pT - pC;
  const z = scoreZ(ec, et, 0, 'diff');
  const sequential = r.method === 'sequential';
  let pValue: number | null = null;
  let critical: number | null = null;
  if (sequential && sided !== 'two' && alpha >= 0.5) {
    warnings.push('one-sided sequential tests need alpha < 0.5');
  } else if (sequential) {
    const nStar = r.nStar !== undefined && r.nStar > 0 && Number.isFinite(r.nStar) ? r.nStar : DEFAULT_N_STAR;
    const rr = sequentialR((abs.control.n ?? 0) + (abs.treatment.n ?? 0), alpha, sided, nStar);
    pValue = sequentialPValue(z, rr, sided);
    critical = sequentialHalfWidth(1, rr, alpha, sided);
  } else {
    pValue = normalPValue(z, sided);
    critical = normalCritical(alpha, sided);
  }
  const absCi: Interval = critical === null ? [null, null] : scoreInterval(ec, et, critical, sided, 'diff');
  const ratioCi: Interval =
    critical === null ? [null, null] : scoreInterval(ec, et, critical, sided, 'ratio');
  const lift = pC === 0 ? null : d / pC;
  const significant = pValue !== null && pValue < alpha;
  const small = isSmallCount(controlCounts) || isSmallCount(treatmentCounts);
  const fisher = small ? fisherExact(controlCounts, treatmentCounts, sided) : null;
  const exact: ExactCheck | null = fisher === null ? null : { fisherPValue: fisher };
  const result = {
    absolute: { estimate: d, ci: absCi, stdError: abs.stdError, pValue },
    relative: {
      estimate: lift,
      ci: (lift === null ? [null, null] : ratioCi.map((b) => (b === null ? null : b - 1))) as Interval,
      stdError: rel.stdError,
      pValue: lift === null ? null : pValue,
    },
    sided,
    direction: r.direction,
    chanceToWin: null as number | null,
    risk: [null, null] as Interval,
    pValue,
    exact,
    test: { method: sequential ? ('score-sequence' as const) : ('score' as const), level: 1 - alpha },
    significant,
    ...directionFlags(significant, d, r.direction),
    warnings,
  };
  if (r.method === 'bayesian')
    Object.assign(result, bayesianReadout(z, rel.estimate, rel.stdError, r.direction));
  return result;
}
