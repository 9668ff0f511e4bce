// A rollout's dry run (issue 38): many ramps played through the same rules the monitor follows
// (core/rollout.ts monitorMove, the guardrail's sequential interval of stats/guardrail.ts, the experiment's
// minimumUnits), with units arriving at a rate and each guardrail metric drawn per unit from a normal (a
// mean) or a Bernoulli (a proportion) of the control's mean and spread, the variant's moved by an effect.
// Answers how often the monitor stops the ramp (rollback or pause) and how long it takes to reach 100%,
// once with identical arms (the false-rollback rate) and once with the stated or observed effects.
// Pure and seeded: the same plan answers the same numbers.
import jStat from 'jstat';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { guardrailCheck } from '../stats/guardrail.js';
import type { ArmData, Direction } from '../stats/types.js';
import {
  applyMove,
  monitorMove,
  type Rollout,
  regressionBound,
  servedPercent,
  startMove,
} from './rollout.js';

export interface SimulatedMetric {
  metric: string;
  direction: Direction;
  /** The rollout's threshold for it (relative). */
  threshold: number;
  kind: 'mean' | 'proportion';
  /** Per unit: the control's mean (a proportion's share of true) and standard deviation. */
  mean: number;
  stdDev: number;
  /** The variant's mean relative to the control's (0.3: 30% higher; 0: identical arms). */
  effect: number;
  /** Values of the metric per entering unit (1: each unit one value). */
  perUnit: number;
  /** The arms' data already there when the rollout starts (the observed scenario); else drawn. */
  start?: { control: ArmData; variant: ArmData };
}

export interface SimulationPlan {
  /** The rollout as it would start (pending; steps, guardrails, onRegression). */
  rollout: Rollout;
  minimumUnits: number;
  alpha: number;
  nStar?: number;
  /** Seconds between the monitor's rounds (each round judges, then moves at most one step). */
  intervalSeconds: number;
  /** Units entering the experiment per hour (split by the rollout's percent). */
  unitsPerHour: number;
  /** Units each arm has when the rollout starts. */
  startUnits: { control: number; variant: number };
  metrics: SimulatedMetric[];
  runs: number;
  seed: number;
  /** Stop drawing more runs after this long (the answer says how many ran). */
  timeLimitMs: number;
  /** The longest a ramp is followed, in minutes (one that has not reached 100% by then did not finish). */
  horizonMinutes: number;
}

/** A chance estimated from the runs, with its 95% Wilson interval. */
export interface Share {
  chance: number;
  ci: [number, number];
}

/** Minutes over the runs that got there (null: none did). */
export interface Spread {
  mean: number;
  p10: number;
  p50: number;
  p90: number;
}

export interface ScenarioOutcome {
  /** The monitor stopped the ramp on a guardrail (rolled back, or paused with onRegression 'pause'). */
  rollback: Share;
  /** The ramp reached 100% within the horizon. */
  completed: Share;
  minutesToFull: Spread | null;
  minutesToRollback: Spread | null;
}

export interface SimulationOutcome {
  runs: number;
  identicalArms: ScenarioOutcome;
  withEffects: ScenarioOutcome;
}

const T0 = Date.parse('2000-01-01T00:00:00.000Z');

function wilson(k: number, n: number): Share {
  if (n === 0) return { chance: 0, ci: [0, 1] };
  const z = 1.959963984540054;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const mid = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return { chance: p, ci: [Math.max(0, mid - half), Math.min(1, mid + half)] };
}

function spread(values: number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    mean: sorted.reduce((s, v) => s + v, 0) / sorted.length,
    p10: at(0.1),
    p50: at(0.5),
    p90: at(0.9),
  };
}

/** One arm's data of one metric, growing as values are drawn. */
type Arm = { n: number; sum: number; sumSquares: number };

/** k more values of a normal (mean, sd): their sum, and their squares through the chi-square of their spread. */
function drawMean(arm: Arm, k: number, mean: number, sd: number): void {
  if (k <= 0) return;
  const sum = k * mean + (sd > 0 ? jStat.normal.sample(0, sd * Math.sqrt(k)) : 0);
  const within = k > 1 && sd > 0 ? sd * sd * jStat.chisquare.sample(k - 1) : 0;
  arm.n += k;
  arm.sum += sum;
  arm.sumSquares += within + (sum * sum) / k;
}

/** k more Bernoulli(p) values: exactly one by one for few, by the normal approximation for many. */
function drawProportion(arm: Arm, k: number, p: number, uniform: () => number): void {
  if (k <= 0) return;
  const q = Math.min(1, Math.max(0, p));
  let successes = 0;
  if (k * Math.min(q, 1 - q) < 30) {
    for (let i = 0; i < k; i++) if (uniform() < q) successes++;
  } else {
    const s = Math.round(jStat.normal.sample(k * q, Math.sqrt(k * q * (1 - q))));
    successes = Math.min(k, Math.max(0, s));
  }
  arm.n += k;
  arm.sum += successes;
  arm.sumSquares += successes;
}

function armData(kind: SimulatedMetric['kind'], arm: Arm): ArmData {
  return kind === 'proportion' ? { n: arm.n, successes: arm.sum } : { ...arm };
}

