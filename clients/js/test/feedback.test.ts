// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
// Feedback through the batched delivery (issue 26): 3,000 feedback calls committed within flush(10 s)
// against a real server and read back through the analysis; one POST /feedback across experiments, its
// rejected items counted; close() against a down or slow server sends nothing after it resolves and says
// exactly what it could not deliver.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentSplit } from '../src/index.js';
import { createExperiment, memoryLogger, ROOT_KEY, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

/** Every request the client makes through fetch: its path and, for POST /feedback, its item count. */
function recordRequests(): { seen: Array<[string, number]>; restore(): void } {
  const original = globalThis.fetch;
  const seen: Array<[string, number]> = [];
  globalThis.fetch = (async (input: any, init?: any) => {
    const path = new URL(String(input)).pathname;
    seen.push([path, path === '/feedback' ? JSON.parse(init.body).feedback.length : 0]);
    return original(input, init);
  }) as typeof fetch;
  return {
    seen,
    restore: () => {
      globalThis.fetch = original;
    },
  };
}

async function rated(slug: string): Promise<number> {
  const res = await server.api('GET', `/experiment/${slug}/analysis`);
  assert.equal(res.status, 200);
  const rating = res.body.metrics.find((m: any) => m.name === 'rating');
  return rating ? rating.variants.reduce((n: number, v: any) => n + v.n, 0) : 0;
}

test('3,000 feedback calls are committed within flush(10 s), in POST /feedback batches, and read back', async (t) => {
  const slug = await createExperiment(server, 'feedback-3000', { assignment: 'random' });
  const client = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger: memoryLogger(),
  });
  const n = 3000;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await client.assign(slug, `user-${i}`)).assignmentId);
  assert.ok(ids.every((id) => id !== ''));
  assert.equal(await client.flush(30_000), true);
  const requests = recordRequests();
  let took: number;
  try {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) client.feedback(slug, { assignmentId: ids[i]!, metrics: { rating: i % 5 } });
    const committed = await client.flush(10_000);
    took = performance.now() - t0;
    assert.equal(committed, true, `flush(10 s) says all was committed: ${JSON.stringify(client.stats())}`);
  } finally {
    requests.restore();
  }
  t.diagnostic(`TS client: ${n} feedback calls committed in ${(took / 1000).toFixed(2)} s`);
  const stats = client.stats();
  assert.equal(stats.delivered, 2 * n);
  assert.equal(stats.failed, 0);
  assert.equal(await client.close(), 0);
  assert.equal(await rated(slug), n);
  const feedback = requests.seen.filter(([path]) => path === '/feedback').map(([, items]) => items);
  assert.equal(
    feedback.reduce((a, b) => a + b, 0),
    n,
  );
  assert.ok(
    feedback.every((items) => items > 0 && items <= 100),
    'batches of at most batchSize (100)',
  );
  assert.deepEqual(
    requests.seen.filter(([path]) => path !== '/feedback'),
    [],
    'no other request (no single-item route)',
  );
});

test('feedback of several experiments goes in one request; the items the server rejects are counted', async () => {
  const first = await createExperiment(server, 'feedback-first', { assignment: 'random' });
  const second = await createExperiment(server, 'feedback-second', { assignment: 'random' });
  const logger = memoryLogger();
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  const a = await client.assign(first, 'u-1');
  const b = await client.assign(second, 'u-2');
  const requests = recordRequests();
  try {
    client.feedback(first, { assignmentId: a.assignmentId, metrics: { rating: 4 } });
    client.feedback(second, { assignmentId: b.assignmentId, metrics: { rating: 2 }, comment: 'slow' });
    client.feedback('no-such-experiment', { assignmentId: b.assignmentId, metrics: { rating: 1 } });
    assert.equal(await client.flush(), true);
  } finally {
    requests.restore();
  }
  assert.deepEqual(requests.seen, [['/feedback', 3]]);
  const stats = client.stats();
  assert.deepEqual([stats.delivered, stats.failed], [2, 1]);
  assert.match(
    logger.warns.join('\n'),
    /POST \/feedback rejected 1 of 3 feedback item\(s\), e\.g\. #2: no experiment with slug 'no-such-experiment'/,
  );
  assert.equal(await rated(first), 1);
  assert.equal(await rated(second), 1);
  await client.close();
});

/** A server that answers every request after `delayMs` with `status`, noting when each arrived. */
async function standIn(delayMs: number, status: number) {
  const arrivals: number[] = [];
  const s = createServer((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'busy' }));
      }, delayMs);
    });
  });
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', () => res()));
  return {
    url: `http://127.0.0.1:${(s.address() as { port: number }).port}`,
    arrivals,
    close: () =>
      new Promise<void>((res) => {
        s.closeAllConnections();
        s.close(() => res());
      }),
  };
}

for (const kind of ['slow', 'down'] as const) {
  test(`close() against a ${kind} server: nothing is sent or retried after it, and it says exactly what was lost`, async () => {
    // slow: every answer comes after 1 s (a 503); down: nothing listens on the port (refused at once).
    const stand = await standIn(1000, 503);
    if (kind === 'down') await stand.close();
    const logger = memoryLogger();
    const client = new AgentSplit({
      baseUrl: stand.url,
      apiKey: ROOT_KEY,
      logger,
      deliveryTimeoutMs: 5000,
      retryBaseMs: 20,
      retryMaxMs: 50,
      flushIntervalMs: 20,
    });
    const requests = recordRequests();
    try {
      for (let i = 0; i < 24; i++) client.feedback('x', { assignmentId: `id-${i}`, metrics: { rating: i } });
      for (let i = 0; i < 6; i++) client.log('x', { variantKey: 'A', metrics: { i } });
      assert.equal(await client.flush(200), false, 'not delivered within its timeout: flush says so');
      const lost = await client.close(200);
      const tried = requests.seen.length;
      const arrived = stand.arrivals.length;
      const warnsAtClose = logger.warns.length;
      assert.equal(lost, 30);
      assert.equal(client.stats().failed, 30);
      assert.deepEqual(
        logger.warns.filter((w) => w.includes('closed with')),
        ['[agentsplit] closed with 30 item(s) not delivered within 200 ms'],
      );
      assert.ok(tried > 0, 'the server was tried before close');
      await sleep(1500); // many retry periods: a worker still running would have tried again
      assert.equal(requests.seen.length, tried, 'no request made after close resolved');
      assert.equal(stand.arrivals.length, arrived, 'none arrived either');
      assert.deepEqual(logger.warns.slice(warnsAtClose), [], 'no retry said after close');
    } finally {
      requests.restore();
      if (kind === 'slow') await stand.close();
    }
  });
}
