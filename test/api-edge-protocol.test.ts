// The edge against requests from an outside security campaign (issue 24), over raw sockets: chunk
// sizes declared past the body limit, CONNECT, and keys in URLs and request ids kept out of the logs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
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
import { startServer } from './helpers/server.js';

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

describe('keys in request logs (the real process at LOG_LEVEL=debug)', () => {
  test('a managed key or the root key in the query, the path or x-request-id never reaches the output', async () => {
    const dir = makeTempDir();
    const root = `root-${randomBytes(12).toString('hex')}-key`;
    const server = await startServer({
      API_KEY: root,
      LOG_LEVEL: 'debug',
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${join(dir, 'redaction.db')}`,
    });
    try {
      const call = async (
        method: string,
        path: string,
        body?: unknown,
        headers: Record<string, string> = {},
      ) => {
        const res = await fetch(server.baseUrl + path, {
          method,
          headers: { 'x-api-key': root, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return {
          status: res.status,
          headers: res.headers,
          json: (await res.json()) as Record<string, unknown>,
        };
      };
      const slug = `redaction-${Date.now()}`;
      const created = await call('POST', '/experiments', {
        slug,
        status: 'running',
        variants: [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'B', payload: {}, trafficPercent: 50 },
        ],
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const made = await call('POST', '/keys', { name: 'leaky', scopes: ['admin'] });
      assert.equal(made.status, 201, JSON.stringify(made.json));
      const managed = String(made.json.key);
      assert.match(managed, /^ask_[A-Za-z0-9_-]{43}$/);

      // Each spot, on a route of each transport (assign: the fast one; GET an experiment: Fastify).
      const marked: string[] = [];
      for (const secret of [managed, root]) {
        const encoded = secret.replace(
          /^(.)(.)/,
          (_, a: string, b: string) => `%${a.charCodeAt(0).toString(16)}${b}`,
        );
        for (const [n, query] of [`k=${secret}`, `auth=${secret}`, secret, `k=${encoded}`].entries()) {
          const mark = `m${marked.length}n${n}`;
          marked.push(mark);
          const assigned = await call('POST', `/experiment/${slug}/assign?${query}&${mark}=1`, {
            userId: 'u',
          });
          assert.equal(assigned.status, 200, JSON.stringify(assigned.json));
          const read = await call('GET', `/experiment/${slug}?${query}&${mark}=2`);
          assert.equal(read.status, 200, JSON.stringify(read.json));
        }
        for (const method of ['POST', 'GET']) {
          const path = method === 'POST' ? `/experiment/${secret}/assign` : `/experiment/${secret}`;
          const answer = await call(method, path, method === 'POST' ? { userId: 'u' } : undefined);
          assert.equal(answer.status, 404, `${method} ${path.replace(secret, '<secret>')}`);
        }
        const withId = await call(
          'POST',
          `/experiment/${slug}/assign`,
          { userId: 'u' },
          { 'x-request-id': secret },
        );
        assert.equal(withId.status, 200);
        const withIdToo = await call('GET', `/experiment/${slug}`, undefined, { 'x-request-id': secret });
        assert.equal(withIdToo.status, 200);
        for (const answer of [withId, withIdToo]) {
          for (const [name, value] of answer.headers)
            assert.ok(!value.includes(secret), `header ${name} echoes it`);
        }
      }

      // Every request has its line (2 to set up, 8 marks twice, 4 keys in paths, 4 in ids), none with a key.
      const lines = () =>
        server
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => l.msg === 'request');
      const deadline = Date.now() + 10_000;
      while (lines().length < 2 + marked.length * 2 + 8 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const requests = lines();
      for (const mark of marked) {
        assert.equal(requests.filter((l) => String(l.url).includes(`${mark}=`)).length, 2, mark);
      }
      const urls = requests.map((l) => String(l.url));
      assert.ok(urls.includes(`/experiment/${slug}/assign?k=ask_[redacted]&${marked[0]}=1`), urls.join('\n'));
      assert.ok(urls.includes(`/experiment/${slug}?auth=[redacted]&${marked[1]}=2`), urls.join('\n'));
      assert.ok(urls.includes(`/experiment/${slug}/assign?ask_[redacted]&${marked[2]}=1`), urls.join('\n'));
      assert.ok(urls.includes(`/experiment/${slug}?k=[redacted]&${marked[4]}=2`), urls.join('\n'));
      assert.ok(urls.includes('/experiment/ask_[redacted]/assign'), urls.join('\n'));
      assert.ok(urls.includes('/experiment/[redacted]/assign'), urls.join('\n'));
      assert.ok(urls.includes('/experiment/[redacted]'), urls.join('\n'));
      // A request id holding a key is replaced by a generated one.
      const plain = requests.filter(
        (l) => l.url === `/experiment/${slug}/assign` || l.url === `/experiment/${slug}`,
      );
      assert.equal(plain.length, 4, JSON.stringify(plain));
      for (const l of plain) assert.match(String(l.reqId), /^[0-9a-f]{8}-[0-9a-z]+$/);
      const output = server.output();
      assert.ok(!output.includes(managed), 'the managed key is in the output');
      assert.ok(!output.includes(managed.slice(4)), 'the managed key (without its prefix) is in the output');
      assert.ok(!output.includes(root), 'the root key is in the output');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      removeTempDir(dir);
    }
  });

  test("the process's logger cuts keys out of any line, not only request lines", () => {
    const root = `root-${randomBytes(12).toString('hex')}-key`;
    const managed = `ask_${randomBytes(32).toString('base64url')}`;
    const logger = resolve(import.meta.dirname, '../src/logger.ts');
    const script =
      `const { createLogger } = await import(${JSON.stringify(logger)});` +
      `const log = createLogger('info', [process.env.ROOT]);` +
      `log.error({ err: new Error('bad ' + process.env.MANAGED), url: '/x?q=' + process.env.ROOT }, 'failed ' + process.env.ROOT);`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, ROOT: root, MANAGED: managed },
      encoding: 'utf8',
    });
    const line = JSON.parse(output) as { msg: string; url: string; err: { message: string; stack: string } };
    assert.equal(line.msg, 'failed [redacted]');
    assert.equal(line.url, '/x?q=[redacted]');
    assert.equal(line.err.message, 'bad ask_[redacted]');
    assert.ok(!output.includes(root) && !output.includes(managed), output);
  });
});
