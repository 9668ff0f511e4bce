// A rollout's traffic checks (core/rollout.ts), counted from the monitor's first round in the step: a
// variant that gains too few of the users arriving at the step's share (or none) stops the ramp as a
// regression does; the control's users moved over by the ramp never make it look short; a held step with
// no calls at all waits; a new step is counted again at the next round.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyMove,
  checkSteps,
  monitorMove,
  type Rollout,
  startMove,
  type TrafficCounts,
  trafficFinding,
} from './rollout.js';

const T0 = '2026-11-28T00:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const COUNTED: TrafficCounts = { calls: 5000, users: { variant: 100, control: 900 } };
const traffic = (calls: number, variant: number, control: number): TrafficCounts => ({
  calls,
  users: { variant, control },
});

/** Running at 25% (steps 25 → 50 → 100, an hour each), its step counted at COUNTED. */
function running(over: Partial<Rollout> = {}): Rollout {
  const steps = checkSteps([{ percent: 25 }, { percent: 50 }, { percent: 100 }]);
  const base: Rollout = {
    experimentVersion: 1,
    variant: 'B',
    control: 'A',
    state: 'pending',
    step: 0,
    steps,
    guardrails: [],
    onRegression: 'rollback',
    seed: 's:rollout:B',
    approved: -1,
    stepStartedAt: null,
    reason: null,
    createdAt: T0,
    updatedAt: T0,
  };
  return { ...applyMove(base, startMove(steps)!, T0), stepCounts: COUNTED, ...over };
}

test('the users gained since the step was counted are judged at the step share, the variant short only', () => {
  const r = running();
  // 250 of 1,000 new users at 25%: as expected (the totals, 350 of 1,900, would not be).
  assert.equal(trafficFinding(r, traffic(9000, 350, 1650)), null);
  // 150 of 1,000: the mixture's Bayes factor is e^25.6989 (scipy betaln), p = 1/BF = 6.9e-12.
  assert.match(
    trafficFinding(r, traffic(9000, 250, 1750)) ?? '',
    /^sample ratio mismatch: B gained 150 users and A 850 since the step was counted; at 25% B should gain about 250 \(anytime-valid p = 6\.9e-12\)$/,
  );
  assert.match(
    trafficFinding(r, traffic(9000, 100, 1300)) ?? '',
    /^no traffic to B: B gained 0 users and A 400/,
  );
  // The variant gaining more (the control's users moved over) is not judged: 600 of 1,000.
  assert.equal(trafficFinding(r, traffic(9000, 700, 1300)), null);
  // Too few to judge (B expects under 5 users), no count yet, or users not counted (random experiments).
  assert.equal(trafficFinding(r, traffic(9000, 100, 915)), null);
  assert.equal(trafficFinding({ ...r, stepCounts: null }, traffic(9000, 100, 5000)), null);
  assert.equal(trafficFinding(r, { calls: 9000, users: null }), null);
});

test('a finding stops the ramp as onRegression says; a held step with no calls waits', () => {
  const r = running();
  const short = { now: at(5), units: 0, regression: null, traffic: traffic(9000, 100, 1300) };
  assert.deepEqual(
    [monitorMove(r, short)?.state, monitorMove(r, short)?.event],
    ['rolled_back', 'rollout.rolled_back'],
  );
  assert.equal(monitorMove({ ...r, onRegression: 'pause' }, short)?.state, 'paused');
  // An hour on and not a call since the count: held (not paused) until calls arrive.
  const quiet = { now: at(61), units: 0, regression: null, traffic: COUNTED };
  assert.equal(monitorMove(r, quiet), null);
  assert.equal(monitorMove({ ...r, stepCounts: null }, { ...quiet, traffic: traffic(9000, 100, 900) }), null);
  const busy = { ...quiet, traffic: traffic(5200, 100, 900) };
  const next = monitorMove(r, busy);
  assert.equal(next?.event, 'rollout.step_advanced', 'returning users calling are traffic');
  // The new step is counted at the monitor's next round (calls at the old share meanwhile stay out).
  assert.equal(applyMove(r, next!, at(61)).stepCounts, null);
  // A guardrail's regression comes first and is the reason.
  assert.equal(monitorMove(r, { ...short, regression: 'cost regressed' })?.reason, 'cost regressed');
});

test('a step of 0 minutes passes on without traffic; without traffic facts (the dry run) nothing is checked', () => {
  const steps = checkSteps([{ percent: 10, minMinutes: 0 }, { percent: 100 }]);
  const r = running({ steps });
  assert.equal(
    monitorMove(r, { now: at(0), units: 0, regression: null, traffic: COUNTED })?.state,
    'completed',
  );
  assert.equal(
    monitorMove(running(), { now: at(61), units: 0, regression: null })?.event,
    'rollout.step_advanced',
  );
  // Pause and resume keep the step's count.
  const paused = applyMove(
    running(),
    { state: 'paused', step: 0, event: 'rollout.paused', reason: 'x' },
    at(3),
  );
  const resumed = applyMove(
    paused,
    { state: 'running', step: 0, event: 'rollout.resumed', reason: null },
    at(4),
  );
  assert.deepEqual(resumed.stepCounts, COUNTED);
});