function fromData(kind: SimulatedMetric['kind'], data: ArmData): Arm {
  if ('successes' in data) return { n: data.n, sum: data.successes, sumSquares: data.successes };
  if ('sum' in data) return { n: data.n, sum: data.sum, sumSquares: data.sumSquares };
  throw new Error(`a ${kind} metric's start data must be moments or a proportion`);
}

interface RunEnd {
  rolledBack: boolean;
  completed: boolean;
  minutes: number;
}

/** One ramp, round by round, until it completes, is stopped, or the horizon passes. */
function playOnce(plan: SimulationPlan, withEffects: boolean, uniform: () => number): RunEnd {
  const stepMs = plan.intervalSeconds * 1000;
  const perRound = (plan.unitsPerHour * plan.intervalSeconds) / 3600;
  const draw = (arm: Arm, m: SimulatedMetric, k: number, effect: number) => {
    const mean = m.mean * (1 + effect);
    if (m.kind === 'proportion') drawProportion(arm, k, mean, uniform);
    else drawMean(arm, k, mean, m.stdDev);
  };
  const values = (units: number, m: SimulatedMetric) =>
    m.perUnit === 1 ? units : jStat.poisson.sample(units * m.perUnit);
  const arms = plan.metrics.map((m) => {
    const effect = withEffects ? m.effect : 0;
    if (withEffects && m.start !== undefined) {
      return { control: fromData(m.kind, m.start.control), variant: fromData(m.kind, m.start.variant) };
    }
    const control = { n: 0, sum: 0, sumSquares: 0 };
    const variant = { n: 0, sum: 0, sumSquares: 0 };
    draw(control, m, values(plan.startUnits.control, m), 0);
    draw(variant, m, values(plan.startUnits.variant, m), effect);
    return { control, variant };
  });
  let variantUnits = plan.startUnits.variant;
  let r: Rollout = { ...plan.rollout, approved: plan.rollout.steps.length };
  const first = startMove(r.steps) ?? {
    state: 'running' as const,
    step: 0,
    event: 'rollout.started',
    reason: null,
  };
  r = applyMove(r, first, new Date(T0).toISOString());
  const rounds = Math.ceil((plan.horizonMinutes * 60_000) / stepMs);
  for (let round = 1; round <= rounds && r.state === 'running'; round++) {
    const share = servedPercent(r) / 100;
    const toVariant = jStat.poisson.sample(perRound * share);
    const toControl = jStat.poisson.sample(perRound * (1 - share));
    variantUnits += toVariant;
    let regression: string | null = null;
    plan.metrics.forEach((m, i) => {
      const a = arms[i]!;
      draw(a.control, m, values(toControl, m), 0);
      draw(a.variant, m, values(toVariant, m), withEffects ? m.effect : 0);
      if (regression !== null || a.control.n < plan.minimumUnits || a.variant.n < plan.minimumUnits) return;
      const g = guardrailCheck(armData(m.kind, a.control), armData(m.kind, a.variant), {
        method: 'sequential',
        alpha: plan.alpha,
        direction: m.direction,
        threshold: m.threshold,
        kind: m.kind,
        ...(plan.nStar !== undefined ? { nStar: plan.nStar } : {}),
      });
      if (regressionBound(m.direction, g.relative.ci, m.threshold) !== null) regression = m.metric;
    });
    const now = new Date(T0 + round * stepMs).toISOString();
    const move = monitorMove(r, { now, units: variantUnits, regression });
    if (move !== null) r = applyMove(r, move, now);
    if (r.state !== 'running') {
      return {
        rolledBack: r.state !== 'completed',
        completed: r.state === 'completed',
        minutes: (round * stepMs) / 60_000,
      };
    }
  }
  return { rolledBack: false, completed: false, minutes: plan.horizonMinutes };
}

function outcomeOf(ends: RunEnd[]): ScenarioOutcome {
  const n = ends.length;
  return {
    rollback: wilson(ends.filter((e) => e.rolledBack).length, n),
    completed: wilson(ends.filter((e) => e.completed).length, n),
    minutesToFull: spread(ends.filter((e) => e.completed).map((e) => e.minutes)),
    minutesToRollback: spread(ends.filter((e) => e.rolledBack).map((e) => e.minutes)),
  };
}

/**
 * Plays `plan.runs` ramps with identical arms and as many with the effects (alternating, so a time limit
 * cuts both alike), seeded by `plan.seed`.
 */
export function simulateRollout(plan: SimulationPlan): SimulationOutcome {
  // pure-rand 8's generators move in place: each call continues the stream.
  const rng = xoroshiro128plus(plan.seed);
  const uniform = () => uniformFloat64(rng);
  // jstat draws from jStat._random_fn, except its Poisson sampler for λ ≥ 10, which calls Math.random:
  // both point at the seeded stream while this synchronous call runs, and are given back after it.
  const savedRandom = Math.random;
  jStat.setRandom(uniform);
  Math.random = uniform;
  const deadline = performance.now() + plan.timeLimitMs;
  const same: RunEnd[] = [];
  const effects: RunEnd[] = [];
  try {
    for (let i = 0; i < plan.runs; i++) {
      same.push(playOnce(plan, false, uniform));
      effects.push(playOnce(plan, true, uniform));
      if (performance.now() > deadline) break;
    }
  } finally {
    Math.random = savedRandom;
    jStat.setRandom(savedRandom);
  }
  return { runs: same.length, identicalArms: outcomeOf(same), withEffects: outcomeOf(effects) };
}
