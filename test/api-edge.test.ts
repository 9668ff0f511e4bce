// The HTTP edge against a hostile or sloppy client, over real sockets: raw HTTP the parser refuses,
// stalled bodies, bytes that are not UTF-8, secrets in URLs, and what each transport logs.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import {
  API_KEY,
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

/** Log lines written by a runtime, parsed. */
class Lines extends Writable {
  readonly all: Array<Record<string, unknown>> = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line) this.all.push(JSON.parse(line));
    done();
  }
  requests(): Array<Record<string, unknown>> {
    return this.all.filter((l) => typeof l.reqId === 'string' && typeof l.status === 'number');
  }
}

/** Writes `raw` on a fresh connection and resolves with everything received until the server closes it. */
function rawExchange(port: number, raw: string | Buffer, { endAfterMs = 3000 } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => socket.destroy(), endAfterMs);
    socket.on('data', (d: Buffer) => {
      received += d.toString('utf8');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(raw);
  });
}

function statusAndBody(received: string): { status: number; body: unknown } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]);
  const body = received.slice(received.indexOf('\r\n\r\n') + 4);
  return { status, body: JSON.parse(body) };
}

const post = (path: string, body: string, headers = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${API_KEY}\r\ncontent-type: application/json\r\n` +
  `content-length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;

describe('the edge', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  const lines = new Lines();

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'edge', {
      logger: pino({ level: 'info' }, lines),
      bodyTimeoutMs: 1000,
    });
    api = runtime.api;
    slug = (await api.createExperiment()).slug;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  describe('requests Node’s parser refuses are answered {"error": ...}', () => {
    const cases: Array<[string, string, number]> = [
      ['a method that is not HTTP', 'FOO^ / HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      [
        'Content-Length and Transfer-Encoding together',
        `POST /experiment/x/log HTTP/1.1\r\nHost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n`,
        400,
      ],
      [
        'broken chunked encoding',
        `POST /experiment/x/log HTTP/1.1\r\nHost: x\r\nx-api-key: ${API_KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        400,
      ],
      ['headers too large', `GET /healthz HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ];
    for (const [name, raw, status] of cases) {
      test('an Expect other than 100-continue is 417, and a compressed body 415, each with a JSON error', async () => {
        const expect = statusAndBody(
          await rawExchange(
            api.port,
            post(`/experiment/${slug}/log`, '{"variantKey":"A"}', 'expect: 200-ok\r\n'),
          ),
        );
        assert.equal(expect.status, 417);
        assert.deepEqual(expect.body, { error: "Expect '200-ok' is not supported (only 100-continue)" });
        const gzipped = statusAndBody(
          await rawExchange(
            api.port,
            post(`/experiment/${slug}/log`, '{"variantKey":"A"}', 'content-encoding: gzip\r\n'),
          ),
        );
        assert.equal(gzipped.status, 415);
        assert.deepEqual(gzipped.body, {
          error: "Content-Encoding 'gzip' is not supported: send the body uncompressed",
        });
        // identity is no encoding at all.
        const plain = statusAndBody(
          await rawExchange(
            api.port,
            post(
              `/experiment/${slug}/log`,
              '{"variantKey":"A"}',
              'content-encoding: identity\r\nconnection: close\r\n',
            ),
          ),
        );
        assert.equal(plain.status, 200, JSON.stringify(plain.body));
      });

      test(name, async () => {
        const answer = statusAndBody(await rawExchange(api.port, raw));
        assert.equal(answer.status, status);
        assert.deepEqual(Object.keys(answer.body as object), ['error']);
        assert.ok(((answer.body as { error: string }).error ?? '').length > 0);
      });
    }

    test('an HTTP/1.1 request without Host → 400 naming Host', async () => {
      const answer = statusAndBody(await rawExchange(api.port, 'GET /healthz HTTP/1.1\r\n\r\n'));
      assert.deepEqual(answer, { status: 400, body: { error: 'the Host header is required in HTTP/1.1' } });
    });
  });

  test('a body that stalls past the deadline → 408 {"error"} and the connection closes', async () => {
    const started = Date.now();
    const body = JSON.stringify({ variantKey: 'A' });
    // Headers and half the body, then nothing.
    const received = await rawExchange(api.port, post(`/experiment/${slug}/log`, body).slice(0, -5), {
      endAfterMs: 10_000,
    });
    const answer = statusAndBody(received);
    assert.equal(answer.status, 408, received);
    assert.match((answer.body as { error: string }).error, /within 1000 ms/);
    // Answered before the client gave up at 10 s (a bound on liveness, not on speed).
    assert.ok(Date.now() - started < 9500, `took ${Date.now() - started} ms`);
  });

  test('an answer sent before the body arrived (401, 404) closes the connection, and no 408 follows it', async () => {
    const partial = (path: string, key: string) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
      'content-length: 100\r\n\r\n{"a":';
    for (const [path, key, status] of [
      [`/experiment/${slug}/log`, 'wrong-key-0123456789', 401],
      [`/experiment/${'s'.repeat(1001)}/log`, API_KEY, 404],
    ] as const) {
      const received = await rawExchange(api.port, partial(path, key), { endAfterMs: 2500 });
      assert.equal([...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].length, 1, received);
      assert.match(received, new RegExp(`^HTTP/1\\.1 ${status} `), received);
      assert.match(received, /\r\nconnection: close\r\n/i, received);
    }
  });

  test('a body that is not UTF-8 → 400 naming the byte, on both transports, and nothing is stored', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"variantKey":"A","input":{"q":"caf'),
      Buffer.from([0xe9]), // Latin-1 é, not UTF-8
      Buffer.from('"}}'),
    ]);
    const before = (await api.allResults(slug)).length;
    const fast = await api.call({ method: 'POST', url: `/experiment/${slug}/log`, raw: bytes });
    assertError(fast, 400, /not valid UTF-8 \(byte 35\)/);
    const viaFastify = await api.call({
      method: 'POST',
      url: `/experiment/${slug}/log`,
      raw: bytes,
      headers: { 'content-type': 'application/json; charset=utf-8; x=1' },
    });
    assertError(viaFastify, 400, /not valid UTF-8 \(byte 35\)/);
    assert.equal((await api.allResults(slug)).length, before);
  });

  test('a charset other than UTF-8 → 400 naming the charset', async () => {
    for (const type of ['application/json; charset=latin1', 'application/json; charset="ISO-8859-1"']) {
      const res = await api.postRaw(`/experiment/${slug}/log`, '{"variantKey":"A"}', {
        'content-type': type,
      });
      assertError(res, 400, /only UTF-8.*charset=/);
    }
    const ok = await api.postRaw(`/experiment/${slug}/log`, '{"variantKey":"A"}', {
      'content-type': 'application/json; charset=UTF-8',
    });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  describe('request logs', () => {
    test('the default level writes no line per request, on either transport', async () => {
      const before = lines.requests().length;
      await api.assign(slug);
      await api.log(slug, { variantKey: 'A' });
      assert.equal((await api.get(`/experiment/${slug}`)).statusCode, 200);
      assert.equal(lines.requests().length, before);
    });

    test('a secret sent in the query string never reaches the log', async () => {
      const dir2 = makeTempDir();
      const debugLines = new Lines();
      const debug = await startTestRuntime(dir2, 'edge-debug', {
        logger: pino({ level: 'debug' }, debugLines),
      });
      try {
        const secret = 'query-secret-0123456789';
        const s = (await debug.api.createExperiment()).slug;
        await debug.api.call({
          method: 'POST',
          url: `/experiment/${s}/assign?api_key=${secret}`,
          body: { userId: 'u' },
        });
        await debug.api.get(`/experiment/${s}?x-api-key=${secret}&limit=3`);
        await debug.api.get(`/experiments?token=${secret}`, null);
        const text = JSON.stringify(debugLines.all);
        assert.ok(!text.includes(secret), text);
        assert.ok(!text.includes(API_KEY), 'the header key is never logged either');
        const urls = debugLines.requests().map((l) => l.url);
        assert.ok(urls.includes(`/experiment/${s}/assign?api_key=[redacted]`), JSON.stringify(urls));
        assert.ok(urls.includes(`/experiment/${s}?x-api-key=[redacted]&limit=3`), JSON.stringify(urls));
      } finally {
        await debug.close();
        removeTempDir(dir2);
      }
    });

    test('at debug both transports write the same line shape with reqId', async () => {
      const dir2 = makeTempDir();
      const debugLines = new Lines();
      const debug = await startTestRuntime(dir2, 'edge-shape', {
        logger: pino({ level: 'debug' }, debugLines),
      });
      try {
        const s = (await debug.api.createExperiment()).slug;
        await debug.api.call({
          method: 'POST',
          url: `/experiment/${s}/assign`,
          body: { userId: 'u' },
          headers: { 'x-request-id': 'caller-id-1' },
        });
        await debug.api.get(`/experiment/${s}`);
        const [fast, fastify] = debugLines.requests().slice(-2);
        const shape = (l: Record<string, unknown>) =>
          Object.keys(l)
            .filter((k) => !['time', 'pid', 'hostname'].includes(k))
            .sort();
        assert.deepEqual(shape(fast!), ['level', 'method', 'ms', 'msg', 'reqId', 'status', 'url']);
        assert.deepEqual(shape(fast!), shape(fastify!));
        assert.equal(fast!.reqId, 'caller-id-1');
        assert.equal(fast!.status, 200);
        assert.match(String(fastify!.reqId), /^[0-9a-f]{8}-[0-9a-z]+$/);
        // An answer made ahead of both transports (no Host) is logged in the same shape.
        await rawExchange(debug.api.port, 'GET /healthz?from=hostless HTTP/1.1\r\n\r\n');
        const hostless = debugLines.requests().find((l) => l.url === '/healthz?from=hostless');
        assert.ok(hostless, JSON.stringify(debugLines.requests().slice(-3)));
        assert.deepEqual(shape(hostless), shape(fast!));
        assert.equal(hostless.status, 400);
      } finally {
        await debug.close();
        removeTempDir(dir2);
      }
    });

    test('a slow request is logged at warn at the default level', async () => {
      const dir2 = makeTempDir();
      const slowLines = new Lines();
      const slow = await startTestRuntime(dir2, 'edge-slow', {
        logger: pino({ level: 'info' }, slowLines),
        slowRequestMs: 1,
      });
      try {
        const s = (await slow.api.createExperiment()).slug;
        await slow.api.logMany(
          s,
          Array.from({ length: 200 }, () => ({ variantKey: 'A', input: { x: 'y'.repeat(200) } })),
        );
        const warned = slowLines.requests().filter((l) => l.msg === 'slow request');
        assert.ok(warned.length > 0, JSON.stringify(slowLines.all));
        assert.equal(warned[0]!.level, 40);
      } finally {
        await slow.close();
        removeTempDir(dir2);
      }
    });
  });
});
