// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
// Remote assign, log, track, feedback against a real server process; fail-open answers.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, test } from 'node:test';
import { AgentSplit, type Assignment } from '../src/index.js';
import {
  allResults,
  createExperiment,
  memoryLogger,
  ROOT_KEY,
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

test('assign, log, track and feedback round trips show in /results and /analysis', async () => {
  const slug = await createExperiment(server, 'round-trip');
  const logger = memoryLogger();
  const client = new AgentSplit<{ prompt: string }>({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  const assignments: Assignment<{ prompt: string }>[] = [];
  for (let i = 0; i < 30; i++) {
    const a = await client.assign(slug, `u-${i}`, {
      context: { plan: 'pro' },
      default: { prompt: 'default' },
    });
    assert.equal(a.source, 'server');
    assert.ok(a.variant === 'A' || a.variant === 'B');
    assert.equal(a.payload.prompt, a.variant.toLowerCase());
    assert.match(a.assignmentId, /^[0-9a-f-]{36}\.1\.[01]\.[A-Za-z0-9+/=]+\.[0-9a-f]{8}$/);
    assignments.push(a);
  }
  // 10 by log, 10 by track, 10 by a track whose callback throws.
  for (const [i, a] of assignments.entries()) {
    if (i < 10) {
      client.log(slug, {
        variantKey: a.variant,
        assignmentId: a.assignmentId,
        userId: a.userId,
        input: { i },
        output: { answer: 'ok' },
        metrics: { tokens: 100 + i },
      });
    } else if (i < 20) {
      const out = await client.track(
        a,
        async (run) => {
          run.output = { answer: `answer ${i}` };
          run.metrics.cost_usd = 0.002;
          return `answer ${i}`;
        },
        { input: { i } },
      );
      assert.equal(out, `answer ${i}`);
    } else {
      const own = new Error(`model down ${i}`);
      await assert.rejects(
        client.track(
          a,
          () => {
            throw own;
          },
          { input: { i } },
        ),
        (err) => err === own,
      );
    }
    client.feedback(slug, { assignmentId: a.assignmentId, metrics: { thumbs_up: i % 2 === 0 } });
  }
  assert.equal(await client.flush(), true);
  const stats = client.stats();
  assert.equal(stats.delivered, 60);
  assert.equal(stats.failed, 0);
  assert.equal(stats.queued, 0);

  const results = await allResults(server, slug);
  assert.equal(results.length, 30);
  const byI = new Map(results.map((r) => [r.input.i as number, r]));
  for (const [i, a] of assignments.entries()) {
    const r = byI.get(i);
    assert.ok(r, `result ${i}`);
    assert.equal(r.variantKey, a.variant);
    assert.equal(r.assignmentId, a.assignmentId);
    assert.equal(r.userId, a.userId);
    assert.ok(r.timestamp, 'the client sets the timestamp');
    if (i < 10) assert.equal(r.metrics.tokens, 100 + i);
    else if (i < 20) {
      assert.equal(r.metrics.error, false);
      assert.equal(r.metrics.cost_usd, 0.002);
      assert.equal(typeof r.metrics.latency_ms, 'number');
      assert.equal(r.output.answer, `answer ${i}`);
    } else {
      assert.equal(r.metrics.error, true);
      assert.equal(r.output.error, `Error: model down ${i}`);
    }
  }
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  assert.equal(analysis.status, 200);
  const counts = analysis.body.results as Record<string, number>;
  assert.equal(
    Object.values(counts).reduce((s, n) => s + n, 0),
    30,
  );
  const thumbs = (analysis.body.metrics as any[]).find((m) => m.name === 'thumbs_up');
  assert.ok(thumbs, 'feedback metric analysed');
  const n = (thumbs.variants as any[]).reduce((s, v) => s + v.n, 0);
  assert.equal(n, 30);
  await client.close();
  assert.deepEqual(logger.errors, []);
  assert.deepEqual(logger.warns, []);
});

test('a default assignment runs the callback and sends nothing', async () => {
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  const a = await client.assign('no-such-experiment', 'u-1', { default: { prompt: 'fallback' } });
  assert.equal(a.source, 'default');
  assert.equal(a.variant, '');
  assert.equal(a.assignmentId, '');
  assert.deepEqual(a.payload, { prompt: 'fallback' });
  assert.match(logger.warns.join('\n'), /assign no-such-experiment answered 404/);
  assert.equal(await client.track(a, () => 42), 42);
  client.log('no-such-experiment', { variantKey: a.variant, metrics: { x: 1 } });
  client.feedback('no-such-experiment', { assignmentId: a.assignmentId, metrics: { x: 1 } });
  assert.equal(client.stats().queued, 0);
  await client.close();
});

test('a paused experiment answers the default; running again answers a variant', async () => {
  const slug = await createExperiment(server, 'pausable');
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: memoryLogger() });
  assert.equal((await client.assign(slug, 'u-1')).source, 'server');
  assert.equal((await server.api('PATCH', `/experiment/${slug}`, { status: 'paused' })).status, 200);
  const a = await client.assign(slug, 'u-1', { default: { prompt: 'd' } });
  assert.equal(a.source, 'default');
  assert.deepEqual(a.payload, { prompt: 'd' });
  assert.equal((await server.api('PATCH', `/experiment/${slug}`, { status: 'running' })).status, 200);
  assert.equal((await client.assign(slug, 'u-1')).source, 'server');
  await client.close();
});

test('a wrong key: defaults, logged loudly once, results dropped without raising', async () => {
  const slug = await createExperiment(server, 'wrong-key');
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: 'not-the-key-0123456789', logger });
  for (let i = 0; i < 3; i++) assert.equal((await client.assign(slug, `u-${i}`)).source, 'default');
  client.log(slug, { variantKey: 'A', metrics: { x: 1 } });
  assert.equal(await client.flush(), true);
  assert.equal(logger.errors.length, 1);
  assert.match(logger.errors[0]!, /401/);
  assert.equal(client.stats().failed, 1);
  await client.close();
  assert.equal((await allResults(server, slug)).length, 0);
});

