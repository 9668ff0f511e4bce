// The rollout's dry run (pure): seeded (the same plan, the same numbers), the clean ramp's time is the
// schedule's, identical arms stop at most alpha of the ramps, a large regression stops nearly all, minUnits
// lengthens the ramp, and a time limit cuts the runs (saying how many ran).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSteps, type Rollout } from './rollout.js';
import { type SimulationPlan, simulateRollout } from './rollout-simulation.js';

function plan(over: Partial<SimulationPlan> = {}, effect = 0): SimulationPlan {
  const rollout: Rollout = {
    experimentVersion: 1,
    variant: 'B',
    control: 'A',
    state: 'pending',
    step: 0,
    steps: checkSteps([{ percent: 20, minMinutes: 30 }, { percent: 60, minMinutes: 30 }, { percent: 100 }]),
    guardrails: [{ metric: 'cost', threshold: 0 }],
    onRegression: 'rollback',
    seed: '',
    approved: -1,
    stepStartedAt: null,
    reason: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
  return {
    rollout,
    minimumUnits: 50,
    alpha: 0.05,
    intervalSeconds: 300,
    unitsPerHour: 3000,
    startUnits: { control: 0, variant: 0 },
    metrics: [
      {
        metric: 'cost',
        direction: 'decrease',
        threshold: 0,
        kind: 'mean',
        mean: 2,
        stdDev: 1,
        effect,
        perUnit: 1,
      },
    ],
    runs: 400,
    seed: 5,
    timeLimitMs: 60_000,
    horizonMinutes: 24 * 60,
    ...over,
  };
}

test('the same plan answers the same numbers', () => {
  assert.deepEqual(simulateRollout(plan({}, 0.02)), simulateRollout(plan({}, 0.02)));
  assert.notDeepEqual(simulateRollout(plan({ seed: 6 }, 0.02)), simulateRollout(plan({}, 0.02)));
});

test('identical arms: the clean ramp takes the schedule, false rollbacks at most alpha', () => {
  const out = simulateRollout(plan());
  assert.equal(out.runs, 400);
  assert.equal(out.identicalArms.minutesToFull?.p50, 60);
  assert.ok(out.identicalArms.rollback.chance <= 0.05, JSON.stringify(out.identicalArms.rollback));
  assert.equal(out.identicalArms.rollback.chance + out.identicalArms.completed.chance, 1);
});

test('a 30% worse variant is stopped in nearly every run, early', () => {
  const out = simulateRollout(plan({}, 0.3));
  assert.ok(out.withEffects.rollback.chance > 0.95);
  assert.ok((out.withEffects.minutesToRollback?.p50 ?? Infinity) <= 30, 'within the first step');
  const better = simulateRollout(plan({}, -0.3));
  assert.equal(better.withEffects.rollback.chance, 0, 'a better variant is never rolled back');
});

test('a proportion guardrail, and minUnits that hold a step until enough units came', () => {
  const p = plan();
  p.metrics = [{ ...p.metrics[0]!, kind: 'proportion', mean: 0.1, stdDev: 0.3, effect: 1 }];
  assert.ok(simulateRollout(p).withEffects.rollback.chance > 0.9, 'a doubled failure rate');
  const slow = plan({ unitsPerHour: 600 });
  slow.rollout = {
    ...slow.rollout,
    steps: checkSteps([{ percent: 20, minMinutes: 30, minUnits: 400 }, { percent: 100 }]),
  };
  // 20% of 600 an hour is 120 an hour in B: 400 take about 3 h 20 min.
  const t = simulateRollout(slow).identicalArms.minutesToFull!;
  assert.ok(t.p50 >= 180 && t.p50 <= 240, JSON.stringify(t));
});

test('a time limit cuts the runs, both scenarios alike', () => {
  const out = simulateRollout(plan({ runs: 10_000, timeLimitMs: 1 }));
  assert.ok(out.runs >= 1 && out.runs < 10_000);
});
