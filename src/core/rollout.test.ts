import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConflictError, ValidationError } from './errors.js';
import {
  actionMove,
  applyMove,
  checkSteps,
  DEFAULT_STEPS,
  inRollout,
  monitorMove,
  type Rollout,
  rolloutSeed,
  servedPercent,
  startMove,
} from './rollout.js';

const T0 = '2026-11-28T00:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

function rollout(over: Partial<Rollout> = {}): Rollout {
  const steps = over.steps ?? checkSteps(undefined);
  const base: Rollout = {
    experimentVersion: 1,
    variant: 'B',
    control: 'A',
    state: 'pending',
    step: 0,
    steps,
    guardrails: [],
    onRegression: 'rollback',
    seed: rolloutSeed('seed-1', 'B'),
    approved: -1,
    stepStartedAt: null,
    reason: null,
    createdAt: T0,
    updatedAt: T0,
  };
  const r = { ...base, ...over };
  const start = startMove(r.steps);
  return start && over.state === undefined ? applyMove(r, start, T0) : r;
}

describe('steps', () => {
  test('the default ramp is 5 → 25 → 50 → 100%, an hour a step', () => {
    assert.deepEqual(
      checkSteps(undefined).map((s) => [s.percent, s.minMinutes]),
      [
        [5, 60],
        [25, 60],
        [50, 60],
        [100, 0],
      ],
    );
    assert.equal(DEFAULT_STEPS.length, 4);
  });

  test('a ramp only grows and ends at 100%', () => {
    assert.throws(() => checkSteps([]), ValidationError);
    assert.throws(
      () => checkSteps([{ percent: 10 }, { percent: 10 }, { percent: 100 }]),
      /must be above the step before it/,
    );
    assert.throws(() => checkSteps([{ percent: 10 }, { percent: 50 }]), /last step must be 100/);
    assert.throws(() => checkSteps([{ percent: 0 }, { percent: 100 }]), /steps\.0\.percent/);
    assert.throws(() => checkSteps([{ percent: 101 }]), /steps\.0\.percent/);
    assert.throws(() => checkSteps([{ percent: 100, minMinutes: -1 }]), /minMinutes/);
    assert.throws(() => checkSteps([{ percent: 100, minUnits: 1.5 }]), /minUnits/);
    assert.deepEqual(checkSteps([{ percent: 10, minUnits: 200, approval: true }, { percent: 100 }]), [
      { percent: 10, minMinutes: 60, minUnits: 200, approval: true },
      { percent: 100, minMinutes: 0, minUnits: null, approval: false },
    ]);
  });
});

describe('membership', () => {
  test('over 100,000 ids the set in the variant only grows, and a second rollout keeps it', () => {
    const seed = rolloutSeed('exp-seed', 'B');
    const ids = Array.from({ length: 100_000 }, (_, i) => `user-${i}`);
    // Pause and resume keep the step; a second rollout of the same variant starts at 5% again.
    const path = [5, 25, 25, 50, 100];
    let before: Set<string> = new Set();
    for (const percent of path) {
      const now = new Set(ids.filter((id) => inRollout(seed, id, percent)));
      for (const id of before) assert.ok(now.has(id), `${id} left the variant at ${percent}%`);
      // The share is the step's, within sampling noise (binomial sd at 100k ≤ 0.16 points).
      assert.ok(Math.abs(now.size / ids.length - percent / 100) < 0.01, `${now.size} at ${percent}%`);
      before = now;
    }
    const second = rolloutSeed('exp-seed', 'B');
    const first5 = ids.filter((id) => inRollout(seed, id, 5));
    assert.deepEqual(
      ids.filter((id) => inRollout(second, id, 5)),
      first5,
    );
    // Another variant's rollout draws other units (its own seed).
    const other = new Set(ids.filter((id) => inRollout(rolloutSeed('exp-seed', 'C'), id, 5)));
    const overlap = first5.filter((id) => other.has(id)).length;
    assert.ok(overlap < first5.length * 0.1, `overlap ${overlap} of ${first5.length}`);
  });
});

