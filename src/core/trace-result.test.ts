// What a run read from a trace writes (core/trace-result.ts): its result's log id, the values it writes as
// feedback (metrics, then evaluations by score or pass/fail label), and the price table file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ValidationError } from './errors.js';
import { readPriceTable, runLogId, runValues, sameValues } from './trace-result.js';
import type { TraceRun } from './trace-run.js';

test('a run names the same result whatever the reading: a UUID (version 8) of its trace and key', () => {
  const id = runLogId('0af7651916cd43dd8448eb211c80319c', 'a:some-assignment');
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(runLogId('0af7651916cd43dd8448eb211c80319c', 'a:some-assignment'), id);
  assert.notEqual(runLogId('0af7651916cd43dd8448eb211c80319c', 'a:other'), id);
  assert.notEqual(runLogId('1af7651916cd43dd8448eb211c80319c', 'a:some-assignment'), id);
});

const run = (over: Partial<TraceRun>): TraceRun => ({
  traceId: 't',
  key: { assignmentId: 'x' },
  rootSpanId: 's',
  spanCount: 1,
  metrics: { latency_ms: 10, error: 0 },
  models: [],
  evaluations: [],
  input: null,
  output: null,
  spans: [],
  ...over,
});

test('evaluations become values by score, else by a pass/fail label; others are left out', () => {
  const values = runValues(
    run({
      evaluations: [
        { name: 'relevance', value: 0.7, label: 'relevant' },
        { name: 'correct', value: null, label: 'Pass' },
        { name: 'safe', value: null, label: 'fail' },
        { name: 'tone', value: null, label: 'friendly' },
        { name: 'relevance', value: 0.9, label: null },
      ],
    }),
  );
  assert.deepEqual(values, { latency_ms: 10, error: 0, relevance: 0.9, correct: true, safe: false });
  assert.ok(sameValues(values, { ...values }));
  assert.ok(!sameValues(values, { ...values, relevance: 0.8 }));
  assert.ok(!sameValues(values, { latency_ms: 10 }));
});

test('the price table file: version 1, USD, each model with input and output prices', () => {
  assert.deepEqual(
    readPriceTable(
      { version: 1, currency: 'USD', models: { 'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 } } },
      'prices.json',
    ),
    { 'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 } },
  );
  const refused = (json: unknown, reason: RegExp) =>
    assert.throws(
      () => readPriceTable(json, 'prices.json'),
      (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.match(e.message, /^prices\.json: /);
        assert.match(e.message, reason);
        return true;
      },
    );
  refused([], /JSON object/);
  refused({ version: 2, models: {} }, /version must be 1/);
  refused({ version: 1, currency: 'EUR', models: {} }, /currency must be "USD"/);
  refused({ version: 1 }, /models must be an object/);
  refused({ version: 1, models: { m: { input: 1 } } }, /models\.m needs input and output/);
  refused({ version: 1, models: { m: { input: 1, output: -1 } } }, /models\.m needs/);
  refused({ version: 1, models: { m: { input: 1, output: 1, cacheRead: 'x' } } }, /cacheRead/);
});
