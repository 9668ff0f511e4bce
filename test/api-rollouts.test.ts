// Rollouts (issue 38) through the API on the test backend, with a test clock and the monitor's rounds run
// by hand: a clean ramp through every step to 100% (membership only grows, one step a round however
// overdue), a 30% worse guardrail rolled back once by the monitor, approval steps that wait, and the
// refusals (one live rollout, unknown variants, the control, moves not allowed from a state).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type Api, assertError, SKIP_BACKEND, uniqueSlug } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

const COST_GUARDRAIL = { name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 };
const USERS = Array.from({ length: 2000 }, (_, i) => `user-${i}`);

interface Rollout {
  state: string;
  step: number;
  percent: number;
  reason: string | null;
  history: Array<{ type: string; actor: { kind: string }; data: Record<string, unknown> }>;
}

describe('rollouts', { skip: SKIP_BACKEND }, () => {
  const t = clockedRuntime('rollouts', { webhooks: { pollMs: 100, retrySchedule: [0.2], timeoutMs: 2000 } });
  let api: Api;
  let receiver: Receiver;
  let secret: string;
  const minutes = (n: number) => t.advance(n);

  before(async () => {
    api = t.runtime.api;
    receiver = await startReceiver([200]);
    const hook = await api.post('/webhooks', { url: receiver.url, events: ['rollout.*'] });
    assert.equal(hook.statusCode, 201, hook.body);
    secret = hook.json().secret;
  });

  after(async () => {
    await receiver?.close();
  });

  async function sticky(fields: Record<string, unknown> = {}): Promise<string> {
    const slug = uniqueSlug('rollout');
    await api.createExperiment({ slug, assignment: 'sticky', ...fields });
    return slug;
  }

  async function rollout(slug: string): Promise<Rollout> {
    const res = await api.get(`/experiment/${slug}/rollout`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Rollout;
  }

  /** The users assign puts in B now. */
  async function inB(slug: string, users = USERS): Promise<Set<string>> {
    const b = new Set<string>();
    for (const userId of users) {
      const { variant } = await api.assign(slug, { userId });
      if (variant === 'B') b.add(userId);
    }
    return b;
  }

  test('a clean ramp reaches 100% through every step, one a round; membership only grows', async () => {
    const slug = await sticky();
    const started = await api.post(`/experiment/${slug}/rollout`, { variant: 'B' });
    assert.equal(started.statusCode, 200, started.body);
    assert.equal(started.json().state, 'running');
    assert.equal(started.json().percent, 5);
    let before = await inB(slug);
    const percents = [5];
    for (const expected of [25, 50, 100]) {
      // Not yet: the step is held its hour.
      minutes(59);
      await t.runtime.monitor.round();
      assert.equal((await rollout(slug)).percent, percents.at(-1));
      // Traffic in the step after the round that counted it (a step with no calls is held).
      await inB(slug, USERS.slice(0, 300));
      await t.runtime.ingest.drain();
      // Overdue by hours: one step this round, not a burst.
      minutes(180);
      await t.runtime.monitor.round();
      const r = await rollout(slug);
      assert.equal(r.percent, expected);
      percents.push(expected);
      const now = await inB(slug);
      for (const id of before) assert.ok(now.has(id), `${id} left B at ${expected}%`);
      assert.ok(
        Math.abs(now.size / USERS.length - expected / 100) < 0.05,
        `${now.size} of ${USERS.length} at ${expected}%`,
      );
      before = now;
    }
    const done = await rollout(slug);
    assert.equal(done.state, 'completed');
    assert.deepEqual(
      done.history.map((e) => [e.type, e.actor.kind, e.data.percent]),
      [
        ['rollout.started', 'key', 5],
        ['rollout.step_advanced', 'schedule', 25],
        ['rollout.step_advanced', 'schedule', 50],
        ['rollout.completed', 'schedule', 100],
      ],
    );
    assert.equal(before.size, USERS.length);
    // One signed delivery per move, in order (standardwebhooks verifies each).
    const sent = await receiver.waitFor(4, 10_000);
    const wh = new Webhook(secret);
    const mine = sent
      .map(
        (got) =>
          wh.verify(got.body, got.headers as Record<string, string>) as {
            type: string;
            data: { experiment: string };
          },
      )
      .filter((p) => p.data.experiment === slug);
    assert.deepEqual(
      mine.map((p) => p.type),
      ['rollout.started', 'rollout.step_advanced', 'rollout.step_advanced', 'rollout.completed'],
    );
    // The experiment is released: active, serving B to everyone; its analysis stays readable; running
    // it again takes new variants (a new version), and the rollout of the old version no longer applies.
    const released = (await api.get(`/experiment/${slug}`)).json();
    assert.deepEqual([released.status, released.active, released.releasedVariant], ['released', true, 'B']);
    assert.equal((await api.get(`/experiment/${slug}/analysis`)).statusCode, 200);
    const events = (await api.get(`/experiment/${slug}/events?type=experiment.status_changed`)).json().events;
    assert.deepEqual(
      events.map((e: { actor: { kind: string }; data: { from: string; to: string } }) => [
        e.actor.kind,
        e.data.from,
        e.data.to,
      ]),
      [['schedule', 'running', 'released']],
    );
    assertError(
      await api.patch(`/experiment/${slug}`, { status: 'running' }),
      409,
      /is released \(everyone gets B\)/,
    );
    // A completed rollout takes no more rounds or actions.
    minutes(600);
    await t.runtime.monitor.round();
    assert.equal((await rollout(slug)).history.length, 4);
    assertError(
      await api.patch(`/experiment/${slug}/rollout`, { action: 'pause' }),
      409,
      /completed: it has ended/,
    );
    const again = await api.patch(`/experiment/${slug}`, {
      status: 'running',
      variants: [
        { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
        { key: 'C', payload: { prompt: 'c' }, trafficPercent: 50 },
      ],
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(
      [again.json().status, again.json().version, again.json().releasedVariant],
      ['running', 2, null],
    );
    const split = new Set<string>();
    for (const userId of USERS.slice(0, 100)) split.add((await api.assign(slug, { userId })).variant);
    assert.deepEqual([...split].sort(), ['A', 'C']);
  });

  test('a variant 30% worse on a guardrail is rolled back by the monitor, exactly once; everyone gets control', async () => {
    const slug = await sticky({ metrics: [COST_GUARDRAIL], minimumUnits: 50 });
    const started = await api.post(`/experiment/${slug}/rollout`, {
      variant: 'B',
      steps: [{ percent: 50, minMinutes: 60 }, { percent: 100 }],
    });
    assert.equal(started.statusCode, 200, started.body);
    const results: unknown[] = [];
    const seen = { A: 0, B: 0 };
    for (const userId of USERS.slice(0, 800)) {
      const { variant, assignmentId } = await api.assign(slug, { userId });
      const key = variant as 'A' | 'B';
      const i = seen[key]++;
      results.push({
        variantKey: key,
        assignmentId,
        metrics: { cost_usd: (1 + (i % 10) / 10) * (key === 'B' ? 1.3 : 1) },
      });
    }
    assert.ok(seen.B > 300 && seen.A > 300, JSON.stringify(seen));
    await api.logMany(slug, results);
    await t.runtime.ingest.drain();
    minutes(1);
    await t.runtime.monitor.round();
    const back = await rollout(slug);
    assert.equal(back.state, 'rolled_back');
    assert.match(back.reason ?? '', /^cost_usd regressed: B is at least \d+(\.\d+)?% higher than A/);
    assert.equal((await inB(slug, USERS.slice(0, 300))).size, 0, 'rolled back: everyone on control');
    await t.runtime.monitor.round();
    const after = await rollout(slug);
    assert.deepEqual(
      after.history.map((e) => [e.type, e.actor.kind]),
      [
        ['rollout.started', 'key'],
        ['rollout.rolled_back', 'monitor'],
      ],
    );
    // One delivery per move: the rollback is sent once, though the round ran twice.
    const deadline = Date.now() + 10_000;
    let types: string[] = [];
    while (Date.now() < deadline) {
      types = receiver.received
        .map((got) => JSON.parse(got.body) as { type: string; data: { experiment: string } })
        .filter((p) => p.data.experiment === slug)
        .map((p) => p.type);
      if (types.length >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      receiver.received
        .map((got) => JSON.parse(got.body) as { type: string; data: { experiment: string } })
        .filter((p) => p.data.experiment === slug)
        .map((p) => p.type),
      ['rollout.started', 'rollout.rolled_back'],
    );
    // The experiment's history has the same events (webhooks are sent from it).
    const events = (await api.get(`/experiment/${slug}/events?type=rollout.*`)).json().events as unknown[];
    assert.equal(events.length, 2);
    // A new rollout of the same variant may start; the first units come back first.
    const again = await api.post(`/experiment/${slug}/rollout`, {
      variant: 'B',
      steps: [{ percent: 50 }, { percent: 100 }],
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.notEqual(again.json().id, started.json().id);
  });

  test('approval steps wait for a person; pending serves control', async () => {
    const slug = await sticky();
    const res = await api.post(`/experiment/${slug}/rollout`, {
      variant: 'B',
      steps: [
        { percent: 10, minMinutes: 0, approval: true },
        { percent: 100, approval: true },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().state, 'pending');
    assert.equal((await inB(slug, USERS.slice(0, 200))).size, 0);
    await t.runtime.ingest.drain();
    await t.runtime.monitor.round();
    assert.equal((await rollout(slug)).state, 'pending');
    const approved = await api.patch(`/experiment/${slug}/rollout`, { action: 'approve' });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().percent, 10);
    minutes(5);
    await t.runtime.monitor.round();
    assert.equal((await rollout(slug)).percent, 10, 'the last step waits for its approval');
    assert.equal((await api.patch(`/experiment/${slug}/rollout`, { action: 'approve' })).statusCode, 200);
    assertError(
      await api.patch(`/experiment/${slug}/rollout`, { action: 'approve' }),
      409,
      /approved already/,
    );
    await t.runtime.monitor.round();
    const done = await rollout(slug);
    assert.equal(done.state, 'completed');
    assert.deepEqual(
      done.history.map((e) => e.type),
      ['rollout.created', 'rollout.started', 'rollout.approved', 'rollout.completed'],
    );
  });

  test('pause holds the ramp, resume restarts the step; refusals say why', async () => {
    const slug = await sticky();
    assertError(await api.get(`/experiment/${slug}/rollout`), 404, /has no rollout/);
    assertError(
      await api.patch(`/experiment/${slug}`, { status: 'released' }),
      409,
      /when a rollout of its variant completes/,
    );
    assertError(await api.post(`/experiment/${slug}/rollout`, { variant: 'C' }), 400, /not a variant/);
    assertError(await api.post(`/experiment/${slug}/rollout`, { variant: 'A' }), 400, /is the control/);
    assertError(
      await api.post(`/experiment/${slug}/rollout`, {
        variant: 'B',
        steps: [{ percent: 50 }, { percent: 20 }],
      }),
      400,
      /above the step before it/,
    );
    assertError(
      await api.post(`/experiment/${slug}/rollout`, {
        variant: 'B',
        guardrails: [{ metric: 'x', threshold: 0 }],
      }),
      400,
      /not a guardrail/,
    );
    assertError(await api.post('/experiment/no-such-experiment/rollout', { variant: 'B' }), 404);
    assert.equal((await api.post(`/experiment/${slug}/rollout`, { variant: 'B' })).statusCode, 200);
    assertError(await api.post(`/experiment/${slug}/rollout`, { variant: 'B' }), 409, /live rollout already/);
    assertError(
      await api.patch(`/experiment/${slug}/rollout`, { action: 'resume' }),
      409,
      /cannot resume a rollout that is running/,
    );
    assertError(
      await api.patch(`/experiment/${slug}`, {
        variants: [
          { key: 'A', payload: {}, trafficPercent: 10 },
          { key: 'B', payload: {}, trafficPercent: 90 },
        ],
      }),
      409,
      /has a running rollout of B: its variants cannot change/,
    );
    const paused = await api.patch(`/experiment/${slug}/rollout`, {
      action: 'pause',
      reason: 'support tickets up',
    });
    assert.equal(paused.json().reason, 'support tickets up');
    minutes(120);
    await t.runtime.monitor.round();
    assert.equal((await rollout(slug)).percent, 5);
    assert.equal((await api.patch(`/experiment/${slug}/rollout`, { action: 'resume' })).statusCode, 200);
    minutes(59);
    await t.runtime.monitor.round();
    assert.equal((await rollout(slug)).percent, 5, 'the resumed step is held its hour again');
    // Its hour is up, but no call came in since the monitor counted the step: held, not paused.
    minutes(1);
    await t.runtime.monitor.round();
    assert.deepEqual([(await rollout(slug)).state, (await rollout(slug)).percent], ['running', 5]);
    await inB(slug, USERS.slice(0, 100));
    await t.runtime.ingest.drain();
    await t.runtime.monitor.round();
    assert.equal((await rollout(slug)).percent, 25);
    const rolled = await api.patch(`/experiment/${slug}/rollout`, { action: 'rollback' });
    assert.equal(rolled.json().state, 'rolled_back');
    assert.equal(rolled.json().reason, 'rolled back by a person');
    assertError(await api.patch(`/experiment/${slug}/rollout`, { action: 'bogus' }), 400);
    const paused2 = await sticky();
    await api.setStatus(paused2, 'paused');
    assertError(await api.post(`/experiment/${paused2}/rollout`, { variant: 'B' }), 409, /is paused/);
  });
});
