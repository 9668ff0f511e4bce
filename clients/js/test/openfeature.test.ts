// The OpenFeature provider through the published @openfeature/server-sdk, as an application uses it, against
// a real server: the server's variant for sticky users, exposures counted, the code default with the spec's
// error codes, primitive flags by the payload's `value`, track() read back as a result, and fail-open.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OpenFeature } from '@openfeature/server-sdk';
import { AgentSplit, AgentSplitProvider } from '../src/index.js';
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
  await OpenFeature.close();
  await server?.stop();
});

async function exposures(slug: string): Promise<Record<string, number>> {
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  assert.equal(analysis.status, 200);
  return analysis.body.exposures;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((s, n) => s + n, 0);

test('object flags answer the server-assigned variant and payload for 2,000 sticky users; exposures counted', async () => {
  const slug = await createExperiment(server, 'of-sticky', {
    variants: [
      { key: 'A', trafficPercent: 30, payload: { prompt: 'a', temperature: 0.1 } },
      { key: 'B', trafficPercent: 70, payload: { prompt: 'b', temperature: 0.9 } },
    ],
  });
  const logger = memoryLogger();
  const provider = new AgentSplitProvider({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  await OpenFeature.setProviderAndWait('sticky', provider);
  const of = OpenFeature.getClient('sticky');
  const remote = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  try {
    const users = Array.from({ length: 2000 }, (_, i) => (i % 7 === 0 ? `ü-${i}-日本` : `of-user-${i}`));
    const counts: Record<string, number> = { A: 0, B: 0 };
    const differ: string[] = [];
    for (const [i, u] of users.entries()) {
      const d = await of.getObjectDetails(slug, { prompt: 'default' }, { targetingKey: u, plan: 'pro', i });
      assert.equal(d.reason, 'SPLIT');
      assert.equal(d.errorCode, undefined);
      assert.equal(d.flagMetadata.experimentVersion, 1);
      assert.match(String(d.flagMetadata.assignmentId), /\./);
      counts[d.variant!]!++;
      if (i % 4 === 0) {
        const r = await remote.assign(slug, u);
        assert.equal(r.source, 'server');
        if (r.variant !== d.variant) differ.push(`${u}: provider ${d.variant}, server ${r.variant}`);
        assert.deepEqual(d.value, r.payload);
        counts[r.variant]!++;
      }
    }
    assert.deepEqual(differ, []);
    assert.ok(counts.A! > 400 && counts.B! > 1200, `weights followed: ${JSON.stringify(counts)}`);
    assert.equal(await provider.client.flush(30_000), true);
    assert.equal(provider.client.stats().failed, 0);
    // Every evaluation is one exposure, counted with the server's own assigns.
    assert.deepEqual(await exposures(slug), counts);
    assert.deepEqual(logger.warns, []);
    assert.deepEqual(logger.errors, []);
  } finally {
    await remote.close();
  }
});

test('unknown, draft and paused flags answer the code default with FLAG_NOT_FOUND; no targetingKey: TARGETING_KEY_MISSING; no exposure', async () => {
  const running = await createExperiment(server, 'of-running');
  const paused = await createExperiment(server, 'of-paused');
  const draft = await server.api('POST', '/experiments', {
    slug: 'of-draft',
    status: 'draft',
    variants: [
      { key: 'A', trafficPercent: 50, payload: { prompt: 'a' } },
      { key: 'B', trafficPercent: 50, payload: { prompt: 'b' } },
    ],
  });
  assert.equal(draft.status, 201);
  const client = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger: memoryLogger(),
  });
  await OpenFeature.setProviderAndWait('errors', new AgentSplitProvider(client));
  const of = OpenFeature.getClient('errors');
  try {
    const before = await of.getObjectDetails(paused, { prompt: 'code' }, { targetingKey: 'u1' });
    assert.equal(before.reason, 'SPLIT');
    assert.equal((await server.api('PATCH', `/experiment/${paused}`, { status: 'paused' })).status, 200);
    await client.refreshDefinitions();
    for (const slug of ['no-such-flag', 'of-draft', paused]) {
      const d = await of.getObjectDetails(slug, { prompt: 'code' }, { targetingKey: 'u1' });
      assert.deepEqual(d.value, { prompt: 'code' }, slug);
      assert.equal(d.reason, 'ERROR');
      assert.equal(d.errorCode, 'FLAG_NOT_FOUND');
      assert.match(
        d.errorMessage ?? '',
        new RegExp(`experiment ${slug} is not among the running experiments`),
      );
      assert.equal(d.variant, undefined);
    }
    const missing = await of.getObjectDetails(running, { prompt: 'code' });
    assert.deepEqual(missing.value, { prompt: 'code' });
    assert.equal(missing.errorCode, 'TARGETING_KEY_MISSING');
    assert.equal(
      (await of.getObjectDetails(running, {}, { targetingKey: '' })).errorCode,
      'TARGETING_KEY_MISSING',
    );
    const refused = await of.getObjectDetails(running, { prompt: 'code' }, { targetingKey: 'a\u0000b' });
    assert.equal(refused.errorCode, 'INVALID_CONTEXT');
    assert.match(refused.errorMessage ?? '', /contains U\+0000/);
    // A client without local evaluation: the default, saying why.
    const remoteOnly = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: memoryLogger() });
    await OpenFeature.setProviderAndWait('remote-only', new AgentSplitProvider(remoteOnly));
    const notLocal = await OpenFeature.getClient('remote-only').getObjectDetails(
      running,
      { prompt: 'code' },
      {
        targetingKey: 'u1',
      },
    );
    assert.deepEqual(notLocal.value, { prompt: 'code' });
    assert.equal(notLocal.errorCode, 'GENERAL');
    assert.match(notLocal.errorMessage ?? '', /the client was made without local: true/);
    await remoteOnly.close();
    assert.equal(await client.flush(), true);
    assert.equal(sum(await exposures(running)), 0, 'an error records no exposure');
    assert.equal(sum(await exposures(paused)), 1, 'only the evaluation before the pause');
  } finally {
    await client.close();
  }
});

