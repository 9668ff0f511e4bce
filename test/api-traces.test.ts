// POST /v1/traces (issue 39): the real OpenTelemetry exporters (exporter-trace-otlp-http and -proto 0.223.1,
// sdk-trace-base 2.12.1) send a fake agent's runs to the server; each run becomes one result whose feedback
// metrics are its spans' sums, the same through JSON and protobuf, gzip or not, retried (a proxy answers
// 503 after the server committed) or split over three exports in reverse order. /metrics counts the spans.
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { API_KEY, type Result, SKIP_BACKEND } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';
import { AGENT_CALLS, agentProvider, runAgent } from './helpers/otlp-agent.js';

const PRICES = {
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
};

/** What the fake agent's run must read: its spans' sums (test/helpers/otlp-agent.ts). */
function expectedCost(): number {
  const [a, b] = AGENT_CALLS;
  const gpt4o = ((a!.input - a!.cacheRead) * 2.5 + a!.cacheRead * 1.25 + a!.output * 10) / 1e6;
  const mini = (b!.input * 0.15 + b!.output * 0.6) / 1e6;
  return gpt4o + mini;
}

type Kind = 'json' | 'proto';

function exporterFor(url: string, kind: Kind, compression: 'none' | 'gzip' = 'none'): SpanExporter {
  const Exporter = kind === 'json' ? JsonExporter : ProtoExporter;
  return new Exporter({
    url,
    headers: { 'x-api-key': API_KEY },
    compression: compression as never,
    timeoutMillis: 10_000,
  });
}

/** The spans of one fake-agent run, made in memory (not exported yet). */
async function agentSpans(assignmentId: string, at?: number): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  runAgent(provider, assignmentId, at);
  await provider.forceFlush();
  return memory.getFinishedSpans();
}

/** One export through a real exporter; resolves with its result code (0: success). */
function exportOnce(exporter: SpanExporter, spans: ReadableSpan[]): Promise<number> {
  return new Promise((ok) => exporter.export(spans, (r) => ok(r.code)));
}

