import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createExperiment } from '../core/experiment.js';
import { checkSteps, type Rollout } from '../core/rollout.js';
import type { Analysis } from '../stats/index.js';
import { factsOf, regressionOf } from './rollout-judge.js';

const NOW = '2026-11-28T00:00:00.000Z';
const experiment = createExperiment(
  {
    slug: 'judge',
    variants: [
      { key: 'A', payload: {}, trafficPercent: 50 },
      { key: 'B', payload: {}, trafficPercent: 50 },
    ],
    metrics: [
      { name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 },
      { name: 'success', direction: 'increase', role: 'guardrail' },
    ],
    minimumUnits: 50,
  },
  NOW,
);
const rollout: Rollout = {
  experimentVersion: 1,
  variant: 'B',
  control: 'A',
  state: 'running',
  step: 0,
  steps: checkSteps(undefined),
  guardrails: [
    { metric: 'cost_usd', threshold: 0.05 },
    { metric: 'success', threshold: 0.1 },
  ],
  onRegression: 'rollback',
  seed: 'judge:rollout:B',
  approved: -1,
  stepStartedAt: NOW,
  reason: null,
  createdAt: NOW,
  updatedAt: NOW,
};

/** An analysis with each metric's B interval on the lift scale, n units an arm, and the SRM counts. */
function analysis(
  ci: Record<string, [number | null, number | null]>,
  n: number,
  counts = { A: n, B: n },
): Analysis {
  return {
    metrics: Object.entries(ci).map(([name, interval]) => ({
      name,
      variants: [
        { key: 'A', n },
        { key: 'B', n, guardrail: { relative: { ci: interval } } },
      ],
    })),
    srm: { counts, unit: 'user' },
  } as unknown as Analysis;
}

test('a regression is an interval wholly beyond the threshold on the worse side', () => {
  // cost should decrease: its lower end above +5% is proven worse; touching 5% is not.
  assert.match(
    regressionOf(experiment, rollout, analysis({ cost_usd: [0.08, 0.4] }, 100))!,
    /^cost_usd regressed: B is at least 8% higher than A/,
  );
  assert.equal(regressionOf(experiment, rollout, analysis({ cost_usd: [0.05, 0.4] }, 100)), null);
  assert.equal(regressionOf(experiment, rollout, analysis({ cost_usd: [-0.2, 0.4] }, 100)), null);
  // success should increase: its upper end below -10% (the rollout's own threshold) is proven worse.
  assert.match(
    regressionOf(experiment, rollout, analysis({ success: [-0.5, -0.12] }, 100))!,
    /^success regressed: B is at least 12% lower than A/,
  );
  assert.equal(regressionOf(experiment, rollout, analysis({ success: [-0.5, -0.08] }, 100)), null);
  // Not judged before both arms have minimumUnits, nor without an interval.
  assert.equal(regressionOf(experiment, rollout, analysis({ cost_usd: [0.08, 0.4] }, 49)), null);
  assert.equal(regressionOf(experiment, rollout, analysis({ cost_usd: [null, null] }, 100)), null);
});

test("the facts: the variant's units and the regression", () => {
  assert.deepEqual(factsOf(experiment, rollout, analysis({ cost_usd: [0, 0.1] }, 100, { A: 120, B: 7 })), {
    units: 7,
    regression: null,
  });
});
