// Local evaluation against a real server: the same sticky answer as the server for 10,000 users, ids the
// server accepts, exposures counted, feedback and log by a local id, ETag/304, stale definitions kept.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assignmentIdFor, readAssignmentId } from '../src/conformance.js';
import { Delivery } from '../src/delivery.js';
import { AgentSplit, type Assignment } from '../src/index.js';
import { Warnings } from '../src/warnings.js';
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

async function definitions(): Promise<any[]> {
  return (await server.api('GET', '/experiments/definitions')).body.experiments;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

test('local sticky assignment equals the server for 10,000 users; its ids are the server form', async () => {
  const slug = await createExperiment(server, 'local-sticky', {
    variants: [
      { key: 'A', trafficPercent: 20, payload: { prompt: 'a' } },
      { key: 'B', trafficPercent: 30, payload: { prompt: 'b' } },
      { key: 'C', trafficPercent: 50, payload: { prompt: 'c' } },
    ],
  });
  const logger = memoryLogger();
  // 10,001 exposures queued in one synchronous burst: a queue above the default 10,000 keeps them all.
  const local = new AgentSplit<{ prompt: string }>({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger,
    maxQueueSize: 20_000,
  });
  const remote = new AgentSplit<{ prompt: string }>({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  const key = (await definitions()).find((d) => d.slug === slug).assignmentIdKey as number;

  const users = Array.from({ length: 10_000 }, (_, i) => (i % 10 === 0 ? `usér-${i}-日本` : `user-${i}`));
  const first = await local.assign(slug, users[0]!);
  assert.equal(first.source, 'local');
  const locals = users.map((u) => local.assignLocal(slug, u));
  const remotes = await pool(users, 16, (u) => remote.assign(slug, u));
  const differ: string[] = [];
  for (let i = 0; i < users.length; i++) {
    const l = locals[i]!;
    const r = remotes[i]!;
    assert.equal(l.source, 'local');
    assert.equal(r.source, 'server');
    if (l.variant !== r.variant) differ.push(`${users[i]}: local ${l.variant}, server ${r.variant}`);
    assert.deepEqual(l.payload, r.payload);
    // Both ids say the same version, variant and user under the experiment's key.
    const li = readAssignmentId(l.assignmentId, key);
    const ri = readAssignmentId(r.assignmentId, key);
    assert.ok(li && ri, `ids readable: ${l.assignmentId} ${r.assignmentId}`);
    assert.deepEqual(li, ri);
  }
  assert.deepEqual(differ.slice(0, 5), []);
  const count = (v: string) => locals.filter((a) => a.variant === v).length;
  assert.ok(Math.abs(count('A') - 2000) < 200 && Math.abs(count('C') - 5000) < 250, 'weights followed');

  // Every local exposure is accepted and counted like the server's own.
  assert.equal(await local.flush(30_000), true);
  const stats = local.stats();
  assert.equal(stats.failed, 0);
  assert.equal(stats.dropped, 0);
  assert.equal(stats.delivered, 10_001);
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  const exposures = analysis.body.exposures as Record<string, number>;
  const total = Object.values(exposures).reduce((s, n) => s + n, 0);
  assert.equal(total, 20_001);
  for (const v of ['A', 'B', 'C']) {
    const server_ = remotes.filter((a) => a.variant === v).length;
    assert.equal(exposures[v], count(v) + server_ + (first.variant === v ? 1 : 0));
  }
  await Promise.all([local.close(), remote.close()]);
  assert.deepEqual(logger.errors, []);
  assert.deepEqual(logger.warns, []);
});

test('feedback and log by a locally made id work once its exposure is delivered', async () => {
  const slug = await createExperiment(server, 'local-feedback');
  const client = new AgentSplit<{ prompt: string }>({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger: memoryLogger(),
  });
  const assignments: Assignment<{ prompt: string }>[] = [];
  for (let i = 0; i < 20; i++) assignments.push(await client.assign(slug, `fb-${i}`, { context: { i } }));
  assert.ok(assignments.every((a) => a.source === 'local'));
  assert.equal(await client.flush(), true);
  for (const [i, a] of assignments.entries()) {
    await client.track(
      a,
      (run) => {
        run.metrics.tokens = i;
      },
      { input: { i } },
    );
    client.feedback(slug, { assignmentId: a.assignmentId, metrics: { thumbs_up: i % 4 !== 0 } });
  }
  assert.equal(await client.flush(), true);
  const stats = client.stats();
  assert.equal(stats.failed, 0);
  assert.equal(stats.delivered, 20 + 20 + 20);

  const results = await allResults(server, slug);
  assert.equal(results.length, 20);
  for (const r of results) {
    const a = assignments[r.input.i]!;
    assert.equal(r.assignmentId, a.assignmentId);
    assert.equal(r.variantKey, a.variant);
    assert.equal(r.knownVariant, true);
    assert.equal(r.assignedVariant ?? a.variant, a.variant, 'the id names the variant logged');
  }
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  const thumbs = (analysis.body.metrics as any[]).find((m) => m.name === 'thumbs_up');
  assert.ok(thumbs, 'feedback counted');
  assert.equal(
    (thumbs.variants as any[]).reduce((s, v) => s + v.n, 0),
    20,
  );
  const exposures = Object.values(analysis.body.exposures as Record<string, number>).reduce(
    (s, n) => s + n,
    0,
  );
  assert.equal(exposures, 20);
  await client.close();
});

test('definitions: 304 while unchanged, a new version after a change, a paused experiment answers the default', async () => {
  const slug = await createExperiment(server, 'local-etag');
  const statuses: number[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: any, init?: any) => {
    const res = await realFetch(input, init);
    if (String(input).endsWith('/experiments/definitions')) statuses.push(res.status);
    return res;
  }) as typeof fetch;
  try {
    const client = new AgentSplit({
      baseUrl: server.baseUrl,
      apiKey: ROOT_KEY,
      local: true,
      logger: memoryLogger(),
    });
    const a1 = await client.assign(slug, 'u-1');
    assert.equal(a1.source, 'local');
    assert.match(a1.assignmentId, /\.1\.[01]\./);
    await client.refreshDefinitions();
    assert.deepEqual(statuses, [200, 304]);

    const patched = await server.api('PATCH', `/experiment/${slug}`, {
      variants: [
        { key: 'A', trafficPercent: 0, payload: { prompt: 'a' } },
        { key: 'B', trafficPercent: 100, payload: { prompt: 'b2' } },
      ],
    });
    assert.equal(patched.status, 200);
    await client.refreshDefinitions();
    assert.equal(statuses[2], 200);
    const a2 = client.assignLocal(slug, 'u-1');
    assert.equal(a2.variant, 'B');
    assert.deepEqual(a2.payload, { prompt: 'b2' });
    assert.match(a2.assignmentId, /\.2\.1\./);

    assert.equal((await server.api('PATCH', `/experiment/${slug}`, { status: 'paused' })).status, 200);
    await client.refreshDefinitions();
    const a3 = client.assignLocal(slug, 'u-1', { default: { prompt: 'd' } });
    assert.equal(a3.source, 'default');
    assert.deepEqual(a3.payload, { prompt: 'd' });
    assert.equal(await client.flush(), true);
    assert.equal(client.stats().failed, 0);
    await client.close();
  } finally {
    globalThis.fetch = realFetch;
  }
});

test('random experiments assign locally by weight; their exposures are accepted', async () => {
  const slug = await createExperiment(server, 'local-random', {
    assignment: 'random',
    variants: [
      { key: 'A', trafficPercent: 10, payload: { prompt: 'a' } },
      { key: 'B', trafficPercent: 90, payload: { prompt: 'b' } },
    ],
  });
  const client = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger: memoryLogger(),
  });
  await client.refreshDefinitions();
  const picks = Array.from({ length: 2000 }, (_, i) => client.assignLocal(slug, `r-${i % 50}`).variant);
  const a = picks.filter((v) => v === 'A').length;
  assert.ok(a > 120 && a < 290, `A drawn ${a} of 2000`);
  assert.equal(await client.flush(), true);
  assert.equal(client.stats().failed, 0);
  assert.equal(client.stats().delivered, 2000);
  await client.close();
});

