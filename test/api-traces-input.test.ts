// POST /v1/traces with hand-written OTLP (issue 39): legacy attribute names and the experiment/variant/user
// key; malformed input (bad ids, logs sent to the traces path, 10 MB of attributes, broken JSON, protobuf and
// gzip, other media types and encodings) answered 4xx with a reason or 200 with partialSuccess, never 5xx;
// keys and scopes; traces without a key counted and dropped after the window.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { API_KEY, type Result, SKIP_BACKEND } from './helpers/app.js';
import { clockedRuntime } from './helpers/clocked.js';

interface Answer {
  status: number;
  type: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json(): Record<string, unknown>;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The legacy-names fixture with fresh trace ids and `assignmentId` in place of its placeholder. */
function legacyExport(assignmentId: string): Record<string, unknown> {
  const text = readFileSync(new URL('./fixtures/otlp/legacy-names.json', import.meta.url), 'utf8');
  const traceId = hex(16);
  return JSON.parse(
    text.replaceAll('asg-legacy', assignmentId).replace(/5b8efff798038103d269b633813fc60c/gi, traceId),
  );
}

type Attr = [string, string | number | boolean];
const attrs = (list: Attr[]) =>
  list.map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : { intValue: String(v) },
  }));

interface SpanSpec {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  attributes?: Attr[];
  ms?: number;
  error?: boolean;
}

function span(s: SpanSpec) {
  const start = 1764000000000000000n;
  return {
    traceId: s.traceId,
    spanId: s.spanId ?? hex(8),
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name ?? 'agent',
    kind: 1,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + BigInt((s.ms ?? 100) * 1e6)),
    attributes: attrs(s.attributes ?? []),
    status: { code: s.error ? 2 : 0 },
  };
}

function exportOf(spans: unknown[], resource: Attr[] = []) {
  return { resourceSpans: [{ resource: { attributes: attrs(resource) }, scopeSpans: [{ spans }] }] };
}

