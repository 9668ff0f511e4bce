// The edge against requests from an outside security campaign (issue 24), over raw sockets: chunk
// sizes declared past the body limit, CONNECT, and keys in URLs and request ids kept out of the logs.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  type Api,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

interface Exchange {
  received: string;
  /** The server closed the connection (rather than the test giving up on it). */
  closedByServer: boolean;
}

/**
 * Writes each part on one fresh connection (`pauseMs` apart) and resolves with everything received until
 * the server closes it, or `giveUpMs` after the last part.
 */
function exchange(port: number, parts: Array<string | Buffer>, { pauseMs = 150, giveUpMs = 15_000 } = {}) {
  return new Promise<Exchange>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let gaveUp = false;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d: Buffer) => {
      received += d.toString('utf8');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received, closedByServer: !gaveUp });
    });
    const write = (i: number) => {
      if (socket.destroyed) return;
      if (i === parts.length) {
        timer = setTimeout(() => {
          gaveUp = true;
          socket.destroy();
        }, giveUpMs);
        return;
      }
      socket.write(parts[i]!);
      setTimeout(() => write(i + 1), i + 1 === parts.length ? 0 : pauseMs);
    };
    socket.once('connect', () => write(0));
  });
}

function answers(received: string): Array<{ status: number; headers: string; body: string }> {
  const found = [];
  let rest = received;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const headers = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1] ?? 0);
    found.push({
      status: Number(headers.slice(9, 12)),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  return found;
}

const LIMIT = 4096;
const TOO_LARGE = { error: `request body is larger than the limit of ${LIMIT} bytes` };

describe('chunked bodies and CONNECT at the edge', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  /** A route of each transport: log is the fast transport's (for Content-Length bodies), create Fastify's. */
  let routes: string[];

  before(async () => {
    dir = makeTempDir();
    // The default body deadline (30 s): a 413 cannot be mistaken for the end of a stalled body.
    runtime = await startTestRuntime(dir, 'edge-protocol', { bodyLimit: LIMIT });
    api = runtime.api;
    slug = (await api.createExperiment()).slug;
    routes = [`/experiment/${slug}/log`, '/experiments'];
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const head = (path: string, key = API_KEY) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
    'transfer-encoding: chunked\r\n\r\n';

  /** The single answer is 413 with the limit's words, and the server closed the connection after it. */
  function assertTooLarge(got: Exchange, what: string): void {
    const all = answers(got.received);
    assert.equal(all.length, 1, `${what}: ${got.received}`);
    assert.equal(all[0]!.status, 413, `${what}: ${got.received}`);
    assert.deepEqual(JSON.parse(all[0]!.body), TOO_LARGE, what);
    assert.match(all[0]!.headers, /\r\nconnection: close/i, what);
    assert.ok(got.closedByServer, `${what}: the server left the connection open`);
  }

  test('a chunk size past the limit → 413 {"error"} at once and the connection closes, on both transports', async () => {
    for (const path of routes) {
      for (const size of ['FFFFFFFFFFFFFFFF', (LIMIT + 1).toString(16), '7fffffffffffffff']) {
        // With the headers in one write, and after them in a later one.
        assertTooLarge(await exchange(api.port, [`${head(path)}${size}\r\n{"var`]), `${path} ${size}`);
        assertTooLarge(
          await exchange(api.port, [head(path), `${size}\r\n{"var`]),
          `${path} ${size} after the headers`,
        );
      }
    }
  });

  test('a chunk size past 2^64 (which Node refuses itself) → 413 {"error"} too', async () => {
    for (const path of routes) {
      assertTooLarge(await exchange(api.port, [`${head(path)}1${'0'.repeat(16)}\r\nab`]), path);
      assertTooLarge(await exchange(api.port, [head(path), `1${'0'.repeat(16)}\r\nab`]), `${path}, later`);
    }
  });

  test('chunks that add up past the limit → 413 once the size that passes it is declared', async () => {
    const first = `{"variantKey":"A","input":"${'x'.repeat(LIMIT - 100)}",`;
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    for (const path of routes) {
      assertTooLarge(await exchange(api.port, [head(path), chunk(first), '100\r\n']), path);
    }
  });

  test('the key is still checked first: a chunk size past the limit without a key → 401', async () => {
    for (const path of routes) {
      const got = await exchange(api.port, [`${head(path, 'wrong-key-0123456789')}FFFFFFFFFFFF\r\nab`]);
      const all = answers(got.received);
      assert.equal(all.length, 1, got.received);
      assert.equal(all[0]!.status, 401, got.received);
      assert.ok(got.closedByServer, path);
    }
  });

  test('chunked bodies within the limit are still taken, and the connection serves the next request', async () => {
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    let n = 0;
    const bodies: Array<[string, () => string, number]> = [
      [routes[0]!, () => JSON.stringify({ variantKey: 'A', input: { q: 'y'.repeat(LIMIT - 200) } }), 200],
      [
        routes[1]!,
        () =>
          JSON.stringify({
            slug: `chunked-${Date.now()}-${++n}`,
            variants: [
              { key: 'A', payload: { prompt: 'a'.repeat(1500) }, trafficPercent: 50 },
              { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
            ],
          }),
        201,
      ],
    ];
    const health = 'GET /healthz HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n';
    for (const [path, body, status] of bodies) {
      const text = body();
      const parts = [head(path), chunk(text.slice(0, 1000)), chunk(text.slice(1000)), `0\r\n\r\n${health}`];
      const got = await exchange(api.port, parts);
      assert.deepEqual(
        answers(got.received).map((a) => a.status),
        [status, 200],
        got.received,
      );
      // All of it in one write, as one chunk.
      const once = await exchange(api.port, [`${head(path)}${chunk(body())}0\r\n\r\n${health}`]);
      assert.deepEqual(
        answers(once.received).map((a) => a.status),
        [status, 200],
        once.received,
      );
    }
  });

  test('CONNECT → 405 {"error"} with Connection: close, and the connection closes', async () => {
    for (const target of ['example.com:443', '127.0.0.1:22']) {
      const got = await exchange(api.port, [`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`]);
      const all = answers(got.received);
      assert.equal(all.length, 1, got.received);
      assert.equal(all[0]!.status, 405, got.received);
      assert.deepEqual(JSON.parse(all[0]!.body), { error: 'CONNECT is not supported' });
      assert.match(all[0]!.headers, /\r\nconnection: close/i);
      assert.match(all[0]!.headers, /\r\ncontent-type: application\/json/i);
      assert.ok(got.closedByServer, got.received);
    }
    // The server still answers afterwards.
    assert.equal((await api.get('/healthz')).statusCode, 200);
  });
});