test('no server at all: assign answers the default at once, nothing raises, flush gives up in time', async () => {
  const dead = await new Promise<number>((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
  const logger = memoryLogger();
  const client = new AgentSplit({
    baseUrl: `http://127.0.0.1:${dead}`,
    apiKey: ROOT_KEY,
    timeoutMs: 500,
    logger,
  });
  const t0 = performance.now();
  const a = await client.assign('x', 'u-1', { default: { prompt: 'd' } });
  assert.ok(performance.now() - t0 < 500);
  assert.equal(a.source, 'default');
  client.log('x', { variantKey: 'A' });
  client.feedback('x', { assignmentId: 'abc', metrics: { y: 1 } });
  const t1 = performance.now();
  assert.equal(await client.flush(300), false);
  assert.ok(performance.now() - t1 < 1000);
  await client.close(200);
  assert.equal(client.stats().failed, 2);
  assert.ok(logger.warns.length > 0);
});

test('a server that never answers: assign answers the default within timeoutMs', async () => {
  const sockets = new Set<import('node:net').Socket>();
  const silent: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((res) => silent.listen(0, '127.0.0.1', () => res()));
  const port = (silent.address() as { port: number }).port;
  const logger = memoryLogger();
  const client = new AgentSplit({
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey: ROOT_KEY,
    timeoutMs: 300,
    logger,
  });
  const t0 = performance.now();
  const a = await client.assign('x', 'u-1', { default: { prompt: 'd' } });
  const elapsed = performance.now() - t0;
  assert.equal(a.source, 'default');
  // The timeout was honoured (not an answer that never comes): the lower bound is the point.
  assert.ok(elapsed >= 250 && elapsed < 10_000, `took ${elapsed} ms`);
  assert.match(logger.warns.join('\n'), /timed out/);
  await client.close(100);
  for (const s of sockets) s.destroy();
  await new Promise<void>((res) => silent.close(() => res()));
});

test('the queue is bounded: the oldest are dropped and counted', async () => {
  const client = new AgentSplit({
    baseUrl: 'http://127.0.0.1:9',
    apiKey: ROOT_KEY,
    maxQueueSize: 5,
    batchSize: 1000,
    flushIntervalMs: 60_000,
    logger: memoryLogger(),
  });
  for (let i = 0; i < 8; i++) client.log('x', { variantKey: 'A', metrics: { i } });
  assert.equal(client.stats().queued, 5);
  assert.equal(client.stats().dropped, 3);
  await client.close(50);
});

test('a batch with one bad item: its neighbours are stored, the bad one dropped with a warning', async () => {
  const slug = await createExperiment(server, 'bad-item');
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  for (let i = 0; i < 5; i++) {
    client.log(slug, {
      variantKey: 'A',
      input: { i },
      metrics: i === 2 ? { 'bad\u0001name': 1 } : { ok: 1 },
    });
  }
  assert.equal(await client.flush(), true);
  const results = await allResults(server, slug);
  assert.deepEqual(results.map((r) => r.input.i).sort(), [0, 1, 3, 4]);
  assert.equal(client.stats().failed, 1);
  assert.match(logger.warns.join('\n'), /refused an item: 400/);
  await client.close();
});

test('no baseUrl and no key: defaults, no exceptions', async () => {
  const saved = { url: process.env.AGENTSPLIT_URL, key: process.env.AGENTSPLIT_API_KEY };
  delete process.env.AGENTSPLIT_URL;
  delete process.env.AGENTSPLIT_API_KEY;
  try {
    const logger = memoryLogger();
    const client = new AgentSplit({ logger });
    assert.equal((await client.assign('x', 'u')).source, 'default');
    client.log('x', { variantKey: 'A' });
    assert.equal(await client.flush(), true);
    await client.close();
    assert.equal(logger.errors.length, 1);
  } finally {
    if (saved.url !== undefined) process.env.AGENTSPLIT_URL = saved.url;
    if (saved.key !== undefined) process.env.AGENTSPLIT_API_KEY = saved.key;
  }
});

test('baseUrl and apiKey default to AGENTSPLIT_URL and AGENTSPLIT_API_KEY', async () => {
  const slug = await createExperiment(server, 'from-env');
  process.env.AGENTSPLIT_URL = server.baseUrl;
  process.env.AGENTSPLIT_API_KEY = ROOT_KEY;
  try {
    const client = new AgentSplit({ logger: memoryLogger() });
    assert.equal((await client.assign(slug, 'u-1')).source, 'server');
    await client.close();
  } finally {
    delete process.env.AGENTSPLIT_URL;
    delete process.env.AGENTSPLIT_API_KEY;
  }
});
