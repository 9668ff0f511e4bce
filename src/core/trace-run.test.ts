// Reading agent runs from traces (core/trace-run.ts): the join (on the span, an ancestor, or the trace's only
// key), the metrics from the GenAI conventions (current and legacy names, usage counted where deepest), the
// cost (stated, or priced), evaluations and messages; the same spans in any order, or twice, read the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Attributes, groupRuns, priceOf, readRun, type TraceSpan } from './trace-run.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const MS = 1_000_000n;
const T0 = 1_764_000_000_000n * MS;

function span(
  id: string,
  parent: string | null,
  startMs: number,
  endMs: number,
  attributes: Attributes,
  more: Partial<TraceSpan> = {},
): TraceSpan {
  return {
    traceId: TRACE,
    spanId: id.padStart(16, '0'),
    parentSpanId: parent === null ? null : parent.padStart(16, '0'),
    name: String(attributes['gen_ai.operation.name'] ?? 'span'),
    startTimeUnixNano: String(T0 + BigInt(startMs) * MS),
    endTimeUnixNano: String(T0 + BigInt(endMs) * MS),
    attributes,
    events: [],
    status: { code: 0 },
    ...more,
  };
}

/** The fake agent: a root carrying the assignment, two model calls, a tool call that failed. */
function agentRun(): TraceSpan[] {
  return [
    span('a1', null, 0, 2500, {
      'gen_ai.operation.name': 'invoke_agent',
      'agentsplit.assignment_id': 'asg-1',
    }),
    span('c1', 'a1', 10, 900, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 80,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'gen_ai.response.time_to_first_chunk': 0.35,
      'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"Where is my order?"}]}]',
    }),
    span(
      't1',
      'a1',
      900,
      1400,
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'track_order', 'error.type': 'timeout' },
      { status: { code: 2, message: 'timeout' } },
    ),
    span(
      'c2',
      'a1',
      1400,
      2400,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 300,
        'gen_ai.usage.output_tokens': 40,
        'gen_ai.output.messages':
          '[{"role":"assistant","parts":[{"type":"text","content":"It ships today."}]}]',
      },
      {
        events: [
          {
            name: 'gen_ai.evaluation.result',
            timeUnixNano: String(T0),
            attributes: {
              'gen_ai.evaluation.name': 'helpfulness',
              'gen_ai.evaluation.score.value': 1,
              'gen_ai.evaluation.score.label': 'good',
            },
          },
          { name: 'exception', timeUnixNano: String(T0), attributes: {} },
        ],
      },
    ),
  ];
}

function only(spans: TraceSpan[]) {
  const runs = [...groupRuns(spans).values()];
  assert.equal(runs.length, 1);
  return readRun(TRACE, runs[0]!.key, runs[0]!.spans, { messageCap: 10_000 });
}

test("the fake agent's run: latency from its root, tokens summed over model calls, tools, ttft, models", () => {
  const run = only(agentRun());
  assert.deepEqual(run.key, { assignmentId: 'asg-1' });
  assert.equal(run.rootSpanId, '00000000000000a1');
  assert.deepEqual(run.metrics, {
    latency_ms: 2500,
    error: 0,
    input_tokens: 1500,
    output_tokens: 120,
    cache_read_tokens: 1000,
    tool_calls: 1,
    tool_errors: 1,
    ttft_ms: 350,
  });
  assert.deepEqual(run.models, ['gpt-4o-2024-08-06', 'gpt-4o-mini']);
  assert.deepEqual(run.evaluations, [{ name: 'helpfulness', value: 1, label: 'good' }]);
  assert.match(run.input ?? '', /Where is my order/);
  assert.match(run.output ?? '', /It ships today/);
  assert.equal(run.spanCount, 4);
});

test('the same spans in any order, twice, or over three exports read the same', () => {
  const spans = agentRun();
  const once = only(spans);
  assert.deepEqual(only([...spans].reverse()), once);
  assert.deepEqual(only([...spans, ...spans.slice(1, 3)]), once);
  // Before the root arrives, the run is what its spans say so far; with it, the same as above.
  const early = only(spans.slice(1).concat(span('x', 'c1', 20, 30, { 'agentsplit.assignment_id': 'asg-1' })));
  assert.equal(early.key && 'assignmentId' in early.key ? early.key.assignmentId : null, 'asg-1');
});

