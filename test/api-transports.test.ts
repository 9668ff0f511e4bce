// The two transports answer alike: every request below is sent over a real socket (where the fast
// transport sees assign, log and logs first) and through app.inject (Fastify's router only), and the
// two answers are compared.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  API_KEY,
  assertAssignmentId,
  assertUuidV7,
  makeTempDir,
  nestedObject,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

interface Answer {
  status: number;
  contentType: string | undefined;
  body: Record<string, unknown>;
}

interface Case {
  name: string;
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string | undefined>;
  /** Send the body chunked (no content-length). */
  chunked?: boolean;
}

const BODY_LIMIT = 4096;

describe('the fast transport answers as the Fastify routes do', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let base: URL;
  let running: string;
  let draft: string;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'fast-path', { bodyLimit: BODY_LIMIT });
    base = new URL(`http://127.0.0.1:${runtime.api.port}`);
    running = uniqueSlug('fast');
    draft = uniqueSlug('draft');
    const variants = [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
    ];
    for (const [slug, status] of [
      [running, 'running'],
      [draft, 'draft'],
    ]) {
      const res = await runtime.api.call({
        method: 'POST',
        url: '/experiments',
        body: { slug, status, variants },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  function overSocket(c: Case): Promise<Answer> {
    const body = Buffer.from(c.body ?? '');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.headers ?? {})) if (v !== undefined) headers[k] = v;
    if (!c.chunked) headers['content-length'] = String(body.length);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(c.path ?? `/experiment/${running}/assign`, base),
        { method: c.method ?? 'POST', headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              contentType: res.headers['content-type'],
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            }),
          );
        },
      );
      req.on('error', reject);
      if (c.chunked) {
        // Two writes with no content-length: Node sends Transfer-Encoding: chunked.
        req.write(body.subarray(0, 1));
        req.end(body.subarray(1));
      } else req.end(body);
    });
  }

  async function throughFastify(c: Case): Promise<Answer> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.headers ?? {})) if (v !== undefined) headers[k] = v;
    const res = await runtime.app.inject({
      method: (c.method ?? 'POST') as 'POST',
      url: c.path ?? `/experiment/${running}/assign`,
      headers,
      payload: c.body ?? '',
    });
    return { status: res.statusCode, contentType: res.headers['content-type'] as string, body: res.json() };
  }

  test('a result logged over the socket is committed when it is acknowledged', async () => {
    const res = await overSocket({
      name: '',
      path: `/experiment/${running}/log`,
      body: JSON.stringify({ variantKey: 'B', userId: 'committed-user', metrics: { rating: 4 } }),
      headers: json,
    });
    assert.equal(res.status, 200);
    const rows = await runtime.rows<{ log_id: string; variant_key: string }>(
      sql`SELECT log_id, variant_key FROM results WHERE user_id = 'committed-user'`,
    );
    assert.deepEqual(rows, [{ log_id: res.body.logId, variant_key: 'B' }]);
  });

  const json = { 'content-type': 'application/json', 'x-api-key': API_KEY };
  const ok = JSON.stringify({ userId: 'user-1', context: { plan: 'pro' } });
  const cases = (): Case[] => [
    { name: 'a plain assign', body: ok, headers: json },
    {
      name: 'with a charset',
      body: ok,
      headers: { ...json, 'content-type': 'application/json; charset=utf-8' },
    },
    {
      name: 'with an upper-case media type',
      body: ok,
      headers: { ...json, 'content-type': 'Application/JSON' },
    },
    { name: 'with a query string', path: `/experiment/${running}/assign?x=1`, body: ok, headers: json },
    { name: 'without context', body: '{"userId":"u"}', headers: json },
    {
      name: 'a percent-encoded slug',
      path: `/experiment/${encodeURIComponent(running).replace(/^f/, '%66')}/assign`,
      body: ok,
      headers: json,
    },
    { name: 'a chunked body', body: ok, headers: json, chunked: true },
    { name: 'invalid JSON', body: '{"userId":', headers: json },
    { name: 'an empty body', body: '', headers: json },
    { name: 'an empty object', body: '{}', headers: json },
    { name: 'a numeric userId', body: '{"userId":5}', headers: json },
    { name: 'an empty userId', body: '{"userId":""}', headers: json },
    { name: 'an array', body: '[]', headers: json },
    { name: 'null', body: 'null', headers: json },
    { name: 'context that is an array', body: '{"userId":"u","context":[1]}', headers: json },
    { name: 'an unknown property', body: '{"userId":"u","extra":1}', headers: json },
    { name: 'a number beyond a double', body: '{"userId":"u","context":{"x":1e400}}', headers: json },
    { name: 'a lone surrogate', body: '{"userId":"\\ud800"}', headers: json },
    { name: 'a NUL character', body: '{"userId":"a\\u0000b"}', headers: json },
    {
      name: 'context nested too deep',
      body: JSON.stringify({ userId: 'u', context: nestedObject(70) }),
      headers: json,
    },
    {
      name: 'a body over the limit',
      body: JSON.stringify({ userId: 'u', context: { pad: 'x'.repeat(BODY_LIMIT) } }),
      headers: json,
    },
    { name: 'a wrong key', body: ok, headers: { ...json, 'x-api-key': 'wrong-key-0123456789abcdef' } },
    { name: 'no key', body: ok, headers: { ...json, 'x-api-key': undefined } },
    { name: 'text/plain', body: ok, headers: { ...json, 'content-type': 'text/plain' } },
    { name: 'no content-type', body: ok, headers: { ...json, 'content-type': undefined } },
    { name: 'an unknown experiment', path: '/experiment/no-such-experiment/assign', body: ok, headers: json },
    { name: 'a draft experiment', path: `/experiment/${draft}/assign`, body: ok, headers: json },
    { name: 'a trailing slash', path: `/experiment/${running}/assign/`, body: ok, headers: json },
    { name: 'GET', method: 'GET', headers: { 'x-api-key': API_KEY } },
    {
      name: 'a slug over 1000 characters',
      path: `/experiment/${'s'.repeat(1001)}/assign`,
      body: ok,
      headers: json,
    },
    {
      name: 'a charset other than UTF-8',
      body: ok,
      headers: { ...json, 'content-type': 'application/json; charset=latin1' },
    },
    {
      name: 'a log',
      path: `/experiment/${running}/log`,
      body: '{"variantKey":"A","metrics":{"rating":4}}',
      headers: json,
    },
    {
      name: 'a log with an unknown variant',
      path: `/experiment/${running}/log`,
      body: '{"variantKey":"Z"}',
      headers: json,
    },
    {
      name: 'a log with a numeric variantKey',
      path: `/experiment/${running}/log`,
      body: '{"variantKey":5}',
      headers: json,
    },
    {
      name: 'a log to an unknown experiment',
      path: '/experiment/nope/log',
      body: '{"variantKey":"A"}',
      headers: json,
    },
    {
      name: 'a batch of logs',
      path: `/experiment/${running}/logs`,
      body: '{"results":[{"variantKey":"A"},{"variantKey":"Z"}]}',
      headers: json,
    },
    { name: 'an empty batch', path: `/experiment/${running}/logs`, body: '{"results":[]}', headers: json },
  ];

  for (const c of cases()) {
    test(c.name, async () => {
      const [socket, fastify] = await Promise.all([overSocket(c), throughFastify(c)]);
      assert.equal(socket.status, fastify.status, JSON.stringify({ socket, fastify }));
      assert.equal(socket.contentType, fastify.contentType);
      if (socket.status === 200 && 'logIds' in socket.body) {
        const ids = (b: Record<string, unknown>) => b.logIds as string[];
        for (const id of [...ids(socket.body), ...ids(fastify.body)]) assertUuidV7(id);
        assert.deepEqual({ ...socket.body, logIds: 'x' }, { ...fastify.body, logIds: 'x' });
      } else if (socket.status === 200 && 'logId' in socket.body) {
        assertUuidV7(socket.body.logId);
        assertUuidV7(fastify.body.logId);
        assert.deepEqual({ ...socket.body, logId: 'x' }, { ...fastify.body, logId: 'x' });
      } else if (socket.status === 200) {
        assertAssignmentId(socket.body.assignmentId);
        assertAssignmentId(fastify.body.assignmentId);
        assert.deepEqual(Object.keys(socket.body), ['variant', 'payload', 'assignmentId', 'inExperiment']);
        assert.deepEqual(Object.keys(fastify.body), Object.keys(socket.body));
        assert.ok(['A', 'B'].includes(socket.body.variant as string));
        assert.deepEqual(socket.body.payload, { prompt: String(socket.body.variant).toLowerCase() });
      } else {
        assert.deepEqual(socket.body, fastify.body);
      }
    });
  }

  test('an assign answered over the socket writes its exposure', async () => {
    const res = await overSocket({
      body: JSON.stringify({ userId: 'exposed-user' }),
      headers: json,
      name: '',
    });
    assert.equal(res.status, 200);
    await runtime.ingest.drain();
    const exposures = (await runtime.exposuresOf(running)).filter((e) => e.userId === 'exposed-user');
    assert.deepEqual(
      exposures.map((e) => [e.assignmentId, e.context]),
      [[res.body.assignmentId, null]],
    );
  });

  // An exposure has one stored form whichever transport answered (ADR 0009 is superseded): whatever
  // the body's text looks like, both must store and read back the same exposure.
  test('the exposure stored does not depend on the transport that answered', async () => {
    const context = {
      plan: 'pro',
      'quote"key': 'line\nbreak é 😀 \\ \u2028',
      n: [1, 2.5, -3, 1e21],
      none: null,
    };
    const bodies = [
      // spaces, escapes, unicode written out and as \u escapes, keys in the other order
      `{ "context" : {"plan":"pro","quote\\"key":"line\\nbreak \\u00e9 \\ud83d\\ude00 \\\\ \\u2028","n":[1,2.5,-3,1e21],"none":null},\n "userId":"text-user-1" }`,
      JSON.stringify({ userId: 'text-user-2', context }),
      JSON.stringify({ userId: 'text-user-3' }),
      // an extra property: accepted, but not part of the exposure (so not stored from the text)
      JSON.stringify({ userId: 'text-user-4', context, attributes: { secret: 'not an exposure field' } }),
      // a duplicated key: JSON.parse keeps the last, and so does reading the stored text back
      '{"userId":"ignored","userId":"text-user-5","context":{"a":1}}',
    ];
    const ids = new Map<string, unknown>();
    for (const body of bodies) {
      const socket = await overSocket({ body, headers: json, name: '' });
      assert.equal(socket.status, 200, JSON.stringify(socket.body));
      const viaFastify = await runtime.app.inject({
        method: 'POST',
        url: `/experiment/${running}/assign`,
        headers: json,
        payload: body,
      });
      assert.equal(viaFastify.statusCode, 200, viaFastify.body);
      const parsed = JSON.parse(body) as { userId: string; context?: unknown };
      ids.set(socket.body.assignmentId as string, parsed);
      ids.set(viaFastify.json().assignmentId, parsed);
    }
    await runtime.ingest.drain();
    const stored = (await runtime.exposuresOf(running)).filter((e) => ids.has(e.assignmentId));
    assert.equal(stored.length, 10);
    // One form on disk, from either transport.
    const batches = await runtime.rows<{ exposures: string }>(sql`SELECT exposures FROM exposure_batches`);
    const forms = batches
      .flatMap((b) => JSON.parse(b.exposures) as unknown[][])
      .filter((e) => ids.has(e[0] as string))
      .map((e) => e.length);
    assert.deepEqual(forms, Array(10).fill(5));
    for (const e of stored) {
      const sent = ids.get(e.assignmentId) as { userId: string; context?: unknown };
      assert.deepEqual([e.userId, e.context], [sent.userId, sent.context ?? null], e.assignmentId);
      assert.match(e.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(['A', 'B'].includes(e.variantKey));
      assert.deepEqual(Object.keys(e).sort(), [
        'assignmentId',
        'context',
        'createdAt',
        'experimentId',
        'userId',
        'variantKey',
        'version',
      ]);
    }
  });
});

