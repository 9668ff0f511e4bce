// Rollouts judged by their error rates through the API (issue 38), each ramp 25 → 50 → 100% watched by the
// monitor at the default threshold (0: any proven loss), users arriving every round with a guardrail value
// drawn from a normal. A/A: 200 rollouts whose variant is the control's twin; every rollback is false, their
// share must be at most alpha (0.05), and the dry run (POST …/rollout/simulate) of the same plan must
// estimate it within 3 points. Known effect: 100 rollouts 20% worse; the share rolled back must match the dry
// run's within 15 points (3 binomial standard deviations). Larger runs: `npm run bench -- --rollout-aa`.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SKIP_BACKEND } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';
import { runRolloutTrial, type TrialPlan } from './helpers/rollout-trial.js';

const PLAN: Omit<TrialPlan, 'rollouts' | 'effect' | 'seed'> = {
  usersPerRound: 40,
  intervalMinutes: 20,
  steps: [{ percent: 25, minMinutes: 60 }, { percent: 50, minMinutes: 60 }, { percent: 100 }],
  minimumUnits: 30,
  mean: 1000,
  stdDev: 300,
  simulationRuns: 2000,
};

describe('rollouts judged by their error rates', { skip: SKIP_BACKEND, timeout: 600_000 }, () => {
  const t = clockedRuntime('rollout-aa');
  const advance = (minutes: number) => t.advance(minutes);

  test('A/A: 200 rollouts of identical arms, false rollbacks at most alpha, the dry run within 3 points', async () => {
    const out = await runRolloutTrial(t.runtime, advance, { ...PLAN, rollouts: 200, effect: 0, seed: 38 });
    console.log(JSON.stringify(out));
    assert.equal(
      out.rolledBack + out.completed,
      out.rollouts,
      'every rollout ended: completed or rolled back',
    );
    assert.ok(out.rate <= 0.05, `false rollbacks ${out.rolledBack} of ${out.rollouts}: above alpha`);
    assert.ok(
      Math.abs(out.simulated.chance - out.rate) <= 0.03,
      `the dry run says ${out.simulated.chance}, the API run ${out.rate}`,
    );
    assert.equal(out.minutesToFull.api, out.minutesToFull.simulated, 'the clean ramp takes as long');
  });

  test('known effect: 100 rollouts 20% worse, rolled back as often as the dry run says', async () => {
    const out = await runRolloutTrial(t.runtime, advance, { ...PLAN, rollouts: 100, effect: 0.2, seed: 39 });
    console.log(JSON.stringify(out));
    assert.equal(out.rolledBack + out.completed, out.rollouts);
    assert.ok(out.simulated.chance > 0.3, `the dry run should see most of these: ${out.simulated.chance}`);
    assert.ok(
      Math.abs(out.simulated.chance - out.rate) <= 0.15,
      `the dry run says ${out.simulated.chance}, the API run ${out.rate}`,
    );
  });
});