describe('POST /v1/traces: what comes in', { skip: SKIP_BACKEND }, () => {
  const clocked = clockedRuntime('traces-input', { traces: { windowSeconds: 600 } });
  const api = () => clocked.runtime.api;

  function post(body: Buffer | string, headers: Record<string, string>, key: string | null = API_KEY) {
    return new Promise<Answer>((ok, fail) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: api().port,
          method: 'POST',
          path: '/v1/traces',
          headers: { ...(key === null ? {} : { 'x-api-key': key }), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            ok({
              status: res.statusCode!,
              type: String(res.headers['content-type']),
              headers: res.headers,
              body,
              json: () => JSON.parse(body.toString('utf8')),
            });
          });
        },
      );
      req.on('error', fail);
      // Chunked, as the exporters send it (no Content-Length).
      req.write(body);
      req.end();
    });
  }
  const postJson = (body: unknown, key?: string | null, headers: Record<string, string> = {}) =>
    post(JSON.stringify(body), { 'content-type': 'application/json', ...headers }, key);

  async function resultsOf(slug: string): Promise<Array<Result & { feedback: Record<string, unknown> }>> {
    return (await api().allResults(slug)) as Array<Result & { feedback: Record<string, unknown> }>;
  }

  async function spanCounts(): Promise<Record<string, number>> {
    const res = await api().get('/metrics');
    const counts: Record<string, number> = {};
    for (const m of res.body.matchAll(/^agentsplit_trace_spans_total\{outcome="(\w+)"\} (\d+)$/gm)) {
      counts[m[1]!] = Number(m[2]);
    }
    return counts;
  }

  /** A 4xx in the JSON encoding: this API's `error`, and google.rpc.Status's code and message. */
  function assertJsonError(a: Answer, status: number, reason: RegExp): void {
    assert.equal(a.status, status, a.body.toString());
    const body = a.json();
    assert.match(String(body.error), reason);
    if (body.code !== undefined) assert.equal(body.message, body.error);
  }

  test('legacy names (prompt_tokens, completion_tokens, gen_ai.system, stated cost) make the result', async () => {
    const { slug } = await api().createExperiment();
    const { assignmentId } = await api().assign(slug, { userId: 'legacy' });
    const a = await postJson(legacyExport(assignmentId));
    assert.equal(a.status, 200, a.body.toString());
    assert.deepEqual(a.json(), {});
    const [r] = await resultsOf(slug);
    assert.deepEqual(r!.feedback, {
      latency_ms: 1500,
      error: 0,
      input_tokens: 812,
      output_tokens: 64,
      cost_usd: 0.0282,
      correctness: 0.5,
    });
  });

  test('experiment, variant and user.id on the resource join a trace without an assignment id', async () => {
    const { slug } = await api().createExperiment();
    const traceId = hex(16);
    const root = hex(8);
    const body = exportOf(
      [
        span({ traceId, spanId: root, ms: 250, error: true }),
        span({
          traceId,
          parentSpanId: root,
          name: 'chat',
          attributes: [
            ['gen_ai.operation.name', 'chat'],
            ['gen_ai.request.model', 'claude-sonnet-4'],
            ['gen_ai.usage.input_tokens', 40],
            ['gen_ai.usage.output_tokens', 7],
          ],
        }),
      ],
      [
        ['agentsplit.experiment', slug],
        ['agentsplit.variant', 'B'],
        ['user.id', 'ada'],
      ],
    );
    const a = await postJson(body);
    assert.equal(a.status, 200, a.body.toString());
    const [r] = await resultsOf(slug);
    assert.equal(r!.variantKey, 'B');
    assert.equal(r!.userId, 'ada');
    assert.deepEqual(r!.feedback, { latency_ms: 250, error: 1, input_tokens: 40, output_tokens: 7 });
  });

  test('bad ids: those spans rejected with the reason (partialSuccess), the good one used', async () => {
    const { slug } = await api().createExperiment();
    const { assignmentId } = await api().assign(slug, { userId: 'ids' });
    const traceId = hex(16);
    const body = exportOf([
      span({ traceId, attributes: [['agentsplit.assignment_id', assignmentId]] }),
      span({ traceId: 'xyz' }),
      span({ traceId, spanId: '00112233' }),
    ]);
    const a = await postJson(body);
    assert.equal(a.status, 200);
    const partial = a.json().partialSuccess as { rejectedSpans: string; errorMessage: string };
    assert.equal(partial.rejectedSpans, '2');
    assert.match(partial.errorMessage, /traceId/);
    assert.match(partial.errorMessage, /spanId/);
    assert.equal((await resultsOf(slug)).length, 1);
  });

  test('malformed bodies are 4xx with a reason, never 5xx', async () => {
    const logs = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'hi' } }] }] }] };
    assertJsonError(await postJson(logs), 400, /resourceLogs.*\/v1\/logs/);
    assertJsonError(await postJson([1, 2]), 400, /ExportTraceServiceRequest/);
    assertJsonError(
      await post('{"resourceSpans": [', { 'content-type': 'application/json' }),
      400,
      /not valid JSON/,
    );
    assertJsonError(await post('x', { 'content-type': 'text/plain' }), 415, /application\/x-protobuf/);
    assertJsonError(
      await post('{}', { 'content-type': 'application/json', 'content-encoding': 'br' }),
      415,
      /Content-Encoding 'br'/,
    );
    assertJsonError(
      await post(Buffer.from('not gzip at all'), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      }),
      400,
      /gzip/,
    );
    // 10 MB of attributes: past the 8 MiB limit as sent, and once inflated.
    const big = exportOf([span({ traceId: hex(16), attributes: [['blob', 'x'.repeat(10 * 1024 * 1024)]] })]);
    const text = JSON.stringify(big);
    assertJsonError(await post(text, { 'content-type': 'application/json' }), 413, /larger than the limit/);
    const zipped = gzipSync(text);
    assert.ok(zipped.length < 100_000, 'a small body on the wire');
    assertJsonError(
      await post(zipped, { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
      413,
      /larger than the limit of 8388608 bytes/,
    );
    // Protobuf: garbage is a 400 whose body is google.rpc.Status in protobuf.
    const status = new protobuf.Type('Status')
      .add(new protobuf.Field('code', 1, 'int32'))
      .add(new protobuf.Field('message', 2, 'string'));
    new protobuf.Root().define('google.rpc').add(status);
    const garbage = await post(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), {
      'content-type': 'application/x-protobuf',
    });
    assert.equal(garbage.status, 400);
    assert.equal(garbage.type, 'application/x-protobuf');
    const decoded = status.toObject(status.decode(garbage.body)) as { code: number; message: string };
    assert.equal(decoded.code, 3);
    assert.match(decoded.message, /not an OTLP ExportTraceServiceRequest/);
    // Empty exports succeed (the spec: an empty request is a success).
    const empty = await post(Buffer.alloc(0), { 'content-type': 'application/x-protobuf' });
    assert.equal(empty.status, 200);
    assert.equal(empty.body.length, 0);
    assert.deepEqual((await postJson({})).json(), {});
  });

  test('a value past 256 KiB is cut from its span, which is kept; long messages stay off the result', async () => {
    const { slug } = await api().createExperiment();
    const { assignmentId } = await api().assign(slug, { userId: 'long' });
    const traceId = hex(16);
    const root = hex(8);
    const a = await postJson(
      exportOf([
        span({ traceId, spanId: root, attributes: [['agentsplit.assignment_id', assignmentId]] }),
        span({
          traceId,
          parentSpanId: root,
          name: 'chat',
          attributes: [
            ['gen_ai.operation.name', 'chat'],
            ['gen_ai.input.messages', JSON.stringify([{ role: 'user', content: 'y'.repeat(300 * 1024) }])],
            ['gen_ai.usage.input_tokens', 9],
          ],
        }),
      ]),
    );
    assert.equal(a.status, 200, a.body.toString());
    const [r] = await resultsOf(slug);
    assert.equal(r!.feedback.input_tokens, 9);
    assert.equal(r!.input, null);
  });

  test('keys: none is 401, Bearer works, read scope is 403, a key for other experiments joins nothing', async () => {
    const { slug } = await api().createExperiment();
    const { assignmentId } = await api().assign(slug, { userId: 'keys' });
    const body = () =>
      exportOf([span({ traceId: hex(16), attributes: [['agentsplit.assignment_id', assignmentId]] })]);
    const none = await postJson(body(), null);
    assert.equal(none.status, 401);
    assert.deepEqual(none.json(), { error: 'Unauthorized' });
    const read = await api().post('/keys', { name: 'reader', scopes: ['read'] });
    assert.equal((await postJson(body(), read.json().key)).status, 403);
    const other = await api().createExperiment();
    const narrow = await api().post('/keys', { name: 'narrow', scopes: ['log'], experiments: [other.slug] });
    const refused = await postJson(body(), narrow.json().key);
    assert.equal(refused.status, 200);
    const partial = refused.json().partialSuccess as { rejectedSpans: string; errorMessage: string };
    assert.equal(partial.rejectedSpans, '0');
    assert.match(partial.errorMessage, new RegExp(`may not log to experiment '${slug}'`));
    assert.equal((await resultsOf(slug)).length, 0);
    const bearer = await postJson(body(), null, { authorization: `Bearer ${API_KEY}` });
    assert.equal(bearer.status, 200);
    assert.equal((await resultsOf(slug)).length, 1);
  });

  test("over the key's rate limit: 429 with Retry-After, which the exporters honour", async () => {
    const slow = await api().post('/keys', { name: 'slow', scopes: ['log'], rateLimitPerSecond: 1 });
    assert.equal(slow.statusCode, 201, slow.body);
    const answers = await Promise.all([1, 2, 3].map(() => postJson({}, slow.json().key)));
    const limited = answers.filter((a) => a.status === 429);
    assert.ok(limited.length >= 1, answers.map((a) => a.status).join(','));
    for (const a of limited) {
      assert.ok(Number(a.headers['retry-after']) >= 1, `Retry-After: ${a.headers['retry-after']}`);
      assert.match(String(a.json().error), /rate limit/);
    }
  });

  test('a trace without a key is counted, warned about, and dropped after the window', async () => {
    const before = await spanCounts();
    const traceId = hex(16);
    const a = await postJson(exportOf([span({ traceId }), span({ traceId })]));
    assert.equal(a.status, 200);
    const partial = a.json().partialSuccess as { rejectedSpans: string; errorMessage: string };
    assert.equal(partial.rejectedSpans, '0');
    assert.match(partial.errorMessage, /2 spans of 1 traces carry no agentsplit.assignment_id/);
    // A key arriving within the window joins the trace's earlier spans.
    const { slug } = await api().createExperiment();
    const { assignmentId } = await api().assign(slug, { userId: 'late-key' });
    const keyed = hex(16);
    await postJson(exportOf([span({ traceId: keyed, name: 'child', parentSpanId: 'aaaaaaaaaaaaaaaa' })]));
    clocked.advance(5);
    await postJson(
      exportOf([
        span({
          traceId: keyed,
          spanId: 'aaaaaaaaaaaaaaaa',
          attributes: [['agentsplit.assignment_id', assignmentId]],
        }),
      ]),
    );
    const [r] = await resultsOf(slug);
    assert.ok(r, 'the run became a result once its key came');
    clocked.advance(11);
    const swept = await clocked.runtime.traces.sweep();
    assert.ok(swept >= 2, `swept ${swept} traces`);
    const after = await spanCounts();
    // The 2 keyless spans and the span the narrow key could not join (the test before), not the joined ones.
    assert.equal(after.ignored! - before.ignored!, 3);
    assert.equal(after.joined! - before.joined!, 2);
    // After the window its run no longer changes: a late span is warned about.
    const late = await postJson(
      exportOf([span({ traceId: keyed, name: 'late', parentSpanId: 'aaaaaaaaaaaaaaaa', ms: 5 })]),
    );
    assert.match(
      String((late.json().partialSuccess as { errorMessage: string }).errorMessage),
      /after its window closed/,
    );
  });
});