describe('the fast transport while the server closes', { skip: SKIP_BACKEND }, () => {
  /**
   * Sends `first` (a POST to `url`) with half its body, starts closing the server, then sends the rest
   * of that body and an assign pipelined behind it on the same kept-alive connection. Resolves with
   * the statuses and the raw bytes received once the close and the connection have both finished.
   */
  async function closeWithRequestInFlight(
    url: (slug: string) => string,
    first: (slug: string) => object,
  ): Promise<{ statuses: number[]; received: string }> {
    const dir = makeTempDir();
    const runtime = await startTestRuntime(dir, 'fast-path-close');
    try {
      const slug = uniqueSlug('closing');
      const created = await runtime.api.call({
        method: 'POST',
        url: '/experiments',
        body: { slug, status: 'running', variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] },
      });
      assert.equal(created.statusCode, 201, created.body);
      const port = runtime.api.port;
      const post = (path: string, body: string) =>
        `POST ${path} HTTP/1.1\r\nhost: x\r\nx-api-key: ${API_KEY}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
      const assign = JSON.stringify({ userId: 'u' });
      const firstBody = JSON.stringify(first(slug));
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (d: Buffer) => {
        received += d.toString('latin1');
      });
      const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      // A request in flight (body half sent) keeps the connection busy when closing starts.
      socket.write(post(url(slug), firstBody) + firstBody.slice(0, 3));
      await new Promise((r) => setTimeout(r, 100));
      const closing = runtime.close();
      await new Promise((r) => setTimeout(r, 100));
      // The rest of that body, then an assign on the same connection.
      socket.write(firstBody.slice(3) + post(`/experiment/${slug}/assign`, assign) + assign);
      await closing;
      await socketClosed;
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      return { statuses, received };
    } finally {
      await runtime.close();
      removeTempDir(dir);
    }
  }

  // Without the fix, close waits on the kept-alive connection and the test times out.
  // The assign in flight when closing starts is answered, with `Connection: close` (ADR 0010): the
  // request pipelined behind it is never read, so the client knows to send it elsewhere.
  test('a request in flight on a kept-alive connection is answered with close, and close finishes', {
    timeout: 20_000,
  }, async () => {
    const { statuses, received } = await closeWithRequestInFlight(
      (slug) => `/experiment/${slug}/assign`,
      () => ({ userId: 'u' }),
    );
    assert.deepEqual(statuses, [200], received);
    assert.match(received, /\r\nconnection: close\r\n/i, received);
  });

  // The fast transport steps aside while closing: an assign that follows a Fastify answer on a kept-alive
  // connection gets Fastify's 503 and close.
  test('an assign after a Fastify answer in flight gets a 503 {"error"} with Retry-After, and close finishes', {
    timeout: 20_000,
  }, async () => {
    const { statuses, received } = await closeWithRequestInFlight(
      () => '/experiments',
      () => ({ slug: uniqueSlug('other'), variants: [{ key: 'A', payload: {} }] }),
    );
    assert.deepEqual(statuses.slice(1), [503], received);
    assert.match(received, /\r\nconnection: close\r\n/i, received);
    const refusal = received.slice(received.lastIndexOf('HTTP/1.1 503'));
    assert.match(refusal, /\r\nretry-after: 1\r\n/i, refusal);
    assert.match(
      refusal,
      /\r\n\r\n\{"error":"the service is shutting down; retry on another instance"\}$/,
      refusal,
    );
  });
});
