// Rollouts (issue 38): one variant of an experiment ramped to everyone in steps, watched by the monitor,
// rolled back (or paused) on a proven regression. This file is the rollout's rules: its shape and
// defaults, who is in it (membership only grows), and which move the monitor or a person may make next.
// Pure: no I/O, the clock and the facts (units, regressions) passed in.

import { DEFAULT_SRM_THRESHOLD } from '../stats/srm.js';
import { shortfallPValue } from '../stats/srm-sequential.js';
import { ConflictError, ValidationError } from './errors.js';
import { hashV2 } from './hash.js';

export const ROLLOUT_STATES = ['pending', 'running', 'paused', 'completed', 'rolled_back'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

/** What the monitor does when a guardrail regresses: send everyone back to control, or hold the ramp. */
export const REGRESSION_ACTIONS = ['rollback', 'pause'] as const;
export type RegressionAction = (typeof REGRESSION_ACTIONS)[number];

export const ROLLOUT_ACTIONS = ['approve', 'pause', 'resume', 'rollback'] as const;
export type RolloutAction = (typeof ROLLOUT_ACTIONS)[number];

/** A step of the ramp: the share of units served the variant, held at least this long and this wide. */
export interface RolloutStep {
  /** 0 < percent ≤ 100; increasing from step to step; the last is 100. */
  percent: number;
  /** Minutes the step is held before the next may start. */
  minMinutes: number;
  /** Units in the rolled-out variant (during the rollout) before the next step may start; null: no minimum. */
  minUnits: number | null;
  /** Entering this step waits for a person's `approve`. */
  approval: boolean;
}

/** A guardrail of the rollout: a metric judged against the control, a regression beyond `threshold`. */
export interface RolloutGuardrail {
  metric: string;
  /** The relative change (a fraction: 0.05 is 5%) beyond which a worse metric counts as a regression. */
  threshold: number;
}

/** The ramp when a request names no steps: 5 → 25 → 50 → 100%, an hour at each step before the next. */
export const DEFAULT_STEPS: readonly RolloutStep[] = Object.freeze(
  [5, 25, 50, 100].map((percent) =>
    Object.freeze({ percent, minMinutes: percent === 100 ? 0 : 60, minUnits: null, approval: false }),
  ),
);

export interface Rollout {
  /** The experiment's version it was started on: a new version (a PATCH of variants) leaves it behind. */
  experimentVersion: number;
  variant: string;
  /** The variant everyone else is served (the experiment's defaultVariant, else its first variant). */
  control: string;
  state: RolloutState;
  /** The index of the current step (0 while pending). */
  step: number;
  steps: RolloutStep[];
  guardrails: RolloutGuardrail[];
  onRegression: RegressionAction;
  /** The hash seed of membership: the experiment's seed and the variant, so a new rollout keeps its units. */
  seed: string;
  /** The highest step index a person approved; -1: none. */
  approved: number;
  /** When the current step started (ISO 8601); null while pending. */
  stepStartedAt: string | null;
  /** Why it is paused or rolled back (the monitor's finding or the person's action); else null. */
  reason: string | null;
  /**
   * The traffic counts at the monitor's first round in the current step: the traffic checks count from
   * here. Null (or absent, in rollouts stored before it) until that round.
   */
  stepCounts?: TrafficCounts | null;
  createdAt: string;
  updatedAt: string;
}

/** The request's ramp after defaults, checked: increasing percents ending at 100, whole minutes. */
export function checkSteps(steps: readonly Partial<RolloutStep>[] | undefined): RolloutStep[] {
  if (steps === undefined) return DEFAULT_STEPS.map((s) => ({ ...s }));
  if (steps.length === 0) throw new ValidationError('steps must name at least one step (the last at 100%)');
  let last = 0;
  return steps.map((s, i) => {
    const percent = s.percent;
    if (typeof percent !== 'number' || !(percent > 0 && percent <= 100)) {
      throw new ValidationError(`steps.${i}.percent must be above 0 and at most 100`);
    }
    if (percent <= last) {
      throw new ValidationError(
        `steps.${i}.percent must be above the step before it (${last}): a ramp only grows`,
      );
    }
    last = percent;
    if (i === steps.length - 1 && percent !== 100) {
      throw new ValidationError(
        `the last step must be 100 (got ${percent}): a rollout ends with everyone in it`,
      );
    }
    const minMinutes = s.minMinutes ?? (percent === 100 ? 0 : 60);
    if (!Number.isFinite(minMinutes) || minMinutes < 0) {
      throw new ValidationError(`steps.${i}.minMinutes must be 0 or more`);
    }
    const minUnits = s.minUnits ?? null;
    if (minUnits !== null && !(Number.isInteger(minUnits) && minUnits >= 0)) {
      throw new ValidationError(`steps.${i}.minUnits must be a whole number, 0 or more`);
    }
    return { percent, minMinutes, minUnits, approval: s.approval === true };
  });
}

/** The membership seed of a rollout of `variant`: a second rollout of it serves the same units first. */
export function rolloutSeed(experimentSeed: string, variant: string): string {
  return `${experimentSeed}:rollout:${variant}`;
}

/**
 * Whether `unitId` is served the rolled-out variant at `percent`: its hash under the rollout's seed lies
 * below the share. The hash does not change with the step, so a unit in at 5% is in at every larger
 * share: membership only grows (through pauses, resumes and a second rollout of the same variant).
 */
export function inRollout(seed: string, unitId: string, percent: number): boolean {
  return hashV2(seed, unitId) < percent / 100;
}

/** The share served the variant now: the step's while it runs or is paused; 0 rolled back or pending. */
export function servedPercent(r: Pick<Rollout, 'state' | 'step' | 'steps'>): number {
  if (r.state === 'running' || r.state === 'paused') return r.steps[r.step]!.percent;
  if (r.state === 'completed') return 100;
  return 0;
}

/** A move of a rollout: the state (and step) it goes to and the event type it raises. */
export interface RolloutMove {
  state: RolloutState;
  step: number;
  /** rollout.started, rollout.step_advanced, rollout.paused, rollout.resumed, rollout.rolled_back, rollout.completed, rollout.approved */
  event: string;
  reason: string | null;
  /** The approval this move records (the step index), when it is an approval. */
  approved?: number;
}

/** The move into step `step` (or completion, at 100%). */
function enter(step: number, steps: readonly RolloutStep[], first: boolean): RolloutMove {
  if (steps[step]!.percent >= 100)
    return { state: 'completed', step, event: 'rollout.completed', reason: null };
  return { state: 'running', step, event: first ? 'rollout.started' : 'rollout.step_advanced', reason: null };
}

/** The move a new rollout makes at once: it starts unless its first step waits for an approval. */
export function startMove(steps: readonly RolloutStep[]): RolloutMove | null {
  return steps[0]!.approval ? null : enter(0, steps, true);
}

const WHERE_FROM: Record<RolloutAction, readonly RolloutState[]> = {
  approve: ['pending', 'running', 'paused'],
  pause: ['running'],
  resume: ['paused'],
  rollback: ['pending', 'running', 'paused'],
};

/**
 * A person's action. `approve` approves the step waiting next (the first, while pending: it starts then;
 * a later one, which the monitor enters once its time and units are met too). Resuming restarts the
 * step's clock: the time paused does not count toward its minMinutes.
 */
export function actionMove(r: Rollout, action: RolloutAction, reason: string | null): RolloutMove {
  if (!WHERE_FROM[action].includes(r.state)) {
    const allowed = ROLLOUT_ACTIONS.filter((a) => WHERE_FROM[a].includes(r.state));
    throw new ConflictError(
      `cannot ${action} a rollout that is ${r.state}` +
        (allowed.length > 0 ? `; allowed: ${allowed.join(', ')}` : ': it has ended'),
    );
  }
  switch (action) {
    case 'approve': {
      const next = r.state === 'pending' ? 0 : r.step + 1;
      if (next >= r.steps.length || !r.steps[next]!.approval) {
        throw new ConflictError(
          `no step waits for an approval (the next step, ${next}, does not ask for one)`,
        );
      }
      if (r.approved >= next) throw new ConflictError(`step ${next} is approved already`);
      if (r.state === 'pending') return { ...enter(0, r.steps, true), approved: 0 };
      return { state: r.state, step: r.step, event: 'rollout.approved', reason: null, approved: next };
    }
    case 'pause':
      return {
        state: 'paused',
        step: r.step,
        event: 'rollout.paused',
        reason: reason ?? 'paused by a person',
      };
    case 'resume':
      return { state: 'running', step: r.step, event: 'rollout.resumed', reason: null };
    case 'rollback':
      return {
        state: 'rolled_back',
        step: r.step,
        event: 'rollout.rolled_back',
        reason: reason ?? 'rolled back by a person',
      };
  }
}

/**
 * The worse end of a guardrail's interval when the whole interval lies beyond the rollout's threshold on the
 * worse side (a proven regression), else null: a metric that should decrease whose lift's lower end is above
 * +threshold, or one that should increase whose upper end is below −threshold.
 */
export function regressionBound(
  direction: 'increase' | 'decrease',
  ci: readonly (number | null)[],
  threshold: number,
): number | null {
  const bound = direction === 'increase' ? ci[1] : ci[0];
  if (bound === null || bound === undefined) return null;
  const worse = direction === 'increase' ? bound < -threshold : bound > threshold;
  return worse ? bound : null;
}

/** What the monitor counts of a rollout's traffic, to compare from round to round. */
export interface TrafficCounts {
  /** Assign calls of the rolled-out variant and the control. */
  calls: number;
  /** Distinct users seen in each arm (sticky experiments); null where users are not counted (random). */
  users: { variant: number; control: number } | null;
}

/** What the monitor knows of a running rollout in one round. */
export interface RolloutFacts {
  now: string;
  /** Units served the rolled-out variant since the rollout started. */
  units: number;
  /** A proven regression (why), or null. */
  regression: string | null;
  /** The traffic counts now, for the traffic checks; absent: not checked (the dry run). */
  traffic?: TrafficCounts;
}

/**
 * The sample-ratio check at the rollout's own split, over the users each arm gained since the step was
 * counted (sticky experiments). A user new to the experiment lands in the variant with the step's share p;
 * the variant also gains the control's users the ramp moves over, the control only new users: so the
 * variant's gain can only look fuller than its share, and only a shortfall is tested ("the variant gets too
 * few": it loses its exposures, or gets none). The test is anytime-valid (stats/srm-sequential.ts: a mixture
 * SPRT, read every round, below the analysis' SRM threshold 0.001 at most 0.1% of the time when serving is
 * right). Calls are not used: a returning user's calls all go to one arm, so they are not independent draws.
 */
export function trafficFinding(r: Rollout, traffic: TrafficCounts | undefined): string | null {
  const from = r.stepCounts?.users;
  const now = traffic?.users;
  const p = servedPercent(r) / 100;
  if (from === undefined || from === null || now === undefined || now === null || p <= 0 || p >= 1)
    return null;
  const variant = now.variant - from.variant;
  const control = now.control - from.control;
  const gained = variant + control;
  const pValue = shortfallPValue(variant, gained, p);
  if (!(pValue < DEFAULT_SRM_THRESHOLD)) return null;
  const words =
    `${r.variant} gained ${variant} users and ${r.control} ${control} since the step was counted; at ` +
    `${servedPercent(r)}% ${r.variant} should gain about ${Math.round(gained * p)}`;
  return variant === 0
    ? `no traffic to ${r.variant}: ${words}`
    : `sample ratio mismatch: ${words} (anytime-valid p = ${pValue.toPrecision(2)})`;
}

/** Minutes from `from` to `to` (ISO 8601). */
function minutesBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / 60_000;
}

