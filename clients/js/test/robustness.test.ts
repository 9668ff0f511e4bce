// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
// What a reviewer broke: an item that cannot be serialised, user ids the server refuses in local mode, a
// server that never answers at close and at exit, calls after close, a batch that always gets a 500,
// server warnings in answers, track's error output.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AgentSplit } from '../src/index.js';
import {
  allResults,
  createExperiment,
  memoryLogger,
  ROOT_KEY,
  repoRoot,
  startServer,
  type TestServer,
} from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

/** A server that accepts connections and never answers. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const s: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', () => res()));
  const port = (s.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((res) => s.close(() => res()));
    },
  };
}

/** Runs fixtures/silent-child.ts; resolves with its output and how long it lived. */
function runSilentChild(
  url: string,
  mode: 'close' | 'exit' | 'local',
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'clients', 'js', 'test', 'fixtures', 'silent-child.ts'), url, mode],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((res) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      res({ code, stdout, stderr, ms: performance.now() - t0 });
    }),
  );
}

test('an item that cannot be serialised is dropped and counted alone; its neighbours are delivered', async () => {
  const slug = await createExperiment(server, 'unserialisable');
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  const a = await client.assign(slug, 'u-1');
  assert.equal(a.source, 'server');
  const circular: any = { name: 'loop' };
  circular.self = circular;
  client.log(slug, { variantKey: a.variant, input: { i: 0 }, metrics: { x: 1 } });
  client.log(slug, { variantKey: a.variant, input: { i: 1 }, metrics: { x: 1n as any } });
  client.log(slug, { variantKey: a.variant, input: { i: 2 }, metrics: { x: 2 } });
  client.log(slug, { variantKey: a.variant, input: { i: 3, loop: circular }, metrics: { x: 3 } });
  client.feedback(slug, { assignmentId: a.assignmentId, metrics: { thumbs_up: true } });
  client.log(slug, { variantKey: a.variant, input: { i: 4 }, metrics: { x: 4 } });
  assert.equal(await client.flush(10_000), true);
  const stats = client.stats();
  assert.equal(stats.delivered, 4, JSON.stringify(stats));
  assert.equal(stats.failed, 2, JSON.stringify(stats));
  assert.equal(stats.inFlight, 0);
  const results = await allResults(server, slug);
  assert.deepEqual(results.map((r) => r.input.i).sort(), [0, 2, 4]);
  const warned = logger.warns.join('\n');
  assert.match(warned, /cannot be serialised as JSON \(.*BigInt/);
  assert.deepEqual(logger.errors, []);
  await client.close();
});

test('local mode: a user id the server would refuse answers the default with a warning', async () => {
  const slug = await createExperiment(server, 'local-user-ids');
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, local: true, logger });
  await client.refreshDefinitions();
  const refused = ['', 'a\u0000b', 'x'.repeat(513), `${'😀'.repeat(512)}x`, 'lone\uD800', '\uDC00tail'];
  for (const userId of refused) {
    const a = client.assignLocal(slug, userId, { default: { prompt: 'd' } });
    assert.equal(a.source, 'default', JSON.stringify(userId.slice(0, 20)));
    assert.deepEqual(a.payload, { prompt: 'd' });
  }
  assert.match(logger.warns.join('\n'), /userId/);
  // The server's limit is 512 code points, not UTF-16 units: 512 emoji (1,024 units) are fine.
  const accepted = ['x'.repeat(512), '😀'.repeat(512), 'usér-日本'];
  for (const userId of accepted) assert.equal(client.assignLocal(slug, userId).source, 'local');
  assert.equal(await client.flush(10_000), true);
  assert.equal(client.stats().delivered, 3);
  assert.equal(client.stats().failed, 0);
  await client.close();
});

/** The `closed in N ms` the child prints once close() returned. */
function closedInMs(stdout: string): number {
  const m = /closed in (\d+) ms/.exec(stdout);
  assert.ok(m, stdout);
  return Number(m[1]);
}

test('close() aborts a delivery request in flight: the process exits at once, the item counted failed', async () => {
  const silent = await silentServer();
  try {
    const child = await runSilentChild(silent.url, 'close');
    assert.equal(child.code, 0, child.stderr);
    assert.match(child.stdout, /closed in \d+ ms .*"failed":1/);
    // Before: it lived until the 10 s delivery timeout ran out.
    // Measured from close() inside the child, so a slow start on a loaded machine does not count.
    assert.ok(closedInMs(child.stdout) < 5000, child.stdout);
  } finally {
    await silent.close();
  }
});

test('close() aborts a definitions fetch in flight (local mode): the process exits at once', async () => {
  const silent = await silentServer();
  try {
    const child = await runSilentChild(silent.url, 'local');
    assert.equal(child.code, 0, child.stderr);
    assert.match(child.stdout, /closed in \d+ ms/);
    // Measured from close() inside the child, so a slow start on a loaded machine does not count.
    assert.ok(closedInMs(child.stdout) < 5000, child.stdout);
  } finally {
    await silent.close();
  }
});

test('at exit without close: the exit flush reports what was not delivered, and the process exits', async () => {
  const silent = await silentServer();
  try {
    const child = await runSilentChild(silent.url, 'exit');
    assert.equal(child.code, 0, child.stderr);
    assert.match(child.stderr, /exit flush: 1 item\(s\) not delivered within 500 ms/);
    // Exited before the 10 s delivery timeout would have let it (liveness, with room for a slow start).
    assert.ok(child.ms < 9500, `the process lived ${Math.round(child.ms)} ms`);
  } finally {
    await silent.close();
  }
});

