// 429 honoured: a key limited to 2 requests a second; batches wait at least Retry-After, keep their
// Idempotency-Key across retries, and every result arrives exactly once.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AgentSplit } from '../src/index.js';
import { allResults, createExperiment, memoryLogger, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

interface Sent {
  url: string;
  key: string | undefined;
  status: number;
  at: number;
  retryAfter: string | null;
}

test('429: retried no sooner than Retry-After, with the same Idempotency-Key, each result once', async () => {
  const slugs = [];
  for (let i = 0; i < 5; i++) slugs.push(await createExperiment(server, `limited-${i}`));
  const made = await server.api('POST', '/keys', {
    name: 'limited',
    scopes: ['assign', 'log'],
    rateLimitPerSecond: 2,
  });
  assert.equal(made.status, 201);
  const sent: Sent[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: any, init?: any) => {
    const res = await realFetch(input, init);
    const headers = init?.headers as Record<string, string> | undefined;
    sent.push({
      url: String(input),
      key: headers?.['idempotency-key'],
      status: res.status,
      at: performance.now(),
      retryAfter: res.headers.get('retry-after'),
    });
    return res;
  }) as typeof fetch;
  try {
    const logger = memoryLogger();
    const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: made.body.key, logger });
    // Over the limit, assign answers the default (a 429 is not retried on the caller's time).
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await client.assign(slugs[0]!, `u-${i}`, { default: { p: 1 } }));
    assert.ok(answers.some((a) => a.source === 'default'));
    assert.match(logger.warns.join('\n'), /429/);

    // Five experiments: five batches, at most two a second.
    for (const slug of slugs) {
      for (let k = 0; k < 3; k++) client.log(slug, { variantKey: 'A', input: { k }, metrics: { x: k } });
    }
    const t0 = performance.now();
    assert.equal(await client.flush(30_000), true);
    const took = performance.now() - t0;
    const stats = client.stats();
    await client.close();

    assert.equal(stats.delivered, 15);
    assert.equal(stats.failed, 0);
    assert.ok(stats.retries >= 2, `retries ${stats.retries}`);
    assert.ok(took >= 900, `five batches at two a second took ${took} ms`);
    const batches = sent.filter((s) => s.url.endsWith('/logs'));
    const limited = batches.filter((s) => s.status === 429);
    assert.ok(limited.length >= 2);
    for (const l of limited) {
      assert.ok(l.key, 'every batch carries an Idempotency-Key');
      const wait = Number(l.retryAfter) * 1000;
      const next = batches.find((s) => s.key === l.key && s.at > l.at);
      assert.ok(next, 'the same batch is sent again with the same key');
      assert.ok(
        next.at - l.at >= wait - 5,
        `retried after ${next.at - l.at} ms, Retry-After ${l.retryAfter} s`,
      );
    }
    assert.equal(new Set(batches.filter((s) => s.status === 200).map((s) => s.key)).size, 5);
    for (const slug of slugs) {
      const results = await allResults(server, slug);
      assert.deepEqual(results.map((r) => r.input.k).sort(), [0, 1, 2], slug);
    }
  } finally {
    globalThis.fetch = realFetch;
  }
});