/**
 * The monitor's move for a running rollout this round, or null: a regression rolls back (or pauses)
 * first; else the next step starts once the current one was held its minutes, has its units, and the
 * next step's approval is given. One step a round at most: an overdue ramp advances once per round, and
 * the new step's clock starts now, so it is held its own minutes too (never a burst).
 */
export function monitorMove(r: Rollout, facts: RolloutFacts): RolloutMove | null {
  if (r.state !== 'running') return null;
  const finding = facts.regression ?? trafficFinding(r, facts.traffic);
  if (finding !== null) {
    return r.onRegression === 'rollback'
      ? { state: 'rolled_back', step: r.step, event: 'rollout.rolled_back', reason: finding }
      : { state: 'paused', step: r.step, event: 'rollout.paused', reason: finding };
  }
  const current = r.steps[r.step]!;
  const next = r.step + 1;
  if (next >= r.steps.length) return null;
  if (r.stepStartedAt === null || minutesBetween(r.stepStartedAt, facts.now) < current.minMinutes)
    return null;
  // A step held for a time must have seen traffic in it: no calls since it began (or its count not taken
  // yet) holds the ramp where it is instead of shipping further on no evidence.
  if (facts.traffic !== undefined && current.minMinutes > 0) {
    const from = r.stepCounts;
    if (from === undefined || from === null || facts.traffic.calls === from.calls) return null;
  }
  if (current.minUnits !== null && facts.units < current.minUnits) return null;
  if (r.steps[next]!.approval && r.approved < next) return null;
  return enter(next, r.steps, false);
}

