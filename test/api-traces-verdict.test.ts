// An experiment fed only through POST /v1/traces reaches the same verdict as the same runs sent with log
// (issue 39): 400 agent runs (B faster, with fewer errors), each sent once as an OTLP trace (a root span
// with the key, two model calls, one tool call) and once as a log with the metrics the trace reads; the
// two analyses agree figure for figure (within 1e-9) and word for word.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { SKIP_BACKEND } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';
import { seededRandom } from './helpers/random.js';

const PRICES = { 'model-a': { input: 3, output: 15 }, 'model-b': { input: 0.5, output: 1.5 } };
const RUNS_PER_VARIANT = 200;
const RUNS_PER_EXPORT = 50;

interface Run {
  variant: 'A' | 'B';
  userId: string;
  latencyMs: number;
  failed: boolean;
  calls: Array<{ model: keyof typeof PRICES; input: number; output: number }>;
  toolFailed: boolean;
}

function makeRuns(): Run[] {
  const random = seededRandom(39);
  const runs: Run[] = [];
  for (const variant of ['A', 'B'] as const) {
    for (let i = 0; i < RUNS_PER_VARIANT; i++) {
      const model = variant === 'A' ? 'model-a' : 'model-b';
      runs.push({
        variant,
        userId: `${variant}-${i}`,
        latencyMs: Math.round((variant === 'A' ? 1000 : 850) + random() * 400),
        failed: random() < (variant === 'A' ? 0.12 : 0.08),
        calls: [
          { model, input: 200 + Math.floor(random() * 300), output: 20 + Math.floor(random() * 80) },
          { model, input: 100 + Math.floor(random() * 100), output: 10 + Math.floor(random() * 40) },
        ],
        toolFailed: random() < 0.2,
      });
    }
  }
  return runs;
}

/** The metrics a run's trace reads, as a log would send them (the cost summed per call, as the reader does). */
function logMetrics(r: Run): Record<string, number> {
  let cost = 0;
  for (const c of r.calls)
    cost += (c.input * PRICES[c.model].input + c.output * PRICES[c.model].output) / 1e6;
  return {
    latency_ms: r.latencyMs,
    error: r.failed ? 1 : 0,
    input_tokens: r.calls[0]!.input + r.calls[1]!.input,
    output_tokens: r.calls[0]!.output + r.calls[1]!.output,
    tool_calls: 1,
    tool_errors: r.toolFailed ? 1 : 0,
    cost_usd: cost,
  };
}

const kv = (key: string, v: string | number) => ({
  key,
  value: typeof v === 'string' ? { stringValue: v } : { intValue: String(v) },
});

/** A run as OTLP JSON spans: the root carries the key; model calls and the tool inside it. */
function runSpans(r: Run, slug: string, at: bigint) {
  const traceId = randomBytes(16).toString('hex');
  const root = randomBytes(8).toString('hex');
  const ns = (ms: number) => String(at + BigInt(ms) * 1_000_000n);
  const child = (name: string, from: number, to: number, attributes: unknown[], failed = false) => ({
    traceId,
    spanId: randomBytes(8).toString('hex'),
    parentSpanId: root,
    name,
    kind: 3,
    startTimeUnixNano: ns(from),
    endTimeUnixNano: ns(to),
    attributes,
    status: { code: failed ? 2 : 0 },
  });
  return [
    {
      traceId,
      spanId: root,
      name: 'invoke_agent',
      kind: 1,
      startTimeUnixNano: ns(0),
      endTimeUnixNano: ns(r.latencyMs),
      attributes: [
        kv('gen_ai.operation.name', 'invoke_agent'),
        kv('agentsplit.experiment', slug),
        kv('agentsplit.variant', r.variant),
        kv('user.id', r.userId),
      ],
      status: { code: r.failed ? 2 : 0 },
    },
    ...r.calls.map((c, i) =>
      child(`chat ${c.model}`, 10 + i * 400, 300 + i * 400, [
        kv('gen_ai.operation.name', 'chat'),
        kv('gen_ai.request.model', c.model),
        kv('gen_ai.usage.input_tokens', c.input),
        kv('gen_ai.usage.output_tokens', c.output),
      ]),
    ),
    child('execute_tool search', 320, 380, [kv('gen_ai.operation.name', 'execute_tool')], r.toolFailed),
  ];
}

/** Every number equal within 1e-9 (relative), every text equal once the slugs are one. */
function assertSame(a: unknown, b: unknown, path: string): void {
  if (typeof a === 'number' && typeof b === 'number') {
    assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)), `${path}: ${a} vs ${b}`);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    assert.equal(a.length, b.length, `${path}: lengths`);
    for (const [i, x] of a.entries()) assertSame(x, b[i], `${path}[${i}]`);
    return;
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${path}: keys`);
    for (const k of Object.keys(a)) {
      assertSame((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
    }
    return;
  }
  assert.deepEqual(a, b, path);
}

describe('traces and log reach the same verdict', { skip: SKIP_BACKEND }, () => {
  const clocked = clockedRuntime('traces-verdict', { traces: { prices: PRICES } });

  test('400 runs through /v1/traces and through log: the same analysis', async () => {
    const api = clocked.runtime.api;
    const metrics = [
      { name: 'latency_ms', direction: 'decrease', role: 'primary' },
      { name: 'error', direction: 'decrease', role: 'guardrail' },
    ];
    const logged = await api.createExperiment({ slug: 'agent-logged', metrics });
    const traced = await api.createExperiment({ slug: 'agent-traced', metrics });
    const runs = makeRuns();
    for (let i = 0; i < runs.length; i += 100) {
      await api.logMany(
        logged.slug,
        runs
          .slice(i, i + 100)
          .map((r) => ({ variantKey: r.variant, userId: r.userId, metrics: logMetrics(r) })),
      );
    }
    const at = BigInt(Date.parse('2026-11-28T00:00:00Z')) * 1_000_000n;
    for (let i = 0; i < runs.length; i += RUNS_PER_EXPORT) {
      const spans = runs.slice(i, i + RUNS_PER_EXPORT).flatMap((r) => runSpans(r, traced.slug, at));
      const res = await api.post('/v1/traces', { resourceSpans: [{ scopeSpans: [{ spans }] }] });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.body, '{}');
    }
    const [a, b] = await Promise.all(
      [logged.slug, traced.slug].map(async (slug) => {
        const res = await api.get(`/experiment/${slug}/analysis`);
        assert.equal(res.statusCode, 200, res.body);
        return JSON.parse(res.body.replaceAll(slug, '<slug>'));
      }),
    );
    const latency = (x: { metrics: Array<{ name: string; variants: Array<{ n: number }> }> }) =>
      x.metrics.find((m) => m.name === 'latency_ms')!.variants.map((v) => v.n);
    assert.deepEqual(latency(b), [RUNS_PER_VARIANT, RUNS_PER_VARIANT]);
    assertSame(b, a, 'analysis');
    assert.match(b.verdict.summary, /^B beats A on latency_ms/);
  });
});