test('boolean, string and number flags read the payload field "value"; otherwise TYPE_MISMATCH and no exposure', async () => {
  const slug = await createExperiment(server, 'of-primitive', {
    variants: [
      { key: 'on', trafficPercent: 100, payload: { value: true, label: 'x' } },
      { key: 'off', trafficPercent: 0, payload: { value: false, label: 'y' } },
    ],
  });
  const number = await createExperiment(server, 'of-number', {
    variants: [{ key: 'T', trafficPercent: 100, payload: { value: 0.7 } }],
  });
  const bare = await createExperiment(server, 'of-bare', {
    variants: [{ key: 'P', trafficPercent: 100, payload: { prompt: 'p' } }],
  });
  const provider = new AgentSplitProvider({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    logger: memoryLogger(),
  });
  await OpenFeature.setProviderAndWait('types', provider);
  const of = OpenFeature.getClient('types');
  const ctx = { targetingKey: 'typed-user' };
  const b = await of.getBooleanDetails(slug, false, ctx);
  assert.equal(b.value, true);
  assert.equal(b.variant, 'on');
  assert.equal(b.reason, 'SPLIT');
  assert.equal(await of.getNumberValue(number, 1, ctx), 0.7);
  assert.deepEqual(await of.getObjectValue(slug, {}, ctx), { value: true, label: 'x' });
  const s = await of.getStringDetails(slug, 'code', ctx);
  assert.equal(s.value, 'code');
  assert.equal(s.errorCode, 'TYPE_MISMATCH');
  assert.match(s.errorMessage ?? '', /no string field "value"/);
  const n = await of.getBooleanDetails(bare, true, ctx);
  assert.equal(n.value, true);
  assert.equal(n.errorCode, 'TYPE_MISMATCH');
  assert.equal(await provider.client.flush(), true);
  assert.deepEqual(await exposures(slug), { on: 2, off: 0 }, 'the boolean and the object, not the string');
  assert.deepEqual(await exposures(bare), { P: 0 });
});