test('after close: assign answers the default (local and remote), calls are dropped, counted and said once', async () => {
  const slug = await createExperiment(server, 'after-close');
  const logger = memoryLogger();
  const local = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, local: true, logger });
  assert.equal((await local.assign(slug, 'u-1')).source, 'local');
  await local.close();
  assert.equal(local.stats().delivered, 1);
  const a = await local.assign(slug, 'u-2', { default: { prompt: 'd' } });
  assert.equal(a.source, 'default');
  assert.deepEqual(a.payload, { prompt: 'd' });
  assert.equal(local.assignLocal(slug, 'u-3').source, 'default');
  local.log(slug, { variantKey: 'A', metrics: { x: 1 } });
  local.feedback(slug, { assignmentId: 'some-id', metrics: { x: 1 } });
  assert.equal(local.stats().failed, 4);
  assert.equal(local.stats().queued, 0);
  const closedWarnings = logger.warns.filter((w) => w.includes('client is closed'));
  assert.deepEqual(closedWarnings, ['[agentsplit] client is closed: assign after-close dropped']);

  let requests = 0;
  const realFetch = globalThis.fetch;
  const remote = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: memoryLogger() });
  await remote.close();
  globalThis.fetch = (async (input: any, init?: any) => {
    requests++;
    return realFetch(input, init);
  }) as typeof fetch;
  try {
    const r = await remote.assign(slug, 'u-1', { default: { prompt: 'd' } });
    assert.equal(r.source, 'default');
    assert.equal(requests, 0, 'no request after close');
    assert.equal(remote.stats().failed, 1);
  } finally {
    globalThis.fetch = realFetch;
  }
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  assert.equal(
    Object.values(analysis.body.exposures as Record<string, number>).reduce((s, n) => s + n, 0),
    1,
  );
});

/** A stand-in for the service: 500 for one experiment and for any body naming 'poison'; 408 once. */
async function standIn(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  let timedOutOnce = false;
  const s: HttpServer = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      requests.push(`${req.url} ${body}`);
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.url === '/experiment/broken/logs' || body.includes('poison')) {
        return answer(500, { error: 'Internal Server Error' });
      }
      if (req.url === '/experiment/slow/logs' && !timedOutOnce) {
        timedOutOnce = true;
        return answer(408, { error: 'Request Timeout' });
      }
      const n = (JSON.parse(body).results ?? [1]).length;
      return answer(200, { success: true, logIds: Array.from({ length: n }, (_, i) => `id-${i}`) });
    });
  });
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', () => res()));
  return {
    url: `http://127.0.0.1:${(s.address() as { port: number }).port}`,
    requests,
    close: () => new Promise<void>((res) => s.close(() => res())),
  };
}

test('a batch that always gets a 500 is given up after 5 attempts, item by item; the others are delivered', async () => {
  const stand = await standIn();
  try {
    const logger = memoryLogger();
    const client = new AgentSplit({
      baseUrl: stand.url,
      apiKey: ROOT_KEY,
      retryBaseMs: 10,
      retryMaxMs: 40,
      flushIntervalMs: 20,
      logger,
    });
    // One experiment's batch always fails; a poisoned item fails its own batch of three; 408 is retried.
    for (let i = 0; i < 3; i++) client.log('broken', { variantKey: 'A', input: { i } });
    client.log('mixed', { variantKey: 'A', input: { i: 0 } });
    client.log('mixed', { variantKey: 'A', input: { i: 1, note: 'poison' } });
    client.log('mixed', { variantKey: 'A', input: { i: 2 } });
    client.log('slow', { variantKey: 'A', input: { i: 0 } });
    client.feedback('fine', { assignmentId: 'x', metrics: { y: 1 } });
    assert.equal(await client.flush(10_000), true, JSON.stringify(client.stats()));
    const stats = client.stats();
    assert.equal(stats.delivered, 4, JSON.stringify(stats)); // mixed 0 and 2, slow, feedback
    assert.equal(stats.failed, 4, JSON.stringify(stats)); // broken ×3, poison
    const broken = stand.requests.filter((r) => r.startsWith('/experiment/broken/logs'));
    assert.equal(broken.length, 5 + 3, 'five attempts of the batch, then each item once');
    assert.equal(stand.requests.filter((r) => r.startsWith('/experiment/slow/logs')).length, 2);
    assert.match(logger.warns.join('\n'), /answered 500 Internal Server Error 5 times/);
    assert.match(logger.warns.join('\n'), /dropped/);
    await client.close();
  } finally {
    await stand.close();
  }
});

test('server warnings in answers are logged; track logs "<name>: <message>" as its error output', async () => {
  const slug = await createExperiment(server, 'server-warnings');
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  client.log(slug, { variantKey: 'Z', input: { i: 0 }, metrics: { x: 1 } });
  const a = await client.assign(slug, 'u-1');
  await assert.rejects(
    client.track(a, () => {
      throw new TypeError('bad prompt');
    }),
    TypeError,
  );
  assert.equal(await client.flush(), true);
  assert.match(logger.warns.join('\n'), /variantKey 'Z' matches no variant.*stored and flagged/);
  const results = await allResults(server, slug);
  const tracked = results.find((r) => r.variantKey === a.variant);
  assert.deepEqual(tracked.output, { error: 'TypeError: bad prompt' });
  await client.close();
});
