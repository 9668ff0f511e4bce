// OpenFeature remote evaluation (OFREP 0.3.0, issue 28, ADR 0029) against a real server: first through the
// published Node provider (@openfeature/server-sdk + @openfeature/ofrep-provider), not our own code,
// then raw HTTP for every status and error body the protocol names.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { type Client, OpenFeature } from '@openfeature/server-sdk';
import {
  API_KEY,
  type Api,
  assertUnauthorized,
  makeTempDir,
  type Response,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const ONE = '/ofrep/v1/evaluate/flags/';
const ALL = '/ofrep/v1/evaluate/flags';

let dir: string;
let rt: TestRuntime;
let api: Api;
let sticky: string;
let random: string;
let draft: string;
let paused: string;

/** The OFREP failure body: the protocol's fields plus this API's `error`, with the same words. */
function assertFailure(res: Response, status: number, code: string, key?: string, details?: RegExp): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json();
  const keys =
    key === undefined
      ? ['error', 'errorCode', 'errorDetails']
      : ['error', 'errorCode', 'errorDetails', 'key'];
  assert.deepEqual(Object.keys(body).sort(), keys, res.body);
  if (key !== undefined) assert.equal(body.key, key);
  assert.equal(body.errorCode, code);
  assert.equal(typeof body.errorDetails, 'string');
  assert.ok(body.errorDetails.length > 0);
  assert.equal(body.error, body.errorDetails);
  if (details) assert.match(body.errorDetails, details);
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const until = Date.now() + 20_000;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) assert.fail(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function exposures(slug: string): Promise<Record<string, number>> {
  const res = await api.get(`/experiment/${slug}/analysis`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().exposures;
}

const total = (e: Record<string, number>) => Object.values(e).reduce((a, b) => a + b, 0);

async function createKey(body: Record<string, unknown>): Promise<string> {
  const res = await api.post('/keys', body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().key;
}

before(async () => {
  dir = makeTempDir();
  rt = await startTestRuntime(dir, 'ofrep');
  api = rt.api;
  const variants = [
    { key: 'A', payload: { prompt: 'You are terse.', temperature: 0.2 }, trafficPercent: 50 },
    { key: 'B', payload: { prompt: 'You are verbose.', temperature: 0.9 }, trafficPercent: 50 },
  ];
  sticky = (await api.createExperiment({ slug: 'ofrep-sticky', assignment: 'sticky', variants })).slug;
  random = (await api.createExperiment({ slug: 'ofrep-random', variants })).slug;
  draft = (await api.createExperiment({ slug: 'ofrep-draft', status: 'draft', variants })).slug;
  paused = (await api.createExperiment({ slug: 'ofrep-paused', variants })).slug;
  await api.setStatus(paused, 'paused');
});

after(async () => {
  await OpenFeature.close();
  await rt?.close();
  removeTempDir(dir);
});

describe('OFREP through the published Node provider', { skip: SKIP_BACKEND }, () => {
  let client: Client;
  let baseUrl: string;

  before(async () => {
    baseUrl = `http://127.0.0.1:${api.port}`;
    await OpenFeature.setProviderAndWait(
      'good',
      new OFREPProvider({ baseUrl, headers: [['x-api-key', API_KEY]] }),
    );
    client = OpenFeature.getClient('good');
  });

  test('a sticky flag answers SPLIT with the variant assign gives, for 200 users', async () => {
    for (let i = 0; i < 200; i++) {
      const userId = `user-${i}`;
      const d = await client.getObjectDetails(
        sticky,
        { prompt: 'default' },
        { targetingKey: userId, plan: 'pro' },
      );
      const assigned = await api.assign(sticky, { userId });
      assert.equal(d.reason, 'SPLIT');
      assert.equal(d.errorCode, undefined);
      assert.equal(d.variant, assigned.variant, userId);
      assert.deepEqual(d.value, assigned.payload);
      assert.equal(d.flagMetadata.experimentVersion, 1);
      assert.equal(typeof d.flagMetadata.assignmentId, 'string');
    }
  });

  test('each evaluation records its exposure as assign does (counted in the analysis)', async () => {
    const before = total(await exposures(random));
    const seen: Record<string, number> = {};
    for (let i = 0; i < 40; i++) {
      const d = await client.getObjectDetails(random, {}, { targetingKey: `counted-${i}` });
      seen[d.variant!] = (seen[d.variant!] ?? 0) + 1;
    }
    const after = await waitFor(
      'exposures',
      () => exposures(random),
      (e) => total(e) >= before + 40,
    );
    assert.equal(total(after), before + 40);
    for (const [variant, n] of Object.entries(seen)) assert.ok((after[variant] ?? 0) >= n, variant);
  });

  test("the assignmentId in the flag's metadata is accepted by log and feedback", async () => {
    const d = await client.getObjectDetails(sticky, {}, { targetingKey: 'logger-1' });
    const assignmentId = d.flagMetadata.assignmentId as string;
    const log = await api.post(`/experiment/${sticky}/log`, {
      variantKey: d.variant,
      assignmentId,
      metrics: { rating: 4 },
    });
    assert.equal(log.statusCode, 200, log.body);
    const results = await api.allResults(sticky);
    const mine = results.find((r) => r.assignmentId === assignmentId);
    assert.ok(mine, 'the logged result is not listed');
    assert.equal(mine.variantKey, d.variant);
    const feedback = await api.post(`/experiment/${sticky}/feedback`, {
      assignmentId,
      metrics: { helpful: true },
    });
    assert.equal(feedback.statusCode, 200, feedback.body);
    assert.equal(feedback.json().success, true);
  });

  test('draft, paused and unknown flags answer the code default (FLAG_NOT_FOUND)', async () => {
    for (const key of [draft, paused, 'no-such-flag']) {
      const d = await client.getObjectDetails(key, { prompt: 'code default' }, { targetingKey: 'u' });
      assert.deepEqual(d.value, { prompt: 'code default' }, key);
      assert.equal(d.reason, 'ERROR');
      assert.equal(d.errorCode, 'FLAG_NOT_FOUND', key);
      assert.ok(d.errorMessage && d.errorMessage.length > 0);
    }
    const d = await client.getObjectDetails(paused, {}, { targetingKey: 'u' });
    assert.match(d.errorMessage!, /is paused/);
  });

  test('no targetingKey: the code default with TARGETING_KEY_MISSING', async () => {
    const d = await client.getObjectDetails(sticky, { x: 1 }, { plan: 'pro' });
    assert.deepEqual(d.value, { x: 1 });
    assert.equal(d.errorCode, 'TARGETING_KEY_MISSING');
  });

  test('a wrong key: the code default, the provider reporting an error (401)', async () => {
    await OpenFeature.setProviderAndWait(
      'wrong',
      new OFREPProvider({ baseUrl, headers: { 'x-api-key': 'wrong-key' } }),
    );
    const d = await OpenFeature.getClient('wrong').getObjectDetails(
      sticky,
      { k: 'default' },
      { targetingKey: 'u' },
    );
    assert.deepEqual(d.value, { k: 'default' });
    assert.equal(d.reason, 'ERROR');
    assert.equal(d.errorCode, 'GENERAL');
  });

  test('over the rate limit: the code default, and the provider waits out Retry-After', async () => {
    const key = await createKey({ name: 'provider-slow', scopes: ['assign'], rateLimitPerSecond: 2 });
    await OpenFeature.setProviderAndWait(
      'slow',
      new OFREPProvider({ baseUrl, headers: { 'x-api-key': key } }),
    );
    const slow = OpenFeature.getClient('slow');
    const reasons: string[] = [];
    for (let i = 0; i < 4; i++) {
      const d = await slow.getObjectDetails(sticky, { k: 'default' }, { targetingKey: `slow-${i}` });
      reasons.push(d.reason ?? '');
      if (d.reason === 'ERROR') assert.deepEqual(d.value, { k: 'default' });
    }
    assert.deepEqual(reasons.slice(0, 2), ['SPLIT', 'SPLIT']);
    assert.deepEqual(reasons.slice(2), ['ERROR', 'ERROR']);
    const paused = await slow.getObjectDetails(sticky, {}, { targetingKey: 'slow-9' });
    assert.match(paused.errorMessage ?? '', /TooManyRequests/);
  });

  test('a key sent as Authorization: Bearer (headersFactory) works as x-api-key does', async () => {
    await OpenFeature.setProviderAndWait(
      'bearer',
      new OFREPProvider({ baseUrl, headersFactory: () => ({ Authorization: `Bearer ${API_KEY}` }) }),
    );
    const d = await OpenFeature.getClient('bearer').getObjectDetails(sticky, {}, { targetingKey: 'user-3' });
    assert.equal(d.reason, 'SPLIT');
    assert.equal(d.variant, (await api.assign(sticky, { userId: 'user-3' })).variant);
  });

  test('quirk: an object flag read as a string is a TYPE_MISMATCH (use getObjectValue)', async () => {
    const d = await client.getStringDetails(sticky, 'fallback', { targetingKey: 'user-4' });
    assert.equal(d.value, 'fallback');
    assert.equal(d.errorCode, 'TYPE_MISMATCH');
    assert.deepEqual(
      await client.getObjectValue(sticky, {}, { targetingKey: 'user-4' }),
      (await api.assign(sticky, { userId: 'user-4' })).payload,
    );
  });
});

describe('OFREP over raw HTTP', { skip: SKIP_BACKEND }, () => {
  const evaluate = (key: string, body: unknown, apiKey?: string | null, headers?: Record<string, string>) =>
    api.call({ method: 'POST', url: `${ONE}${key}`, body, key: apiKey, headers });

  test('200: exactly {key, reason, variant, value, metadata: {experimentVersion, assignmentId, inExperiment}}', async () => {
    const res = await evaluate(sticky, { context: { targetingKey: 'raw-1', plan: 'pro' } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['key', 'reason', 'variant', 'value', 'metadata']);
    assert.equal(body.key, sticky);
    assert.equal(body.reason, 'SPLIT');
    assert.deepEqual(Object.keys(body.metadata), ['experimentVersion', 'assignmentId', 'inExperiment']);
    assert.equal(body.metadata.inExperiment, true);
    const assigned = await api.assign(sticky, { userId: 'raw-1' });
    assert.equal(body.variant, assigned.variant);
    assert.deepEqual(body.value, assigned.payload);
    // The same id form as assign's: the exposure carries the context minus targetingKey.
    assert.equal(body.metadata.assignmentId.split('.').length, 5);
    const stored = await waitFor(
      'the exposure',
      () => rt.exposuresOf(sticky),
      (list) => list.some((e) => e.assignmentId === body.metadata.assignmentId),
    );
    const exposure = stored.find((e) => e.assignmentId === body.metadata.assignmentId)!;
    assert.equal(exposure.userId, 'raw-1');
    assert.deepEqual(exposure.context, { plan: 'pro' });
  });

  test('404 FLAG_NOT_FOUND saying which: unknown, draft, paused', async () => {
    assertFailure(
      await evaluate('nope', { context: { targetingKey: 'u' } }),
      404,
      'FLAG_NOT_FOUND',
      'nope',
      /no experiment/,
    );
    assertFailure(
      await evaluate(draft, { context: { targetingKey: 'u' } }),
      404,
      'FLAG_NOT_FOUND',
      draft,
      /is draft/,
    );
    assertFailure(
      await evaluate(paused, { context: { targetingKey: 'u' } }),
      404,
      'FLAG_NOT_FOUND',
      paused,
      /is paused/,
    );
  });

  test('a flag key the router cannot use still answers in OFREP shape: too long (404), bad percent-encoding (400)', async () => {
    assertFailure(
      await evaluate('y'.repeat(1100), { context: { targetingKey: 'u' } }),
      404,
      'FLAG_NOT_FOUND',
      '',
      /slug that long/,
    );
    assertFailure(
      await evaluate('%E2%82', { context: { targetingKey: 'u' } }),
      400,
      'GENERAL',
      '',
      /percent-encoding/,
    );
    // Other routes keep the usual body.
    const other = await api.get(`/experiment/${'y'.repeat(1100)}`);
    assert.equal(other.statusCode, 404);
    assert.deepEqual(other.json(), { error: 'no experiment with a slug that long' });
  });

  test('400 TARGETING_KEY_MISSING: absent, empty, not a string', async () => {
    for (const context of [{}, { targetingKey: '' }, { targetingKey: 42 }, { targetingKey: null }]) {
      assertFailure(
        await evaluate(sticky, { context }),
        400,
        'TARGETING_KEY_MISSING',
        sticky,
        /targetingKey/,
      );
    }
    assertFailure(await evaluate(sticky, {}), 400, 'TARGETING_KEY_MISSING', sticky);
  });

  test('400 PARSE_ERROR for a body that is not JSON; INVALID_CONTEXT for a context that is not an object', async () => {
    const raw = await api.call({ method: 'POST', url: `${ONE}${sticky}`, raw: '{"context": {' });
    assertFailure(raw, 400, 'PARSE_ERROR', sticky);
    for (const context of [[], 'user', 7, null]) {
      assertFailure(await evaluate(sticky, { context }), 400, 'INVALID_CONTEXT', sticky, /context/);
    }
    assertFailure(await evaluate(sticky, ['not', 'an', 'object']), 400, 'INVALID_CONTEXT', sticky);
    const long = await evaluate(sticky, { context: { targetingKey: 'x'.repeat(513) } });
    assertFailure(long, 400, 'INVALID_CONTEXT', sticky, /at most 512/);
  });

  test('401 is exactly {"error":"Unauthorized"} (no key, wrong key, wrong bearer); Bearer works', async () => {
    assertUnauthorized(await evaluate(sticky, { context: { targetingKey: 'u' } }, null));
    assertUnauthorized(await evaluate(sticky, { context: { targetingKey: 'u' } }, 'wrong'));
    assertUnauthorized(
      await evaluate(sticky, { context: { targetingKey: 'u' } }, null, { authorization: 'Bearer wrong' }),
    );
    const res = await evaluate(sticky, { context: { targetingKey: 'u' } }, null, {
      authorization: `Bearer ${API_KEY}`,
    });
    assert.equal(res.statusCode, 200, res.body);
    const bulk = await api.call({
      method: 'POST',
      url: ALL,
      body: { context: { targetingKey: 'u' } },
      key: null,
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assert.equal(bulk.statusCode, 200, bulk.body);
  });

  test('403: a key without the assign scope; a key limited to other experiments (single and bulk)', async () => {
    const reader = await createKey({ name: 'reader', scopes: ['read'] });
    const refused = await evaluate(sticky, { context: { targetingKey: 'u' } }, reader);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(refused.json().error, /assign/);
    const limited = await createKey({ name: 'limited', scopes: ['assign'], experiments: [random] });
    const other = await evaluate(sticky, { context: { targetingKey: 'u' } }, limited);
    assert.equal(other.statusCode, 403, other.body);
    assert.equal(typeof other.json().error, 'string');
    assert.equal((await evaluate(random, { context: { targetingKey: 'u' } }, limited)).statusCode, 200);
    const bulk = await api.call({
      method: 'POST',
      url: ALL,
      body: { context: { targetingKey: 'u' } },
      key: limited,
    });
    assert.equal(bulk.statusCode, 200, bulk.body);
    assert.deepEqual(
      bulk.json().flags.map((f: { key: string }) => f.key),
      [random],
    );
  });

  test('429 with Retry-After for a key over its rate limit', async () => {
    const key = await createKey({ name: 'slow', scopes: ['assign'], rateLimitPerSecond: 2 });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await evaluate(sticky, { context: { targetingKey: 'u' } }, key);
      statuses.push(last.statusCode);
    }
    assert.ok(statuses.includes(429), statuses.join(','));
    const tooMany = last!;
    assert.equal(tooMany.statusCode, 429);
    assert.ok(Number(tooMany.headers['retry-after']) >= 1, String(tooMany.headers['retry-after']));
    assert.equal(typeof tooMany.json().error, 'string');
  });

  test('bulk: every running flag, the variant assign gives, no exposure recorded, ETag and 304', async () => {
    const userId = 'bulk-user-1';
    const ofUser = async () => (await rt.exposuresOf(sticky)).filter((e) => e.userId === userId).length;
    const res = await api.post(ALL, { context: { targetingKey: userId } });
    assert.equal(res.statusCode, 200, res.body);
    interface Flag {
      key: string;
      reason: string;
      variant: string;
      value: Record<string, unknown>;
      metadata: { experimentVersion: number; assignmentId: string };
    }
    const flags = res.json().flags as Flag[];
    assert.deepEqual(
      flags.map((f) => f.key),
      [random, sticky],
      'only running flags, by key',
    );
    const flag = flags.find((f) => f.key === sticky)!;
    assert.deepEqual(Object.keys(flag), ['key', 'reason', 'variant', 'value', 'metadata']);
    assert.equal(flag.reason, 'SPLIT');
    // Nothing recorded by the bulk evaluation itself.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await ofUser(), 0);

    const etag = res.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong tag');
    // Every poll answers the same bytes, the random flag included: in bulk it is drawn by the sticky hash,
    // so a page that polls never shows its user another variant (single evaluation still draws per call).
    for (let i = 0; i < 6; i++) {
      const poll = await api.call({
        method: 'POST',
        url: ALL,
        body: { context: { targetingKey: userId } },
        headers: { 'if-none-match': etag },
      });
      assert.equal(poll.statusCode, 304, `poll ${i}: ${poll.body}`);
    }
    const randomVariants = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const each = (await api.post(ALL, { context: { targetingKey: `spread-${i}` } })).json().flags as Flag[];
      const v = each.find((f) => f.key === random)!.variant;
      randomVariants.set(v, (randomVariants.get(v) ?? 0) + 1);
    }
    assert.equal(randomVariants.size, 2, `both variants drawn across users: ${[...randomVariants]}`);
    for (const [v, n] of randomVariants) assert.ok(n > 60 && n < 140, `${v}: ${n} of 200 at 50/50`);
    // A key that sees only the sticky flag gets its own answer, also 304 when unchanged.
    const stickyOnly = await createKey({ name: 'sticky-only', scopes: ['assign'], experiments: [sticky] });
    const first = await api.call({
      method: 'POST',
      url: ALL,
      body: { context: { targetingKey: userId } },
      key: stickyOnly,
    });
    assert.equal(first.statusCode, 200, first.body);
    const again = await api.call({
      method: 'POST',
      url: ALL,
      body: { context: { targetingKey: userId } },
      key: stickyOnly,
      headers: { 'if-none-match': first.headers.etag as string },
    });
    assert.equal(again.statusCode, 304, again.body);
    assert.equal(again.body, '');
    const other = await api.call({
      method: 'POST',
      url: ALL,
      body: { context: { targetingKey: 'bulk-user-2' } },
      key: stickyOnly,
      headers: { 'if-none-match': first.headers.etag as string },
    });
    assert.equal(other.statusCode, 200, 'another user, another answer');

    // The first read posts the id to /exposures: recorded once, like assign's, for the variant shown.
    const assigned = await api.assign(sticky, { userId });
    assert.equal(flag.variant, assigned.variant);
    const post = () =>
      api.post('/exposures', {
        exposures: [
          { experiment: sticky, assignmentId: flag.metadata.assignmentId, context: { plan: 'pro' } },
        ],
      });
    const posted = await post();
    assert.equal(posted.statusCode, 200, posted.body);
    assert.deepEqual(posted.json(), { success: true, accepted: 1, rejected: [] });
    assert.equal((await post()).statusCode, 200);
    const list = await rt.exposuresOf(sticky);
    const mine = list.filter((e) => e.assignmentId === flag.metadata.assignmentId);
    assert.equal(mine.length, 1, 'posted twice, counted once');
    assert.equal(mine[0]!.userId, userId);
    assert.equal(mine[0]!.variantKey, flag.variant);
    // And log accepts it.
    const log = await api.post(`/experiment/${sticky}/log`, {
      variantKey: flag.variant,
      assignmentId: flag.metadata.assignmentId,
      metrics: { rating: 5 },
    });
    assert.equal(log.statusCode, 200, log.body);
  });

  test('bulk errors: TARGETING_KEY_MISSING, PARSE_ERROR, INVALID_CONTEXT, without a key field', async () => {
    assertFailure(await api.post(ALL, { context: {} }), 400, 'TARGETING_KEY_MISSING');
    assertFailure(await api.call({ method: 'POST', url: ALL, raw: 'nope' }), 400, 'PARSE_ERROR');
    assertFailure(await api.post(ALL, { context: 'x' }), 400, 'INVALID_CONTEXT');
    assertUnauthorized(
      await api.call({ method: 'POST', url: ALL, body: { context: { targetingKey: 'u' } }, key: 'bad' }),
    );
  });
});

describe('OFREP in the OpenAPI document', { skip: SKIP_BACKEND }, () => {
  test('both routes, with OFREP schemas and either key (x-api-key or bearer)', async () => {
    const res = await api.get('/openapi.json', null);
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.deepEqual(doc.components.securitySchemes.bearer, {
      type: 'http',
      scheme: 'bearer',
      description: 'Authorization: Bearer <key>',
    });
    const ref = (r: { content: Record<string, { schema: { $ref?: string } }> }) =>
      r.content['application/json']!.schema.$ref;
    const single = doc.paths['/ofrep/v1/evaluate/flags/{key}'].post;
    const bulk = doc.paths['/ofrep/v1/evaluate/flags'].post;
    for (const op of [single, bulk]) assert.deepEqual(op.security, [{ apiKey: [] }, { bearer: [] }]);
    assert.equal(ref(single.responses['200']), '#/components/schemas/OfrepEvaluation');
    assert.equal(ref(single.responses['404']), '#/components/schemas/OfrepFlagNotFound');
    assert.equal(ref(single.responses['400']), '#/components/schemas/OfrepEvaluationFailure');
    assert.equal(ref(bulk.responses['200']), '#/components/schemas/OfrepBulkEvaluation');
    assert.ok(bulk.responses['304'], 'the bulk route documents its 304');
    assert.deepEqual(doc.components.schemas.OfrepEvaluationFailure.properties.errorCode.enum, [
      'PARSE_ERROR',
      'TARGETING_KEY_MISSING',
      'INVALID_CONTEXT',
      'GENERAL',
    ]);
  });
});