test('track() becomes a logged result on the last assignment: value as the metric, numbers as metrics', async () => {
  const first = await createExperiment(server, 'of-track-1');
  const second = await createExperiment(server, 'of-track-2');
  const logger = memoryLogger();
  const provider = new AgentSplitProvider({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger });
  await OpenFeature.setProviderAndWait('track', provider);
  const of = OpenFeature.getClient('track');
  const given: Record<string, { variant: string; assignmentId: string }> = {};
  for (let i = 0; i < 20; i++) {
    const targetingKey = `rater-${i}`;
    const since = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    const d = await of.getObjectDetails(first, {}, { targetingKey, plan: 'pro', since });
    given[targetingKey] = { variant: d.variant!, assignmentId: String(d.flagMetadata.assignmentId) };
    of.track(
      'rating',
      { targetingKey, plan: 'pro' },
      { value: 1 + (i % 5), tokens: 100 + i, note: 'ok', flagKey: first },
    );
  }
  // Without a flagKey: every flag evaluated for the user (here two).
  const both = await of.getObjectDetails(second, {}, { targetingKey: 'rater-0' });
  of.track('converted', { targetingKey: 'rater-0' });
  // Nothing to attach to: a warning, no result, no exception.
  of.track('rating', { targetingKey: 'never-evaluated' }, { value: 3 });
  of.track('rating', {}, { value: 3 });
  of.track('', { targetingKey: 'rater-1' }, { value: 3 });
  assert.equal(await provider.client.flush(), true);
  assert.equal(provider.client.stats().failed, 0);

  const results = await allResults(server, first);
  const ratings = results.filter((r) => r.metrics.rating !== undefined);
  assert.equal(ratings.length, 20);
  for (const r of ratings) {
    const i = Number(r.userId.slice('rater-'.length));
    assert.equal(r.assignmentId, given[r.userId]!.assignmentId);
    assert.equal(r.variantKey, given[r.userId]!.variant);
    assert.deepEqual(r.metrics, { rating: 1 + (i % 5), tokens: 100 + i });
    assert.deepEqual(r.output, { note: 'ok' });
    assert.deepEqual(r.context, { plan: 'pro' });
    // The evaluation context went with the exposure, its date as ISO 8601.
    assert.deepEqual(r.assignmentContext, { plan: 'pro', since: '2026-01-02T03:04:05.000Z' });
  }
  const converted = results.filter((r) => r.metrics.converted !== undefined);
  assert.deepEqual(
    converted.map((r) => [r.userId, r.assignmentId, r.metrics]),
    [['rater-0', given['rater-0']!.assignmentId, { converted: true }]],
  );
  const onSecond = await allResults(server, second);
  assert.deepEqual(
    onSecond.map((r) => [r.userId, r.assignmentId, r.metrics]),
    [['rater-0', both.flagMetadata.assignmentId, { converted: true }]],
  );
  const analysis = await server.api('GET', `/experiment/${first}/analysis?metrics=rating`);
  const rating = (analysis.body.metrics as any[]).find((m) => m.name === 'rating');
  assert.equal(
    (rating.variants as any[]).reduce((s, v) => s + v.n, 0),
    20,
  );
  assert.match(
    logger.warns.join('\n'),
    /track rating: this provider answered no variant of any flag to this targetingKey/,
  );
  assert.match(logger.warns.join('\n'), /track rating: no targetingKey in the context/);
  assert.match(logger.warns.join('\n'), /the event name must be a non-empty string/);
});

test('fail-open: a server that is down gives the code default, never an exception; definitions kept once loaded', async () => {
  const logger = memoryLogger();
  // Nothing listens on the port: initialize still resolves, every evaluation is the code default.
  const down = await startServer();
  const downUrl = down.baseUrl;
  await down.stop();
  const provider = new AgentSplitProvider({ baseUrl: downUrl, apiKey: ROOT_KEY, logger, timeoutMs: 500 });
  await OpenFeature.setProviderAndWait('down', provider);
  const of = OpenFeature.getClient('down');
  const d = await of.getObjectDetails('anything', { prompt: 'code' }, { targetingKey: 'u' });
  assert.deepEqual(d.value, { prompt: 'code' });
  assert.equal(d.errorCode, 'PROVIDER_NOT_READY');
  assert.equal(await of.getBooleanValue('anything', true, { targetingKey: 'u' }), true);
  of.track('rating', { targetingKey: 'u' }, { value: 1 });
  assert.match(logger.warns.join('\n'), /GET \/experiments\/definitions failed/);

  // Loaded, then the server dies: evaluation goes on from the definitions kept; close is bounded.
  const other = await startServer();
  try {
    const slug = await createExperiment(other, 'of-outage');
    const kept = new AgentSplitProvider({
      baseUrl: other.baseUrl,
      apiKey: ROOT_KEY,
      logger,
      timeoutMs: 500,
      definitionsRefreshMs: 100,
      flushTimeoutMs: 1000,
    });
    await OpenFeature.setProviderAndWait('outage', kept);
    const client = OpenFeature.getClient('outage');
    await other.kill();
    await kept.client.refreshDefinitions();
    const live = await client.getObjectDetails(slug, { prompt: 'code' }, { targetingKey: 'u' });
    assert.equal(live.reason, 'SPLIT');
    client.track('rating', { targetingKey: 'u' }, { value: 5 });
    await OpenFeature.clearProviders();
    assert.equal(kept.client.stats().closed, true);
    assert.ok(kept.client.stats().failed >= 2, 'the exposure and the result counted as not delivered');
  } finally {
    await other.stop();
  }
});
