// OTLP JSON trace exports read into spans (core/otlp-json.ts): hand-written fixtures for legacy attribute
// names and the mapping's forms (upper-case hex, integers as strings or numbers, arrays and kvlists, enum
// names), and malformed input: bad ids and times rejected span by span with the reason, a logs export sent
// to the traces path refused whole, oversized values cut from a span that is kept.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ValidationError } from './errors.js';
import { decodeTraceExport, MAX_VALUE_BYTES } from './otlp-json.js';
import { groupRuns, readRun } from './trace-run.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/otlp/${name}`, import.meta.url), 'utf8'));

test('legacy names through the JSON mapping: ids lower-cased, integers read, the run summed', () => {
  const { spans, rejected } = decodeTraceExport(fixture('legacy-names.json'));
  assert.equal(rejected.count, 0);
  assert.deepEqual(
    spans.map((s) => [s.traceId, s.spanId, s.parentSpanId, s.status.code]),
    [
      ['5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b174', null, 1],
      ['5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b175', 'eee19b7ec3c1b174', 2],
    ],
  );
  assert.deepEqual(spans[0]!.attributes.tags, ['a', 2]);
  assert.deepEqual(spans[0]!.attributes.meta, { k: true });
  assert.equal(spans[0]!.attributes['service.name'], 'support-agent', 'resource attributes on every span');
  assert.equal(spans[1]!.startTimeUnixNano, '1764000000100000000');
  const [run] = [...groupRuns(spans).values()];
  const r = readRun(spans[0]!.traceId, run!.key, run!.spans);
  assert.deepEqual(r.metrics, {
    latency_ms: 1500,
    error: 0,
    input_tokens: 812,
    output_tokens: 64,
    cost_usd: 0.0282,
  });
  assert.deepEqual(r.evaluations, [{ name: 'correctness', value: 0.5, label: null }]);
  assert.deepEqual(r.models, ['gpt-4']);
});

test('malformed spans are rejected one by one, with the reason; the others are read', () => {
  const good = fixture('legacy-names.json').resourceSpans[0].scopeSpans[0].spans[0];
  const bad = (over: Record<string, unknown>) => ({ ...good, ...over });
  const { spans, rejected } = decodeTraceExport({
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              good,
              bad({ traceId: 'xyz' }),
              bad({ spanId: '0000000000000000' }),
              bad({ parentSpanId: 'abc' }),
              bad({ startTimeUnixNano: '-5' }),
              bad({ endTimeUnixNano: '1' }),
              'not a span',
            ],
          },
        ],
      },
    ],
  });
  assert.equal(spans.length, 1);
  assert.equal(rejected.count, 6);
  assert.deepEqual(rejected.reasons, [
    'traceId must be 32 hex digits, not all zero',
    'spanId must be 16 hex digits, not all zero',
    'parentSpanId must be 16 hex digits, not all zero',
    'startTimeUnixNano must be nanoseconds since the epoch',
    'the span ends before it starts',
  ]);
});

test('a logs export sent to the traces path, or a body that is no export, is refused whole', () => {
  assert.throws(
    () => decodeTraceExport({ resourceLogs: [] }),
    (e: unknown) => e instanceof ValidationError && /resourceLogs export \(for \/v1\/logs\)/.test(e.message),
  );
  assert.throws(() => decodeTraceExport([]), ValidationError);
  assert.throws(() => decodeTraceExport({ resourceSpans: {} }), /resourceSpans must be an array/);
  assert.deepEqual(
    decodeTraceExport({}),
    { spans: [], rejected: { count: 0, reasons: [] } },
    'an empty export',
  );
});

test('10 MB of attributes: values over the cap are cut, the span is kept', () => {
  const good = fixture('legacy-names.json').resourceSpans[0].scopeSpans[0].spans[0];
  const big = 'x'.repeat(MAX_VALUE_BYTES + 1);
  const many = Array.from({ length: 40 }, (_, i) => ({ key: `big.${i}`, value: { stringValue: big } }));
  const { spans, rejected } = decodeTraceExport({
    resourceSpans: [{ scopeSpans: [{ spans: [{ ...good, attributes: [...good.attributes, ...many] }] }] }],
  });
  assert.equal(rejected.count, 0);
  assert.equal(spans[0]!.attributes['big.0'], undefined);
  assert.equal(spans[0]!.attributes['agentsplit.assignment_id'], 'asg-legacy');
});