describe('POST /v1/traces', { skip: SKIP_BACKEND }, () => {
  const clocked = clockedRuntime('traces', { traces: { prices: PRICES, windowSeconds: 3600 } });
  const url = () => `http://127.0.0.1:${clocked.runtime.api.port}/v1/traces`;

  async function experiment(): Promise<string> {
    return (await clocked.runtime.api.createExperiment()).slug;
  }

  async function resultOf(slug: string, assignmentId: string): Promise<TracedResult> {
    const all = (await clocked.runtime.api.allResults(slug)) as Array<TracedResult>;
    const mine = all.filter((r) => r.assignmentId === assignmentId);
    assert.equal(mine.length, 1, `one result for the run (got ${mine.length})`);
    return mine[0]!;
  }

  async function spanCounts(): Promise<Record<string, number>> {
    const res = await clocked.runtime.api.get('/metrics');
    const counts: Record<string, number> = {};
    for (const m of res.body.matchAll(/^agentsplit_trace_spans_total\{outcome="(\w+)"\} (\d+)$/gm)) {
      counts[m[1]!] = Number(m[2]);
    }
    return counts;
  }

  function assertAgentRun(r: TracedResult, traceId?: string): void {
    const f = r.feedback;
    const [a, b] = AGENT_CALLS;
    assert.equal(f.input_tokens, a!.input + b!.input);
    assert.equal(f.output_tokens, a!.output + b!.output);
    assert.equal(f.cache_read_tokens, a!.cacheRead);
    assert.equal(f.tool_calls, 1);
    assert.equal(f.tool_errors, 1);
    assert.equal(f.error, 0, 'the run itself did not fail');
    assert.equal(f.helpfulness, 1, 'the evaluation event is a feedback metric');
    assert.ok(Math.abs((f.cost_usd as number) - expectedCost()) < 1e-12, `cost ${f.cost_usd}`);
    assert.ok(typeof f.latency_ms === 'number' && f.latency_ms >= 0);
    assert.ok(r.trace, 'the result carries its trace');
    if (traceId !== undefined) assert.equal(r.trace!.traceId, traceId);
    assert.equal(r.trace!.spanCount, 4);
    assert.deepEqual(r.trace!.models, ['gpt-4o', 'gpt-4o-mini']);
    assert.deepEqual(
      r.trace!.spans.map((s) => s.operation),
      ['invoke_agent', 'chat', 'execute_tool', 'chat'],
    );
  }

  for (const kind of ['json', 'proto'] as const) {
    for (const compression of ['none', 'gzip'] as const) {
      test(`a run exported in ${kind}${compression === 'gzip' ? ' with gzip' : ''} is one result with its spans' sums`, async () => {
        const slug = await experiment();
        const { assignmentId, variant } = await clocked.runtime.api.assign(slug, {
          userId: `u-${kind}-${compression}`,
        });
        const provider = agentProvider(exporterFor(url(), kind, compression));
        const traceId = runAgent(provider, assignmentId, Date.now());
        await provider.forceFlush();
        await provider.shutdown();
        const r = await resultOf(slug, assignmentId);
        assert.equal(r.variantKey, variant);
        assertAgentRun(r, traceId);
      });
    }
  }

  test('the same spans in JSON, then in protobuf, read the same: the second export changes nothing', async () => {
    const slug = await experiment();
    const { assignmentId } = await clocked.runtime.api.assign(slug, { userId: 'u-both' });
    const spans = await agentSpans(assignmentId, Date.now());
    const before = await spanCounts();
    assert.equal(await exportOnce(exporterFor(url(), 'json'), spans), ExportResultCode.SUCCESS);
    const first = await resultOf(slug, assignmentId);
    assert.equal(await exportOnce(exporterFor(url(), 'proto'), spans), ExportResultCode.SUCCESS);
    const second = await resultOf(slug, assignmentId);
    assert.deepEqual(second, first);
    const after = await spanCounts();
    assert.equal(after.accepted! - before.accepted!, 4);
    assert.equal(after.repeated! - before.repeated!, 4, 'protobuf decoded to the very same spans');
    assert.equal(after.joined! - before.joined!, 4);
    assertAgentRun(second);
  });

  test('an export the exporter retries (503 after the server committed it) counts once', async () => {
    const slug = await experiment();
    const { assignmentId } = await clocked.runtime.api.assign(slug, { userId: 'u-retry' });
    // A proxy that forwards every export and answers the first one 503 (Retry-After: 0) whatever the
    // server said: the exporter retries an export the server has already committed.
    let seen = 0;
    const target = clocked.runtime.api.port;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const forward = request(
          { host: '127.0.0.1', port: target, method: 'POST', path: '/v1/traces', headers: req.headers },
          (answer) => {
            const body: Buffer[] = [];
            answer.on('data', (c: Buffer) => body.push(c));
            answer.on('end', () => {
              if (seen++ === 0) res.writeHead(503, { 'retry-after': '0' }).end();
              else res.writeHead(answer.statusCode!, answer.headers).end(Buffer.concat(body));
            });
          },
        );
        forward.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
    const proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1/traces`;
    try {
      const before = await spanCounts();
      const code = await exportOnce(
        exporterFor(proxied, 'proto'),
        await agentSpans(assignmentId, Date.now()),
      );
      assert.equal(code, ExportResultCode.SUCCESS);
      assert.equal(seen, 2, 'the exporter sent the export twice');
      const after = await spanCounts();
      assert.equal(after.accepted! - before.accepted!, 4);
      assert.equal(after.repeated! - before.repeated!, 4);
      assert.equal(after.joined! - before.joined!, 4);
      assertAgentRun(await resultOf(slug, assignmentId));
    } finally {
      await new Promise<void>((ok) => proxy.close(() => ok()));
    }
  });

  test('one span per export (a simple span processor: children first, the key last) is one result', async () => {
    const slug = await experiment();
    const { assignmentId } = await clocked.runtime.api.assign(slug, { userId: 'u-simple' });
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporterFor(url(), 'proto'))],
    });
    const before = await spanCounts();
    runAgent(provider, assignmentId, Date.now());
    await provider.forceFlush();
    await provider.shutdown();
    const after = await spanCounts();
    assert.equal(after.accepted! - before.accepted!, 4);
    assert.equal(after.joined! - before.joined!, 4);
    assertAgentRun(await resultOf(slug, assignmentId));
  });

  test('a run split over three exports in reverse order reads as the run sent whole', async () => {
    const slug = await experiment();
    const at = Date.parse('2026-11-28T10:00:00Z');
    const whole = await clocked.runtime.api.assign(slug, { userId: 'u-whole' });
    const split = await clocked.runtime.api.assign(slug, { userId: 'u-split' });
    const exporter = exporterFor(url(), 'json');
    assert.equal(
      await exportOnce(exporter, await agentSpans(whole.assignmentId, at)),
      ExportResultCode.SUCCESS,
    );
    const spans = await agentSpans(split.assignmentId, at);
    const named = (name: string) => spans.filter((s) => s.name === name);
    // The exporter's order is the order spans end: chat, tool, chat, root. Reversed, in three exports.
    const parts = [
      named('invoke_agent support-bot'),
      [...named('chat gpt-4o-mini'), ...named('execute_tool track_order')],
      named('chat gpt-4o'),
    ];
    assert.equal(parts.flat().length, 4);
    for (const part of parts) assert.equal(await exportOnce(exporter, part), ExportResultCode.SUCCESS);
    const a = await resultOf(slug, whole.assignmentId);
    const b = await resultOf(slug, split.assignmentId);
    assert.deepEqual(b.feedback, a.feedback);
    assert.equal(a.feedback.latency_ms, 800);
    const shape = (r: typeof a) => r.trace!.spans.map(({ spanId: _s, parentSpanId: _p, ...rest }) => rest);
    assert.deepEqual(shape(b), shape(a));
    assert.deepEqual(b.trace!.models, a.trace!.models);
    assertAgentRun(b);
  });
});

type TracedResult = Result & { feedback: Record<string, number | boolean>; trace?: Trace };

interface Trace {
  traceId: string;
  rootSpanId: string;
  spanCount: number;
  models: string[];
  input: string | null;
  output: string | null;
  spans: Array<{
    spanId: string;
    parentSpanId: string | null;
    name: string;
    operation: string | null;
    model: string | null;
    startMs: number;
    durationMs: number;
    error: boolean;
  }>;
}
