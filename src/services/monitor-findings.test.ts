// The monitor's findings (monitor-findings.ts): raised once per change, a pause only for 'pause', nothing
// judged below minimumUnits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createExperiment, type Experiment } from '../core/experiment.js';
import type { Analysis } from '../stats/index.js';
import { findings, judgeable, readState } from './monitor-findings.js';

const NOW = '2025-01-01T00:00:00.000Z';
let ids = 0;
const src = { actor: { kind: 'monitor' as const }, at: NOW, newId: () => `id-${++ids}` };

function experiment(fields: Partial<Experiment> = {}): Experiment {
  const e = createExperiment(
    {
      slug: 'guarded',
      status: 'running',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
      metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 }],
    },
    NOW,
  );
  return { ...e, ...fields };
}

const effect = (estimate: number, lo: number, hi: number) => ({
  estimate,
  ci: [lo, hi],
  stdError: 0.01,
  pValue: 0.001,
});

/** The parts of a sequential analysis the monitor reads: B's cost guardrail in `status`, n per variant. */
function analysis(
  status: 'failed' | 'passed',
  n: number,
  mismatch = false,
  verdict = 'no-winner-yet',
): Analysis {
  const guardrail = {
    status,
    threshold: 0.05,
    bound: status === 'failed' ? 0.38 : 0.02,
    absolute: effect(0.4, 0.3, 0.5),
    relative: status === 'failed' ? effect(0.3, 0.22, 0.38) : effect(0, -0.02, 0.02),
  };
  return {
    control: 'A',
    method: 'sequential',
    srm: { chiSquare: 1, pValue: mismatch ? 0.0001 : 0.5, mismatch, unit: 'call', counts: { A: n, B: n } },
    verdict: { status: verdict, summary: `Verdict ${verdict}.` },
    metrics: [
      {
        name: 'cost_usd',
        kind: 'mean',
        variants: [
          { key: 'A', n },
          { key: 'B', n, guardrail },
        ],
      },
    ],
  } as unknown as Analysis;
}

describe('monitor findings', () => {
  it('judges only once every variant has minimumUnits on every guardrail', () => {
    const e = experiment({ minimumUnits: 50 });
    assert.equal(judgeable(e, analysis('failed', 49)), false);
    assert.equal(judgeable(e, analysis('failed', 50)), true);
    assert.equal(
      judgeable(
        { ...e, metrics: [...e.metrics, { name: 'latency', direction: 'decrease', role: 'guardrail' }] },
        analysis('failed', 50),
      ),
      false,
    );
  });

  it('a failure is raised once, with a pause for "pause" only, and again after it stopped failing', () => {
    const paused = findings(
      experiment({ guardrailAction: 'pause' }),
      analysis('failed', 200),
      undefined,
      src,
    );
    assert.deepEqual(
      paused.events.map((e) => e.type),
      ['guardrail.failed'],
    );
    assert.equal(paused.events[0]!.data.metric, 'cost_usd');
    assert.match(
      String(paused.events[0]!.data.summary),
      /^B fails the cost_usd guardrail: cost_usd is 30% higher/,
    );
    assert.match(paused.pause!, /^cost_usd guardrail failed: B fails the cost_usd guardrail/);
    const notify = findings(experiment(), analysis('failed', 200), undefined, src);
    assert.equal(notify.pause, undefined);
    assert.equal(notify.events.length, 1);

    const again = findings(experiment(), analysis('failed', 300), readState({ ...notify.state }), src);
    assert.deepEqual(again.events, [], 'not raised every round');
    const passed = findings(experiment(), analysis('passed', 400), again.state, src);
    assert.deepEqual(passed.state.failed, []);
    const back = findings(experiment(), analysis('failed', 500), passed.state, src);
    assert.deepEqual(
      back.events.map((e) => e.type),
      ['guardrail.failed'],
    );
  });

  it('pauses once per failure: not again after a person resumes it, but when the action turns to pause', () => {
    const first = findings(experiment({ guardrailAction: 'pause' }), analysis('failed', 200), undefined, src);
    assert.ok(first.pause);
    const resumed = findings(
      experiment({ guardrailAction: 'pause' }),
      analysis('failed', 300),
      first.state,
      src,
    );
    assert.equal(resumed.pause, undefined, 'a resumed experiment is not paused for the same failure');
    assert.deepEqual(resumed.events, []);

    const notified = findings(experiment(), analysis('failed', 200), undefined, src);
    assert.deepEqual(notified.state.paused, []);
    const switched = findings(
      experiment({ guardrailAction: 'pause' }),
      analysis('failed', 300),
      notified.state,
      src,
    );
    assert.match(switched.pause!, /^cost_usd guardrail failed: B fails/);
    assert.deepEqual(switched.events, [], 'the failure itself was raised already');

    const cleared = findings(
      experiment({ guardrailAction: 'pause' }),
      analysis('passed', 400),
      resumed.state,
      src,
    );
    assert.deepEqual(cleared.state.paused, []);
    const again = findings(
      experiment({ guardrailAction: 'pause' }),
      analysis('failed', 500),
      cleared.state,
      src,
    );
    assert.ok(again.pause, 'a failure that stopped and came back pauses again');
  });

  it('srm.detected once per mismatch; verdict.changed when the status changes between rounds', () => {
    const first = findings(
      experiment(),
      analysis('passed', 200, true, 'sample-ratio-mismatch'),
      undefined,
      src,
    );
    assert.deepEqual(
      first.events.map((e) => e.type),
      ['srm.detected'],
      'no verdict change on a first round',
    );
    assert.deepEqual(
      { unit: first.events[0]!.data.unit, counts: first.events[0]!.data.counts },
      { unit: 'call', counts: { A: 200, B: 200 } },
      'the counts say their unit',
    );
    const same = findings(
      experiment(),
      analysis('passed', 210, true, 'sample-ratio-mismatch'),
      first.state,
      src,
    );
    assert.deepEqual(same.events, []);
    const fixed = findings(experiment(), analysis('passed', 220, false, 'no-winner-yet'), same.state, src);
    assert.deepEqual(
      fixed.events.map((e) => [e.type, e.data.from, e.data.to]),
      [['verdict.changed', 'sample-ratio-mismatch', 'no-winner-yet']],
    );
    assert.ok(fixed.events.every((e) => e.actor.kind === 'monitor' && e.experiment === 'guarded'));
  });
});