test('stale definitions are used while the server is down; with none at all, the default', async () => {
  const slug = await createExperiment(server, 'local-stale');
  const logger = memoryLogger();
  const client = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger,
    timeoutMs: 300,
    retryBaseMs: 100,
    retryMaxMs: 500,
  });
  const before = await client.assign(slug, 'stale-1');
  assert.equal(before.source, 'local');
  await server.kill();
  await client.refreshDefinitions();
  assert.match(logger.warns.join('\n'), /keeping the definitions we have/);
  const during = client.assignLocal(slug, 'stale-1');
  assert.equal(during.source, 'local');
  assert.equal(during.variant, before.variant);

  // A new client with no definitions: the default, within the timeout.
  const fresh = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    timeoutMs: 300,
    logger,
  });
  const t0 = performance.now();
  const none = await fresh.assign(slug, 'stale-1', { default: { prompt: 'd' } });
  assert.ok(performance.now() - t0 < 400);
  assert.equal(none.source, 'default');
  await fresh.close(50);

  await server.restart();
  assert.equal(await client.flush(15_000), true);
  assert.equal(client.stats().delivered, 2);
  await client.close();
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  assert.equal(
    Object.values(analysis.body.exposures as Record<string, number>).reduce((s, n) => s + n, 0),
    2,
  );
});

test('an exposure the server cannot place is rejected, warned about and dropped; the others stored', async () => {
  const slug = await createExperiment(server, 'local-reject');
  const d = (await definitions()).find((x) => x.slug === slug);
  const logger = memoryLogger();
  const warnings = new Warnings(logger);
  const delivery = new Delivery(
    {
      baseUrl: server.baseUrl,
      apiKey: ROOT_KEY,
      batchSize: 100,
      maxQueueSize: 100,
      flushIntervalMs: 1000,
      deliveryTimeoutMs: 5000,
      retryBaseMs: 100,
      retryMaxMs: 500,
    },
    warnings,
  );
  const at = Date.now();
  const good = assignmentIdFor(d.assignmentIdKey, d.version, 1, 'rj-1');
  const forged = `${good.slice(0, -8)}00000000`;
  for (const assignmentId of [good, forged, good.replace('.1.1.', '.9.1.')]) {
    delivery.enqueue({ kind: 'exposure', experiment: slug, assignmentId, context: undefined, at });
  }
  assert.equal(await delivery.flush(5000), true);
  delivery.stop();
  assert.equal(delivery.stats().delivered, 1);
  assert.equal(delivery.stats().failed, 2);
  assert.match(logger.warns.join('\n'), /rejected 2 of 3 exposure\(s\), e\.g\. #1: /);
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  assert.deepEqual(analysis.body.exposures, { A: 0, B: 1 });
});
