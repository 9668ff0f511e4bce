// A rollout's traffic checks through the API (issue 38): the monitor counts each step at its first round in
// it (calls, and users per arm in a sticky experiment). New users arriving while B gains too few of them
// (here a client that keeps only the users the rollout puts in A, picked with preview, which records nothing)
// roll it back with the reason, by the monitor. Returning users all calling again (B's, many times) are no
// mismatch; a step with no calls is held; a healthy step goes on. SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type Api, SKIP_BACKEND, uniqueSlug } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';

interface RolloutAnswer {
  state: string;
  step: number;
  reason: string;
  stepCounts: unknown;
  history: Array<{ actor: unknown }>;
}

describe('rollout traffic checks', { skip: SKIP_BACKEND }, () => {
  const t = clockedRuntime('rollout-traffic');
  let api: Api;
  before(() => {
    api = t.runtime.api;
  });

  async function round(minutes: number): Promise<RolloutAnswer> {
    await t.runtime.ingest.drain();
    t.clock += minutes * 60_000;
    await t.runtime.monitor.round();
    return (await api.get(`/experiment/${slug}/rollout`)).json();
  }

  let slug = '';
  /** Starts a 25% → 100% rollout; 400 users call once; the monitor's round counts the step. */
  async function counted(): Promise<{ inB: string[]; inA: string[] }> {
    slug = uniqueSlug('traffic');
    await api.createExperiment({ slug, assignment: 'sticky' });
    const res = await api.post(`/experiment/${slug}/rollout`, {
      variant: 'B',
      steps: [{ percent: 25, minMinutes: 60 }, { percent: 100 }],
    });
    assert.equal(res.statusCode, 200, res.body);
    const inB: string[] = [];
    const inA: string[] = [];
    for (let i = 0; i < 400; i++) {
      const userId = `first-${i}`;
      ((await api.assign(slug, { userId })).variant === 'B' ? inB : inA).push(userId);
    }
    const r = await round(1);
    assert.equal(r.state, 'running');
    assert.deepEqual(r.stepCounts, { calls: 400, users: { variant: inB.length, control: inA.length } });
    return { inB, inA };
  }

  test('new users while B gains too few of them: rolled back by the monitor, saying so', async () => {
    await counted();
    // 300 new users the rollout puts in A, and 10 in B: B gains 10 of 310 at a 25% step.
    const picked: Record<string, string[]> = { A: [], B: [] };
    for (let i = 0; picked.A!.length < 300 || picked.B!.length < 10; i++) {
      const userId = `new-${i}`;
      const { variant } = (await api.post(`/experiment/${slug}/preview`, { userId })).json();
      if (picked[variant]!.length < (variant === 'A' ? 300 : 10)) picked[variant]!.push(userId);
    }
    for (const userId of [...picked.A!, ...picked.B!]) await api.assign(slug, { userId });
    const r = await round(1);
    assert.equal(r.state, 'rolled_back');
    assert.match(
      r.reason,
      /^sample ratio mismatch: B gained 10 users and A 300 since the step was counted; at 25% B should gain about 78 \(anytime-valid p = /,
    );
    assert.deepEqual(r.history.at(-1)?.actor, { kind: 'monitor' });
  });

  test("no calls hold the step; B's users calling again and again are traffic, not a mismatch", async () => {
    const { inB } = await counted();
    // Its hour is up with no call since the count: held, not stopped.
    const held = await round(60);
    assert.deepEqual([held.state, held.step], ['running', 0]);
    // Only returning users, B's, five times each: calls, and no user gained by either arm.
    for (let k = 0; k < 5; k++) for (const userId of inB) await api.assign(slug, { userId });
    const done = await round(1);
    assert.equal(done.state, 'completed', done.reason);
  });
});