describe('moves', () => {
  test('a clean ramp advances one step a round once each step was held and completes at 100%', () => {
    let r = rollout();
    assert.equal(r.state, 'running');
    assert.equal(servedPercent(r), 5);
    assert.equal(monitorMove(r, { now: at(59), units: 0, regression: null }), null);
    // Overdue by hours: one step this round, and the next step's clock starts now.
    let move = monitorMove(r, { now: at(600), units: 0, regression: null });
    assert.deepEqual(move, { state: 'running', step: 1, event: 'rollout.step_advanced', reason: null });
    r = applyMove(r, move!, at(600));
    assert.equal(monitorMove(r, { now: at(601), units: 0, regression: null }), null);
    r = applyMove(r, monitorMove(r, { now: at(660), units: 0, regression: null })!, at(660));
    assert.equal(servedPercent(r), 50);
    move = monitorMove(r, { now: at(720), units: 0, regression: null });
    assert.equal(move?.event, 'rollout.completed');
    r = applyMove(r, move!, at(720));
    assert.equal(r.state, 'completed');
    assert.equal(servedPercent(r), 100);
    assert.equal(monitorMove(r, { now: at(9999), units: 0, regression: null }), null);
  });

  test('a step waits for its units', () => {
    const r = rollout({
      steps: checkSteps([{ percent: 10, minMinutes: 0, minUnits: 500 }, { percent: 100 }]),
    });
    assert.equal(monitorMove(r, { now: at(5), units: 499, regression: null }), null);
    assert.equal(monitorMove(r, { now: at(5), units: 500, regression: null })?.event, 'rollout.completed');
  });

  test('approval steps wait for a person, pending ones too', () => {
    const steps = checkSteps([
      { percent: 10, approval: true, minMinutes: 0 },
      { percent: 50, approval: true, minMinutes: 0 },
      { percent: 100 },
    ]);
    let r = rollout({ steps });
    assert.equal(r.state, 'pending');
    assert.equal(servedPercent(r), 0);
    assert.equal(monitorMove(r, { now: at(10), units: 0, regression: null }), null);
    r = applyMove(r, actionMove(r, 'approve', null), at(1));
    assert.equal(r.state, 'running');
    assert.equal(r.stepStartedAt, at(1));
    assert.equal(monitorMove(r, { now: at(10), units: 10, regression: null }), null, 'step 1 needs approval');
    r = applyMove(r, actionMove(r, 'approve', null), at(11));
    assert.equal(r.step, 0);
    assert.throws(() => actionMove(r, 'approve', null), /approved already/);
    r = applyMove(r, monitorMove(r, { now: at(12), units: 10, regression: null })!, at(12));
    assert.equal(servedPercent(r), 50);
    // The last step asks for none.
    assert.throws(() => actionMove(r, 'approve', null), ConflictError);
  });

  test('a regression rolls back (or pauses) before any advance; ended rollouts take no action', () => {
    const r = rollout();
    const back = monitorMove(r, { now: at(600), units: 1000, regression: 'latency_ms regressed' })!;
    assert.deepEqual(back, {
      state: 'rolled_back',
      step: 0,
      event: 'rollout.rolled_back',
      reason: 'latency_ms regressed',
    });
    const ended = applyMove(r, back, at(600));
    assert.equal(servedPercent(ended), 0);
    assert.equal(ended.reason, 'latency_ms regressed');
    assert.equal(monitorMove(ended, { now: at(700), units: 0, regression: 'again' }), null);
    for (const action of ['approve', 'pause', 'resume', 'rollback'] as const) {
      assert.throws(() => actionMove(ended, action, null), /it has ended/);
    }
    const holding = rollout({ onRegression: 'pause' });
    assert.equal(monitorMove(holding, { now: at(1), units: 0, regression: 'x' })?.state, 'paused');
  });

  test('pause holds the step; resume restarts its clock', () => {
    let r = rollout();
    r = applyMove(r, actionMove(r, 'pause', null), at(30));
    assert.equal(r.reason, 'paused by a person');
    assert.equal(servedPercent(r), 5);
    assert.equal(monitorMove(r, { now: at(200), units: 0, regression: null }), null);
    assert.throws(() => actionMove(r, 'pause', null), /allowed: approve, resume, rollback/);
    r = applyMove(r, actionMove(r, 'resume', null), at(200));
    assert.equal(r.reason, null);
    assert.equal(monitorMove(r, { now: at(259), units: 0, regression: null }), null);
    assert.equal(monitorMove(r, { now: at(260), units: 0, regression: null })?.step, 1);
  });
});