/**
 * `r` after `move`, at `now`. A new step's traffic count is taken at the monitor's next round, not now: calls
 * served at the old share meanwhile (in flight, or by instances that have not heard of the move yet) stay
 * out of it.
 */
export function applyMove(r: Rollout, move: RolloutMove, now: string): Rollout {
  const stepChanged = move.step !== r.step || (r.state === 'pending' && move.state !== 'pending');
  return {
    ...r,
    stepCounts: stepChanged ? null : (r.stepCounts ?? null),
    state: move.state,
    step: move.step,
    approved: Math.max(r.approved, move.approved ?? -1),
    stepStartedAt: stepChanged || move.event === 'rollout.resumed' ? now : r.stepStartedAt,
    reason: move.state === 'paused' || move.state === 'rolled_back' ? move.reason : null,
    updatedAt: now,
  };
}

/** The states of a live rollout: one at a time per experiment (the store's partial unique index too). */
export const LIVE_STATES: readonly RolloutState[] = ['pending', 'running', 'paused'];

/**
 * Whether the rollout decides assignments: from its creation (pending: everyone control) until it ends.
 * A completed one has made the experiment released; a rolled-back one leaves everyone on control.
 */
export function isLive(r: Pick<Rollout, 'state'>): boolean {
  return LIVE_STATES.includes(r.state);
}

/** The refusal of a second live rollout. */
export function liveRolloutConflict(): ConflictError {
  return new ConflictError(
    'the experiment has a live rollout already: roll it back or let it complete first',
  );
}

/**
 * What assign serves under a rollout, or null when the rollout does not apply: the variant to units whose
 * hash lies below `percent`, the control to the rest (pending and rolled back: 0, completed: 100).
 */
export interface RolloutServing {
  variant: string;
  control: string;
  seed: string;
  percent: number;
}

/** The serving rule of the experiment's newest rollout, when it was started on the current version. */
export function servingOf(r: Rollout | undefined, experimentVersion: number): RolloutServing | null {
  if (r === undefined || r.experimentVersion !== experimentVersion) return null;
  return { variant: r.variant, control: r.control, seed: r.seed, percent: servedPercent(r) };
}
