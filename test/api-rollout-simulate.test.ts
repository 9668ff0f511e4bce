// The rollout's dry run through the API (issue 38, item 7): POST /experiment/:slug/rollout/simulate on an
// experiment's own results (the control's mean and spread, the observed lift, the units already there, the
// rate they came at) and on stated numbers; the same plan answers the same numbers; refusals name the field.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type Api, assertError, SKIP_BACKEND, uniqueSlug } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';

const COST = { name: 'cost_usd', direction: 'decrease', role: 'guardrail' };

describe('rollout dry run', { skip: SKIP_BACKEND }, () => {
  const t = clockedRuntime('rollout-simulate');
  let api: Api;
  before(() => {
    api = t.runtime.api;
  });

  async function withResults(worse: number): Promise<string> {
    const slug = uniqueSlug('sim');
    await api.createExperiment({ slug, assignment: 'sticky', metrics: [COST], minimumUnits: 50 });
    const results: unknown[] = [];
    for (let i = 0; i < 600; i++) {
      const { variant, assignmentId } = await api.assign(slug, { userId: `u-${i}` });
      const base = 1 + ((i * 7) % 10) / 10;
      results.push({
        variantKey: variant,
        assignmentId,
        metrics: { cost_usd: variant === 'B' ? base * worse : base },
      });
    }
    for (let i = 0; i < results.length; i += 200) await api.logMany(slug, results.slice(i, i + 200));
    await t.runtime.ingest.drain();
    t.clock += 2 * 3_600_000;
    return slug;
  }

  test("on the experiment's own results: observed baseline and lift, a 30% worse variant stopped, the twin not", async () => {
    const slug = await withResults(1.3);
    const body = { variant: 'B', runs: 300, monitorIntervalSeconds: 600 };
    const res = await api.post(`/experiment/${slug}/rollout/simulate`, body);
    assert.equal(res.statusCode, 200, res.body);
    const sim = res.json();
    assert.equal(sim.runs, 300);
    assert.equal(sim.control, 'A');
    assert.equal(sim.monitorIntervalSeconds, 600);
    const g = sim.guardrails[0];
    assert.deepEqual(
      [g.metric, g.threshold, g.kind, g.baseline, g.effectFrom],
      ['cost_usd', 0, 'mean', 'observed', 'observed'],
    );
    assert.ok(Math.abs(g.effect - 0.3) < 0.05, `observed lift ${g.effect}`);
    assert.ok(Math.abs(g.mean - 1.45) < 0.05, `control mean ${g.mean}`);
    assert.equal(sim.startUnits.control + sim.startUnits.variant, 600);
    // 600 units entered in the hour the clock stood at, read two hours later: 600 over 2 hours.
    assert.equal(sim.unitsPerHour, 300);
    assert.ok(sim.withEffects.rollback.chance > 0.95, JSON.stringify(sim.withEffects));
    assert.ok(sim.identicalArms.rollback.chance <= 0.05, JSON.stringify(sim.identicalArms));
    assert.equal(sim.identicalArms.minutesToFull.p50, 180, 'the default ramp: three hours');
    assert.ok(sim.assumptions.some((a: string) => /Poisson/.test(a)));
    // Seeded: the same plan answers the same numbers; another seed may not.
    const again = await api.post(`/experiment/${slug}/rollout/simulate`, body);
    assert.deepEqual(again.json().identicalArms, sim.identicalArms);
    assert.deepEqual(again.json().withEffects, sim.withEffects);
  });

  test('stated numbers: a baseline and an effect on an experiment with no data yet', async () => {
    const slug = uniqueSlug('sim');
    await api.createExperiment({ slug, metrics: [COST] });
    const res = await api.post(`/experiment/${slug}/rollout/simulate`, {
      variant: 'B',
      steps: [{ percent: 50, minMinutes: 30 }, { percent: 100 }],
      baseline: { cost_usd: { mean: 2, stdDev: 1 } },
      effects: { cost_usd: 0.5 },
      unitsPerHour: 2000,
      runs: 200,
    });
    assert.equal(res.statusCode, 200, res.body);
    const sim = res.json();
    assert.deepEqual([sim.guardrails[0].baseline, sim.guardrails[0].effectFrom], ['stated', 'stated']);
    assert.deepEqual(sim.startUnits, { control: 0, variant: 0 });
    assert.ok(sim.withEffects.rollback.chance > 0.95);
    assert.ok(
      sim.assumptions.some((a: string) => /MONITOR_INTERVAL_SECONDS=0/.test(a)),
      'the test server runs no monitor',
    );
    assert.equal(sim.identicalArms.minutesToFull.p50, 30);
    // A true/false guardrail: a share without a stdDev.
    const rate = uniqueSlug('sim');
    await api.createExperiment({
      slug: rate,
      metrics: [{ name: 'failed', direction: 'decrease', role: 'guardrail' }],
    });
    const shares = await api.post(`/experiment/${rate}/rollout/simulate`, {
      variant: 'B',
      baseline: { failed: { mean: 0.1 } },
      unitsPerHour: 500,
      runs: 50,
    });
    assert.equal(shares.statusCode, 200, shares.body);
    assert.equal(shares.json().guardrails[0].kind, 'proportion');
  });

  test('refusals name what was wrong', async () => {
    const slug = uniqueSlug('sim');
    await api.createExperiment({ slug, metrics: [COST] });
    const post = (body: unknown) => api.post(`/experiment/${slug}/rollout/simulate`, body);
    assertError(
      await post({ variant: 'B' }),
      400,
      /no results of guardrail 'cost_usd'.*state baseline\.cost_usd/,
    );
    assertError(
      await post({ variant: 'B', baseline: { cost_usd: { mean: 1, stdDev: 1 } } }),
      400,
      /no units have entered .* state unitsPerHour/,
    );
    assertError(await post({ variant: 'Z' }), 400, /variant 'Z' is not a variant/);
    assertError(await post({ variant: 'A' }), 400, /is the control/);
    assertError(
      await post({ variant: 'B', effects: { latency: 0.1 } }),
      400,
      /effects\.latency: 'latency' is not a guardrail/,
    );
    assertError(await post({ variant: 'B', runs: 10_001 }), 400, /runs/);
    assertError(await post({ variant: 'B', baseline: { cost_usd: { mean: 3 } } }), 400, /share from 0 to 1/);
    const bare = uniqueSlug('sim');
    await api.createExperiment({ slug: bare });
    assertError(
      await api.post(`/experiment/${bare}/rollout/simulate`, { variant: 'B' }),
      400,
      /no guardrail metrics/,
    );
    assertError(await api.post('/experiment/nope/rollout/simulate', { variant: 'B' }), 404);
  });
});