test('legacy names (prompt_tokens, completion_tokens, cache_creation) and an agent span totalling its calls', () => {
  const spans = [
    span('a1', null, 0, 100, {
      'agentsplit.experiment': 'support-prompt',
      'agentsplit.variant': 'B',
      'user.id': 'u-7',
      // An agent span that totals its model calls: not added to them.
      'gen_ai.usage.prompt_tokens': 700,
      'gen_ai.usage.completion_tokens': 70,
    }),
    span('c1', 'a1', 1, 50, {
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4',
      'gen_ai.usage.prompt_tokens': 500,
      'gen_ai.usage.completion_tokens': '50',
      'gen_ai.usage.cache_creation.input_tokens': 128,
    }),
    span('c2', 'a1', 50, 99, {
      'gen_ai.request.model': 'gpt-4',
      'gen_ai.usage.prompt_tokens': 200,
      'gen_ai.usage.completion_tokens': 20,
    }),
  ];
  const run = only(spans);
  assert.deepEqual(run.key, { experiment: 'support-prompt', variant: 'B', userId: 'u-7' });
  assert.deepEqual(
    [run.metrics.input_tokens, run.metrics.output_tokens, run.metrics.cache_write_tokens],
    [700, 70, 128],
  );
});

test('cost: stated on the spans, else from the price table (a dated release by its name); unpriced: none', () => {
  const prices = {
    'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
    'gpt-4o-mini': { input: 0.15, output: 0.6 },
  };
  const runs = [...groupRuns(agentRun()).values()];
  const priced = readRun(TRACE, runs[0]!.key, runs[0]!.spans, { prices });
  // gpt-4o-2024-08-06 at gpt-4o: 200 fresh × 2.5 + 1000 cached × 1.25 + 80 × 10; gpt-4o-mini: 300 × 0.15 + 40 × 0.6.
  const expected = (200 * 2.5 + 1000 * 1.25 + 80 * 10 + 300 * 0.15 + 40 * 0.6) / 1e6;
  assert.ok(Math.abs(priced.metrics.cost_usd! - expected) < 1e-12, String(priced.metrics.cost_usd));
  assert.equal(priceOf(prices, 'gpt-4o-mini-2024-07-18'), prices['gpt-4o-mini']);
  assert.equal(priceOf({ 'gpt-4o': prices['gpt-4o'] }, 'gpt-4o-mini'), null, 'not a mere prefix');
  assert.equal(
    priceOf({ 'claude-3-5-sonnet': { input: 3, output: 15 } }, 'claude-3-5-sonnet-20241022')?.input,
    3,
  );
  const unpriced = readRun(TRACE, runs[0]!.key, runs[0]!.spans, { prices: { 'gpt-4o': prices['gpt-4o'] } });
  assert.equal(
    unpriced.metrics.cost_usd,
    undefined,
    'a model without a price: no cost rather than a wrong one',
  );
  const stated = agentRun().map((s) =>
    s.spanId.endsWith('c1') || s.spanId.endsWith('c2')
      ? { ...s, attributes: { ...s.attributes, 'gen_ai.usage.cost': 0.01 } }
      : s,
  );
  const r = [...groupRuns(stated).values()][0]!;
  assert.equal(readRun(TRACE, r.key, r.spans, { prices }).metrics.cost_usd, 0.02);
});

test('the join: two assignments in one trace are two runs; spans under neither join the only key or none', () => {
  const spans = [
    span('r', null, 0, 100, {}),
    span('a', 'r', 0, 40, { 'agentsplit.assignment_id': 'asg-A' }),
    span('a1', 'a', 1, 30, { 'gen_ai.usage.input_tokens': 10, 'gen_ai.request.model': 'm' }),
    span('b', 'r', 40, 90, { 'agentsplit.assignment_id': 'asg-B' }, { status: { code: 2 } }),
    span('b1', 'b', 41, 80, { 'gen_ai.usage.input_tokens': 20, 'gen_ai.request.model': 'm' }),
  ];
  const runs = groupRuns(spans);
  assert.deepEqual([...runs.keys()].sort(), ['a:asg-A', 'a:asg-B']);
  const b = readRun(TRACE, runs.get('a:asg-B')!.key, runs.get('a:asg-B')!.spans);
  assert.deepEqual([b.metrics.input_tokens, b.metrics.latency_ms, b.metrics.error], [20, 50, 1]);
  assert.equal(
    runs.get('a:asg-A')!.spans.length,
    2,
    'the root carries neither key, and two keys: it joins none',
  );
  // One key in the trace: spans outside its subtree join it (an id set on a child span).
  const one = groupRuns(spans.filter((s) => !/^0+b1?$/.test(s.spanId)));
  assert.equal(one.get('a:asg-A')!.spans.length, 3);
  assert.equal(groupRuns([span('z', null, 0, 1, {})]).size, 0, 'no key: no run');
});
