// OTLP exports from the real exporters (issue 39): @opentelemetry/exporter-trace-otlp-http (JSON) and -proto
// (protobuf) 0.223.1 with sdk-trace-base 2.12.1, with and without gzip, sent to a bare node:http sink; both
// encodings read into the same spans (src/http/otlp-protobuf.ts, core/otlp-json.ts), and the fake agent's
// run reads as the sums of its spans. Our protobuf answers are read back by the exporter itself.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ValidationError } from '../src/core/errors.js';
import { decodeTraceExport } from '../src/core/otlp-json.js';
import { groupRuns, readRun, type TraceSpan } from '../src/core/trace-run.js';
import { decodeTraceRequest, encodeStatus, encodeTraceResponse } from '../src/http/otlp-protobuf.js';
import { AGENT_CALLS, agentProvider, runAgent } from './helpers/otlp-agent.js';

interface Sent {
  contentType: string;
  body: Buffer;
}

/** A sink answering every export with `answer` (status, body); records what came. */
async function sink(answer: (contentType: string) => { status: number; body: Uint8Array | string }) {
  const sent: Sent[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const contentType = String(req.headers['content-type']);
      sent.push({ contentType, body: req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw });
      const a = answer(contentType);
      res.writeHead(a.status, { 'content-type': contentType });
      res.end(a.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return { url, sent, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

const ok = (contentType: string) => ({
  status: 200,
  body: contentType === 'application/x-protobuf' ? encodeTraceResponse() : '{}',
});

function spansOf(s: Sent): TraceSpan[] {
  const body =
    s.contentType === 'application/x-protobuf'
      ? decodeTraceRequest(s.body)
      : JSON.parse(s.body.toString('utf8'));
  const { spans, rejected } = decodeTraceExport(body);
  assert.equal(rejected.count, 0, rejected.reasons.join('; '));
  return spans;
}

async function export1(kind: 'json' | 'proto', compression: 'none' | 'gzip') {
  const to = await sink(ok);
  const Exporter = kind === 'json' ? JsonExporter : ProtoExporter;
  const provider = agentProvider(
    new Exporter({ url: to.url, compression: compression as never, timeoutMillis: 5000 }),
  );
  const traceId = runAgent(provider, 'asg-1');
  await provider.forceFlush();
  await provider.shutdown();
  await to.close();
  assert.equal(to.sent.length, 1);
  return { traceId, spans: spansOf(to.sent[0]!) };
}

/** A span without what differs between runs of the agent (ids and times), to compare two exports. */
const shape = (s: TraceSpan) => ({
  name: s.name,
  attributes: s.attributes,
  events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
  status: s.status,
  root: s.parentSpanId === null,
});

test('JSON and protobuf, with and without gzip, read into the same spans; the run is the sums of its spans', async () => {
  const exports = {
    json: await export1('json', 'none'),
    jsonGzip: await export1('json', 'gzip'),
    proto: await export1('proto', 'none'),
    protoGzip: await export1('proto', 'gzip'),
  };
  const reference = exports.json.spans.map(shape);
  for (const [name, e] of Object.entries(exports)) {
    assert.equal(e.spans.length, 4, name);
    assert.ok(
      e.spans.every((s) => s.traceId === e.traceId),
      `${name}: hex ids as the SDK has them`,
    );
    assert.deepEqual(e.spans.map(shape), reference, name);
    const [run, ...others] = [...groupRuns(e.spans).values()];
    assert.equal(others.length, 0);
    const r = readRun(e.traceId, run!.key, run!.spans);
    const sum = (k: 'input' | 'output' | 'cacheRead') => AGENT_CALLS.reduce((s, c) => s + c[k], 0);
    assert.deepEqual(
      [
        r.metrics.input_tokens,
        r.metrics.output_tokens,
        r.metrics.cache_read_tokens,
        r.metrics.tool_calls,
        r.metrics.tool_errors,
        r.metrics.error,
      ],
      [sum('input'), sum('output'), sum('cacheRead'), 1, 1, 0],
      name,
    );
    const root = e.spans.find((s) => s.parentSpanId === null)!;
    assert.equal(
      r.metrics.latency_ms,
      Number(BigInt(root.endTimeUnixNano) - BigInt(root.startTimeUnixNano)) / 1e6,
    );
    assert.deepEqual(
      [...r.models].sort(),
      ['gpt-4o', 'gpt-4o-mini'],
      'both models, in start order within the JSON times precision',
    );
    assert.deepEqual(r.evaluations, [{ name: 'helpfulness', value: 1, label: null }]);
  }
});

test('the protobuf exporter reads our answers: success, partial success, and an error status', async () => {
  for (const [status, body, expected] of [
    [200, encodeTraceResponse(), 0],
    [
      200,
      encodeTraceResponse({ rejectedSpans: 2, errorMessage: '2 spans: traceId must be 32 hex digits' }),
      0,
    ],
    [400, encodeStatus(3, 'body is not an OTLP ExportTraceServiceRequest'), 1],
  ] as const) {
    const to = await sink(() => ({ status, body }));
    const exporter = new ProtoExporter({ url: to.url, timeoutMillis: 5000 });
    const provider = agentProvider(exporter);
    runAgent(provider, 'asg-2');
    const result = await new Promise<{ code: number }>((done) => {
      // The exporter's own verdict on our answer: 0 success, 1 failed.
      const original = exporter.export.bind(exporter);
      exporter.export = (spans, cb) =>
        original(spans, (r) => {
          done(r);
          cb(r);
        });
      void provider.forceFlush();
    });
    await provider.shutdown();
    await to.close();
    assert.equal(result.code, expected, `${status}`);
  }
});

test('bytes that are no trace request are a 400 with the reason', () => {
  assert.throws(
    () => decodeTraceRequest(Buffer.from('{"resourceSpans": []}')),
    (e: unknown) =>
      e instanceof ValidationError && /not an OTLP ExportTraceServiceRequest in protobuf/.test(e.message),
  );
  assert.deepEqual(decodeTraceRequest(new Uint8Array(0)), {});
});
