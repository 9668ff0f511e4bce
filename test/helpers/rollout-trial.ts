// Rollouts through the API (issue 38), many at once: experiments each ramped by a rollout watched by the
// monitor, users arriving round by round (assign, then a result of a guardrail metric drawn from a normal,
// the variant's mean moved by `effect`), the test clock moved a monitor interval a round. With effect 0 (an
// A/A run) every rollback is false; the rate is compared with the dry run's estimate for the same plan (its
// identicalArms, or its withEffects). Used by test/api-rollout-aa.test.ts (small) and the bench (larger).
import assert from 'node:assert/strict';
import type { TestRuntime } from './app.js';
import { seededRandom } from './random.js';

export interface TrialPlan {
  rollouts: number;
  /** Users per experiment per round. */
  usersPerRound: number;
  /**
   * The share of each round's users who came before (drawn from the earlier rounds' users; 0: all new). A
   * returning user the ramp moved from control to the variant has results in both arms.
   */
  returning?: number;
  /** Test-clock minutes between monitor rounds. */
  intervalMinutes: number;
  steps: Array<{ percent: number; minMinutes?: number }>;
  minimumUnits: number;
  /** The guardrail's per-user mean and standard deviation (the control's). */
  mean: number;
  /** The variant's mean relative to the control's (0: identical arms; 0.2: 20% worse latency). */
  effect: number;
  stdDev: number;
  seed: number;
  /** Runs of the dry run. */
  simulationRuns: number;
}

export interface TrialOutcome {
  rollouts: number;
  rolledBack: number;
  completed: number;
  /** Rollbacks over rollouts. */
  rate: number;
  /** The dry run's rollback chance for the same plan, and its 95% interval. */
  simulated: { chance: number; ci: [number, number] };
  /** Median minutes to 100% of the API's completed rollouts and of the dry run's. */
  minutesToFull: { api: number | null; simulated: number | null };
  /** Why the rolled-back ones were: the reason's words before the first colon, and how many. */
  reasons: Record<string, number>;
  rounds: number;
  seconds: number;
}

const METRIC = 'latency_ms';

/** A normal draw from a seeded uniform (Box–Muller). */
function normal(uniform: () => number, mean: number, sd: number): number {
  const u = 1 - uniform();
  const v = uniform();
  return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

export async function runRolloutTrial(
  runtime: TestRuntime,
  advance: (minutes: number) => void,
  plan: TrialPlan,
): Promise<TrialOutcome> {
  const started = performance.now();
  const { api } = runtime;
  const uniform = seededRandom(plan.seed);
  const tag = `${plan.seed}-${Date.now().toString(36)}`;
  const fields = {
    assignment: 'sticky',
    minimumUnits: plan.minimumUnits,
    metrics: [{ name: METRIC, direction: 'decrease', role: 'guardrail' }],
  };
  // The dry run of the same plan, on an experiment with no data yet (so it starts from none, as these do).
  const planned = await api.createExperiment({ slug: `aa-plan-${tag}`, ...fields });
  const sim = await api.post(`/experiment/${planned.slug}/rollout/simulate`, {
    variant: 'B',
    steps: plan.steps,
    baseline: { [METRIC]: { mean: plan.mean, stdDev: plan.stdDev } },
    effects: { [METRIC]: plan.effect },
    unitsPerHour: (plan.usersPerRound * 60) / plan.intervalMinutes,
    monitorIntervalSeconds: plan.intervalMinutes * 60,
    runs: plan.simulationRuns,
    seed: plan.seed,
  });
  assert.equal(sim.statusCode, 200, sim.body);
  const simulation = sim.json();
  const scenario = plan.effect === 0 ? simulation.identicalArms : simulation.withEffects;

  const slugs: string[] = [];
  for (let i = 0; i < plan.rollouts; i++) {
    const { slug } = await api.createExperiment({ slug: `aa-${tag}-${i}`, ...fields });
    const res = await api.post(`/experiment/${slug}/rollout`, { variant: 'B', steps: plan.steps });
    assert.equal(res.statusCode, 200, res.body);
    slugs.push(slug);
  }
  const ended = new Map<string, { state: string; minutes: number; reason: string | null }>();
  let rounds = 0;
  let minutes = 0;
  const limit = 4 * plan.steps.reduce((s, x) => s + (x.minMinutes ?? 60), 0);
  while (ended.size < slugs.length && minutes <= limit) {
    rounds++;
    const open = slugs.filter((s) => !ended.has(s));
    for (const slug of open) {
      const users = Array.from({ length: plan.usersPerRound }, (_, j) =>
        rounds > 1 && uniform() < (plan.returning ?? 0)
          ? `u${1 + Math.floor(uniform() * (rounds - 1))}-${Math.floor(uniform() * plan.usersPerRound)}`
          : `u${rounds}-${j}`,
      );
      const assigned = await Promise.all(users.map((userId) => api.assign(slug, { userId })));
      const results = assigned.map((a) => ({
        variantKey: a.variant,
        assignmentId: a.assignmentId,
        metrics: {
          [METRIC]: normal(uniform, plan.mean * (a.variant === 'B' ? 1 + plan.effect : 1), plan.stdDev),
        },
      }));
      await api.logMany(slug, results);
    }
    await runtime.ingest.drain();
    advance(plan.intervalMinutes);
    minutes += plan.intervalMinutes;
    await runtime.monitor.round();
    for (const slug of open) {
      const { state, reason } = (await api.get(`/experiment/${slug}/rollout`)).json();
      if (state !== 'running') ended.set(slug, { state, minutes, reason });
    }
  }
  const states = [...ended.values()];
  const rolledBack = states.filter((s) => s.state === 'rolled_back').length;
  const reasons: Record<string, number> = {};
  for (const s of states) {
    if (s.state !== 'rolled_back') continue;
    const why = String(s.reason).split(':')[0]!;
    reasons[why] = (reasons[why] ?? 0) + 1;
  }
  const full = states
    .filter((s) => s.state === 'completed')
    .map((s) => s.minutes)
    .sort((a, b) => a - b);
  return {
    rollouts: slugs.length,
    rolledBack,
    completed: full.length,
    rate: rolledBack / slugs.length,
    simulated: scenario.rollback,
    minutesToFull: {
      api: full.length > 0 ? full[Math.floor(full.length / 2)]! : null,
      simulated: scenario.minutesToFull?.p50 ?? null,
    },
    reasons,
    rounds,
    seconds: (performance.now() - started) / 1000,
  };
}
