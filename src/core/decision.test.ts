// What was decided when an experiment completed (issue 36, item 5): set with completing, corrected while
// completed, never a new version, told by the history.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeDecision, MAX_DECISION_NOTE, validateDecision } from './decision.js';
import { ValidationError } from './errors.js';
import { experimentChanged, ROOT_ACTOR } from './events.js';
import { applyChanges, createExperiment, type Experiment } from './experiment.js';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-02T00:00:00.000Z';
const ab = [
  { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
];
const running: Experiment = createExperiment({ slug: 'e', status: 'running', variants: ab }, NOW);
let n = 0;
const src = { actor: ROOT_ACTOR, at: LATER, newId: () => `id-${++n}` };

test('a new experiment has no decision', () => {
  assert.equal(running.decision, null);
});

test('completing with a decision keeps it, with its time; not a new version', () => {
  const done = applyChanges(
    running,
    { status: 'completed', decision: { variant: 'B', note: '  as good, cheaper ' } },
    LATER,
  );
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.decision, { variant: 'B', note: 'as good, cheaper', decidedAt: LATER });
  assert.equal(done.version, running.version);
  const none = applyChanges(running, { status: 'completed', decision: { variant: 'none' } }, LATER);
  assert.deepEqual(none.decision, { variant: 'none', note: '', decidedAt: LATER });
  // Completing without one leaves none.
  assert.equal(applyChanges(running, { status: 'completed' }, LATER).decision, null);
});

test('a completed experiment may correct its decision or remove it; archiving keeps it', () => {
  const done = applyChanges(running, { status: 'completed', decision: { variant: 'B' } }, NOW);
  const fixed = applyChanges(done, { decision: { variant: 'A', note: 'B regressed on latency' } }, LATER);
  assert.deepEqual(fixed.decision, { variant: 'A', note: 'B regressed on latency', decidedAt: LATER });
  assert.equal(applyChanges(done, { status: 'completed', decision: null }, LATER).decision, null);
  assert.deepEqual(applyChanges(done, { status: 'archived' }, LATER).decision, done.decision);
});

test('a decision with any other status is refused, saying it goes with completing', () => {
  const paused = applyChanges(running, { status: 'paused' }, NOW);
  const done = applyChanges(running, { status: 'completed' }, NOW);
  const cases: Array<[Experiment, object]> = [
    [running, { decision: { variant: 'B' } }],
    [running, { status: 'paused', decision: { variant: 'B' } }],
    [paused, { decision: { variant: 'none' } }],
    [done, { status: 'archived', decision: { variant: 'B' } }],
  ];
  for (const [e, changes] of cases) {
    assert.throws(
      () => applyChanges(e, changes, LATER),
      (err: Error) => err instanceof ValidationError && /goes with completing/.test(err.message),
      JSON.stringify(changes),
    );
  }
});

test('the variant must name a variant or be none; the note is a string of at most 2000 characters', () => {
  assert.throws(
    () => applyChanges(running, { status: 'completed', decision: { variant: 'C' } }, LATER),
    /decision\.variant must be one of the variants \(A, B\) or 'none' \(got "C"\)/,
  );
  assert.throws(() => validateDecision({ variant: 7 }, ab, NOW), /one of the variants \(A, B\)/);
  assert.throws(() => validateDecision({}, ab, NOW), /\(got null\)/);
  assert.throws(() => validateDecision('B', ab, NOW), /must be an object/);
  assert.throws(() => validateDecision({ variant: 'B', note: 3 }, ab, NOW), /note must be a string/);
  const long = 'x'.repeat(MAX_DECISION_NOTE + 1);
  assert.throws(() => validateDecision({ variant: 'B', note: long }, ab, NOW), /at most 2000 characters/);
  assert.equal(validateDecision({ variant: 'B', note: long.slice(1) }, ab, NOW).note.length, 2000);
});

test('says what shipped', () => {
  assert.equal(describeDecision({ variant: 'B', note: 'cheaper', decidedAt: NOW }), 'shipped B: cheaper');
  assert.equal(describeDecision({ variant: 'none', note: '', decidedAt: NOW }), 'no change shipped');
});

test('the history: completing tells the decision in its status event; a correction is an update', () => {
  const done = applyChanges(running, { status: 'completed', decision: { variant: 'B', note: 'n' } }, LATER);
  assert.deepEqual(
    experimentChanged(src, running, done).map((e) => [e.type, e.data]),
    [
      [
        'experiment.status_changed',
        { from: 'running', to: 'completed', decision: { variant: 'B', note: 'n', decidedAt: LATER } },
      ],
    ],
  );
  const plain = applyChanges(running, { status: 'completed' }, LATER);
  assert.deepEqual(experimentChanged(src, running, plain)[0]!.data, { from: 'running', to: 'completed' });
  const fixed = applyChanges(done, { decision: { variant: 'none' } }, LATER);
  assert.deepEqual(
    experimentChanged(src, done, fixed).map((e) => [e.type, e.data]),
    [
      [
        'experiment.updated',
        {
          before: { decision: { variant: 'B', note: 'n', decidedAt: LATER } },
          after: { decision: { variant: 'none', note: '', decidedAt: LATER } },
        },
      ],
    ],
  );
});
