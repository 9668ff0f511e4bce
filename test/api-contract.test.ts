// The spec's two endpoints (assign, log, logs) and its error table, through app.inject on a real database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  API_KEY,
  type Api,
  assertAssignmentId,
  assertError,
  assertUnauthorized,
  assertUuidV7,
  jsonColumn,
  makeTempDir,
  type Result,
  removeTempDir,
  SKIP_BACKEND,
  SQLITE_ONLY,
  seededRandom,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
  withRuntime,
} from './helpers/app.js';

let dir: string;
let runtime: TestRuntime;
let api: Api;
/** A running A/B experiment most tests can share. */
let slug: string;

before(async () => {
  dir = makeTempDir();
  if (SKIP_BACKEND) return; // the suites below are skipped too
  // These suites send hundreds of requests without a valid key from one address on purpose: the
  // failed-authentication throttle (ADR 0017; tested in api-rate-limits) would answer them 429.
  runtime = await startTestRuntime(dir, 'contract', { rateLimits: { authFailureLimit: 100_000 } });
  api = runtime.api;
  slug = (await api.createExperiment()).slug;
});

after(async () => {
  await runtime?.close();
  removeTempDir(dir);
});

async function experimentId(experimentSlug: string): Promise<number> {
  const [row] = await runtime.rows<{ id: number }>(
    sql`SELECT id FROM experiments WHERE slug = ${experimentSlug}`,
  );
  return Number(row!.id);
}

describe('authentication', { skip: SKIP_BACKEND }, () => {
  const keyedCalls = () => [
    { method: 'POST' as const, url: `/experiment/${slug}/assign`, body: { userId: 'u' } },
    { method: 'POST' as const, url: `/experiment/${slug}/log`, body: { variantKey: 'A' } },
    { method: 'POST' as const, url: `/experiment/${slug}/logs`, body: { results: [{ variantKey: 'A' }] } },
    { method: 'GET' as const, url: '/experiments' },
    { method: 'GET' as const, url: `/experiment/${slug}` },
    { method: 'GET' as const, url: `/experiment/${slug}/results` },
    { method: 'GET' as const, url: `/experiment/${slug}/results/export` },
    { method: 'PATCH' as const, url: `/experiment/${slug}`, body: { name: 'x' } },
    { method: 'DELETE' as const, url: `/experiment/${slug}` },
  ];

  test('a request without x-api-key is 401 with exactly {"error":"Unauthorized"} on every endpoint', async () => {
    for (const call of keyedCalls()) {
      assertUnauthorized(await api.call({ ...call, key: null }));
    }
    const created = await api.call({ method: 'POST', url: '/experiments', body: { slug: 'x' }, key: null });
    assertUnauthorized(created);
  });

  test('a wrong x-api-key is 401 with exactly {"error":"Unauthorized"}', async () => {
    // (A key with a trailing space is the right key: HTTP trims header values before anyone reads them.)
    const wrong = ['wrong', '', API_KEY.toUpperCase(), API_KEY.slice(0, -1), `${API_KEY}x`, `${API_KEY} x`];
    for (const key of wrong) {
      for (const call of keyedCalls()) assertUnauthorized(await api.call({ ...call, key }));
    }
  });

  test('the key is checked before anything else: unknown slug without a key is 401, not 404', async () => {
    assertUnauthorized(await api.post('/experiment/no-such-slug/assign', { userId: 'u' }, null));
    assertUnauthorized(await api.post('/experiment/no-such-slug/log', { variantKey: 'A' }, null));
    assertUnauthorized(await api.post('/experiment/no-such-slug/assign', { userId: 'u' }, 'wrong'));
    assertUnauthorized(await api.post('/experiment/no-such-slug/log', { variantKey: 'A' }, 'wrong'));
  });

  test('the key is checked before routing: an unknown route without a key is 401, not 404', async () => {
    assertUnauthorized(await api.get('/no/such/route', null));
    assertUnauthorized(await api.post('/experiment/x/unknown', {}, null));
    assertUnauthorized(await api.call({ method: 'DELETE', url: '/experiments', key: null }));
  });

  test('the key is checked before the body: malformed or invalid bodies without a key are 401', async () => {
    assertUnauthorized(
      await api.call({ method: 'POST', url: `/experiment/${slug}/assign`, raw: '{nope', key: null }),
    );
    assertUnauthorized(
      await api.call({ method: 'POST', url: `/experiment/${slug}/log`, raw: '[]', key: null }),
    );
    assertUnauthorized(await api.post(`/experiment/${slug}/assign`, { userId: 5 }, null));
  });

  test('with the right key an unknown route is 404 {"error"} naming the route', async () => {
    assertError(await api.get('/no/such/route'), 404, /\/no\/such\/route/);
  });
});

describe('POST /experiment/:slug/assign: the error table', { skip: SKIP_BACKEND }, () => {
  const assignUrl = () => `/experiment/${slug}/assign`;

  test('malformed JSON → 400 saying the body is not valid JSON', async () => {
    for (const raw of ['{', '{"userId": "u",}', "{'userId': 'u'}", '{"userId": "u"} trailing', 'undefined']) {
      assertError(await api.postRaw(assignUrl(), raw), 400, /JSON/);
    }
  });

  test('a body that is not a JSON object ([], "x", null, 5, true) → 400', async () => {
    for (const raw of ['[]', '[{"userId":"u"}]', '"x"', 'null', '5', 'true']) {
      assertError(await api.postRaw(assignUrl(), raw), 400, /body/);
    }
  });

  test('an empty body → 400', async () => {
    assertError(await api.postRaw(assignUrl(), ''), 400, /body/);
  });

  test('missing userId → 400 naming userId', async () => {
    assertError(await api.post(assignUrl(), {}), 400, /userId/);
    assertError(await api.post(assignUrl(), { context: { a: 1 } }), 400, /userId/);
  });

  test('userId of the wrong type (5, true, null, {}, []) → 400 naming userId', async () => {
    for (const userId of [5, 0, true, null, {}, [], ['u']]) {
      assertError(await api.post(assignUrl(), { userId }), 400, /userId/);
    }
  });

  test('an empty-string userId → 400 naming userId', async () => {
    assertError(await api.post(assignUrl(), { userId: '' }), 400, /userId/);
  });

  test('context that is not a JSON object ([], "x", 5, null, true) → 400 naming context', async () => {
    for (const context of [[], ['a'], 'x', 5, null, true]) {
      assertError(await api.post(assignUrl(), { userId: 'u', context }), 400, /context/);
    }
  });

  test('unknown slug → 404 naming the slug', async () => {
    assertError(
      await api.post('/experiment/no-such-experiment/assign', { userId: 'u' }),
      404,
      /no-such-experiment/,
    );
  });

  for (const status of ['draft', 'paused', 'completed', 'archived']) {
    test(`assign to an experiment that is ${status} → 404 saying its status and what to do`, async () => {
      const created = await api.createExperiment({ status: status === 'draft' ? 'draft' : 'running' });
      const path = { draft: [], paused: ['paused'], completed: ['completed'], archived: ['archived'] }[
        status
      ]!;
      for (const next of path) await api.setStatus(created.slug, next);
      const message = assertError(
        await api.post(`/experiment/${created.slug}/assign`, { userId: 'u' }),
        404,
        new RegExp(
          `experiment '${created.slug}' is ${status}: only a running or released experiment serves assignments`,
        ),
      );
      if (status === 'draft' || status === 'paused') assert.match(message, /start it with PATCH .*"running"/);
      else assert.match(message, /cannot run again; create a new experiment/);
    });
  }

  test('an experiment answers 404 again as soon as it is paused, and 200 once it runs again', async () => {
    const created = await api.createExperiment();
    await api.assign(created.slug);
    await api.setStatus(created.slug, 'paused');
    assertError(await api.post(`/experiment/${created.slug}/assign`, { userId: 'u' }), 404);
    await api.setStatus(created.slug, 'running');
    await api.assign(created.slug);
  });
});

describe('POST /experiment/:slug/assign: behaviour', { skip: SKIP_BACKEND }, () => {
  test('answers {variant, payload, assignmentId} with an assignmentId that starts with a UUIDv7', async () => {
    const res = await api.post(`/experiment/${slug}/assign`, { userId: 'user-42', context: { plan: 'pro' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json();
    // The specification's three fields first, then whether the unit entered (issue 35: it did, nothing limits it).
    assert.deepEqual(Object.keys(body), ['variant', 'payload', 'assignmentId', 'inExperiment']);
    assert.equal(body.inExperiment, true);
    assert.ok(['A', 'B'].includes(body.variant));
    assertAssignmentId(body.assignmentId);
  });

  test('assignmentIds are unique across calls', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 200; i++) ids.add((await api.assign(slug, { userId: 'same-user' })).assignmentId);
    assert.equal(ids.size, 200);
  });

  test('returns the variant payload exactly as configured (nested, unicode, "__proto__" key)', async () => {
    const payloadText =
      '{"prompt":"Réponds en 日本語 🚀\\n\\"quoted\\"","model":{"name":"m","temperature":0.7,"stop":["\\n",null]},' +
      '"__proto__":{"x":1},"empty":{},"list":[1,2.5,-3e-7,true,false,null],"nested":{"a":{"b":{"c":"d"}}}}';
    const payload = JSON.parse(payloadText);
    const created = await api.createExperiment({
      variants: [{ key: 'only', payload, trafficPercent: 100 }],
    });
    assert.deepEqual(created.variants[0]!.payload, payload);
    const assignment = await api.assign(created.slug);
    assert.equal(assignment.variant, 'only');
    assert.deepEqual(assignment.payload, payload);
    assert.ok(Object.hasOwn(assignment.payload, '__proto__'));
  });

  test('an injected random source picks exact variants (0 → first, 0.99 → last, in between by weight)', async () => {
    let draw = 0;
    await withRuntime(dir, 'exact-picks', { random: () => draw }, async (rt) => {
      const created = await rt.api.createExperiment({
        variants: [
          { key: 'A', payload: { n: 1 }, trafficPercent: 20 },
          { key: 'B', payload: { n: 2 }, trafficPercent: 30 },
          { key: 'C', payload: { n: 3 }, trafficPercent: 50 },
        ],
      });
      const expected: Array<[number, string]> = [
        [0, 'A'],
        [0.1, 'A'],
        [0.19, 'A'],
        [0.21, 'B'],
        [0.49, 'B'],
        [0.51, 'C'],
        [0.99, 'C'],
        [0.9999999999, 'C'],
      ];
      for (const [r, key] of expected) {
        draw = r;
        const assignment = await rt.api.assign(created.slug);
        assert.equal(assignment.variant, key, `random ${r}`);
        assert.deepEqual(assignment.payload, { n: key.charCodeAt(0) - 64 });
      }
    });
  });

  test('random mode: each call is an independent draw, so the same userId can get different variants', async () => {
    const draws = [0.1, 0.9, 0.1, 0.9];
    let i = 0;
    await withRuntime(dir, 'independent', { random: () => draws[i++ % draws.length]! }, async (rt) => {
      const created = await rt.api.createExperiment();
      const seen = [];
      for (let n = 0; n < 4; n++) seen.push((await rt.api.assign(created.slug, { userId: 'same' })).variant);
      assert.deepEqual(seen, ['A', 'B', 'A', 'B']);
    });
  });

  test('random mode follows trafficPercent (chi-square over 6000 seeded draws, p ≥ 0.001)', async () => {
    await withRuntime(dir, 'distribution', { random: seededRandom(20260101) }, async (rt) => {
      const weights = { A: 10, B: 30, C: 60 };
      const created = await rt.api.createExperiment({
        variants: Object.entries(weights).map(([key, trafficPercent]) => ({
          key,
          payload: {},
          trafficPercent,
        })),
      });
      const n = 6000;
      const counts: Record<string, number> = { A: 0, B: 0, C: 0 };
      for (let i = 0; i < n; i++) {
        const { variant } = await rt.api.assign(created.slug, { userId: `u${i}` });
        counts[variant] = (counts[variant] ?? 0) + 1;
      }
      let chiSquare = 0;
      for (const [key, w] of Object.entries(weights)) {
        const expected = (n * w) / 100;
        chiSquare += (counts[key]! - expected) ** 2 / expected;
      }
      // 13.816 is the 0.999 quantile of chi-square with 2 degrees of freedom.
      assert.ok(chiSquare < 13.816, `chi-square ${chiSquare} for ${JSON.stringify(counts)}`);
    });
  });

  test('random mode with the default Math.random gives every weighted variant a share', async () => {
    const created = await api.createExperiment();
    const counts: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const { variant } = await api.assign(created.slug, { userId: `u${i}` });
      counts[variant] = (counts[variant] ?? 0) + 1;
    }
    // P(a 50% variant gets fewer than 100 of 400) is below 1e-24: never a flake.
    assert.ok(counts.A! > 100 && counts.B! > 100, JSON.stringify(counts));
  });

  test('a 0% variant is never assigned, whatever the draw and wherever it sits', async () => {
    let draw = 0;
    await withRuntime(dir, 'zero-weight', { random: () => draw }, async (rt) => {
      const created = await rt.api.createExperiment({
        variants: [
          { key: 'zero-first', payload: {}, trafficPercent: 0 },
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'zero-middle', payload: {}, trafficPercent: 0 },
          { key: 'B', payload: {}, trafficPercent: 50 },
          { key: 'zero-last', payload: {}, trafficPercent: 0 },
        ],
      });
      const draws = [0, Number.MIN_VALUE, 0.5, 1 - Number.EPSILON, 0.9999999999999999];
      for (let i = 0; i < 1000; i++) draws.push(i / 1000);
      for (const r of draws) {
        draw = r;
        const { variant } = await rt.api.assign(created.slug);
        assert.ok(variant === 'A' || variant === 'B', `random ${r} gave ${variant}`);
      }
    });
    const created = await api.createExperiment({
      variants: [
        { key: 'never', payload: {}, trafficPercent: 0 },
        { key: 'always', payload: {}, trafficPercent: 100 },
      ],
    });
    for (let i = 0; i < 300; i++)
      assert.equal((await api.assign(created.slug, { userId: `u${i}` })).variant, 'always');
  });

  test('sticky mode: the same userId gets the same variant on every call', async () => {
    const created = await api.createExperiment({
      assignment: 'sticky',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 30 },
        { key: 'B', payload: {}, trafficPercent: 30 },
        { key: 'C', payload: {}, trafficPercent: 40 },
      ],
    });
    const seen = new Set<string>();
    for (let u = 0; u < 60; u++) {
      const userId = `user-${u}`;
      const first = (await api.assign(created.slug, { userId })).variant;
      seen.add(first);
      for (let i = 0; i < 10; i++) {
        const again = await api.assign(created.slug, { userId, context: { call: i } });
        assert.equal(again.variant, first, `user ${userId} call ${i}`);
      }
    }
    assert.equal(seen.size, 3, 'sixty users should reach every variant');
  });

  test('sticky mode buckets by the published v2 hash of seed + userId (seed defaults to the slug)', async () => {
    // hashV2('seed','a') = 0.0505, hashV2('seed','b') = 0.2696 (../shared/vectors/assignment-hash.json).
    const bySlug = await api.createExperiment({
      slug: 'seed',
      assignment: 'sticky',
      variants: [
        { key: 'low', payload: {}, trafficPercent: 25 },
        { key: 'high', payload: {}, trafficPercent: 75 },
      ],
    });
    assert.equal(bySlug.seed, 'seed');
    assert.equal((await api.assign('seed', { userId: 'a' })).variant, 'low');
    assert.equal((await api.assign('seed', { userId: 'b' })).variant, 'high');
    // hashV2('foo','def') = 0.2019 and hashV2('foo','ab') = 0.2575, with an explicit seed.
    const bySeed = await api.createExperiment({
      assignment: 'sticky',
      seed: 'foo',
      variants: [
        { key: 'first', payload: {}, trafficPercent: 20 },
        { key: 'second', payload: {}, trafficPercent: 5 },
        { key: 'third', payload: {}, trafficPercent: 75 },
      ],
    });
    assert.equal((await api.assign(bySeed.slug, { userId: 'def' })).variant, 'second');
    assert.equal((await api.assign(bySeed.slug, { userId: 'ab' })).variant, 'third');
  });

  test('the exposure is written with assignmentId, experiment, version, variant, userId, context and time', async () => {
    const contextText = '{"page":"checkout","nested":{"a":[1,{"b":"ü"}]},"__proto__":{"polluted":true}}';
    const res = await api.postRaw(
      `/experiment/${slug}/assign`,
      `{"userId":"exposed-user","context":${contextText}}`,
    );
    assert.equal(res.statusCode, 200, res.body);
    const assignment = res.json();
    await runtime.ingest.drain();
    const row = (await runtime.exposuresOf(slug)).find((e) => e.assignmentId === assignment.assignmentId);
    assert.ok(row, 'exposure not found');
    assert.equal(row.version, 1);
    assert.equal(row.variantKey, assignment.variant);
    assert.equal(row.userId, 'exposed-user');
    assert.deepEqual(row.context, JSON.parse(contextText));
    assert.ok(!Number.isNaN(Date.parse(row.createdAt)), `createdAt ${row.createdAt}`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('an assignment without context writes an exposure with a null context', async () => {
    const assignment = await api.assign(slug, { userId: 'no-context' });
    await runtime.ingest.drain();
    const rows = (await runtime.exposuresOf(slug)).filter((e) => e.assignmentId === assignment.assignmentId);
    assert.deepEqual(
      rows.map((e) => ({ context: e.context, userId: e.userId })),
      [{ context: null, userId: 'no-context' }],
    );
  });

  test('every assignment writes one exposure (countExposures)', async () => {
    const created = await api.createExperiment();
    for (let i = 0; i < 150; i++) await api.assign(created.slug, { userId: `u${i}` });
    await runtime.ingest.drain();
    assert.equal(await runtime.store.countExposures(await experimentId(created.slug)), 150);
  });
});

describe('POST /experiment/:slug/log: the error table', { skip: SKIP_BACKEND }, () => {
  const logUrl = () => `/experiment/${slug}/log`;

  test('malformed JSON → 400 saying the body is not valid JSON', async () => {
    for (const raw of ['{', '{"variantKey": "A",}', '{variantKey: "A"}', 'NaN']) {
      assertError(await api.postRaw(logUrl(), raw), 400, /JSON/);
    }
  });

  test('a body that is not a JSON object ([], "x", null, 5) → 400', async () => {
    for (const raw of ['[]', '[{"variantKey":"A"}]', '"x"', 'null', '5', 'false', '']) {
      assertError(await api.postRaw(logUrl(), raw), 400, /body/);
    }
  });

  test('missing variantKey → 400 naming variantKey', async () => {
    assertError(await api.post(logUrl(), {}), 400, /variantKey/);
    assertError(await api.post(logUrl(), { output: { text: 'hi' } }), 400, /variantKey/);
  });

  test('variantKey of the wrong type or empty → 400 naming variantKey', async () => {
    for (const variantKey of [5, true, null, {}, ['A'], '']) {
      assertError(await api.post(logUrl(), { variantKey }), 400, /variantKey/);
    }
  });

  for (const field of ['input', 'output', 'metrics', 'context']) {
    test(`${field} that is not a JSON object → 400 naming ${field}`, async () => {
      for (const value of [[], 'text', 5, null, true]) {
        assertError(await api.post(logUrl(), { variantKey: 'A', [field]: value }), 400, new RegExp(field));
      }
    });
  }

  test('optional userId / assignmentId of the wrong type → 400 naming the field', async () => {
    assertError(await api.post(logUrl(), { variantKey: 'A', userId: 5 }), 400, /userId/);
    assertError(await api.post(logUrl(), { variantKey: 'A', userId: '' }), 400, /userId/);
    assertError(await api.post(logUrl(), { variantKey: 'A', assignmentId: 7 }), 400, /assignmentId/);
  });

  test('an invalid timestamp → 400 naming timestamp', async () => {
    const bad = [
      'yesterday',
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2016-12-31T23:59:60Z',
      '',
      1700000000,
    ];
    for (const timestamp of bad) {
      assertError(await api.post(logUrl(), { variantKey: 'A', timestamp }), 400, /timestamp/);
    }
  });

  test('unknown slug → 404 naming the slug', async () => {
    assertError(
      await api.post('/experiment/no-such-log-target/log', { variantKey: 'A' }),
      404,
      /no-such-log-target/,
    );
  });

  test('rejected requests store nothing', async () => {
    const created = await api.createExperiment();
    await api.post(`/experiment/${created.slug}/log`, { variantKey: 'A', timestamp: 'nope' });
    await api.post(`/experiment/${created.slug}/log`, { variantKey: 'A', input: [] });
    assert.deepEqual(await api.allResults(created.slug), []);
  });
});

describe('POST /experiment/:slug/log: behaviour', { skip: SKIP_BACKEND }, () => {
  test('answers {success: true, logId} with a UUIDv7 logId', async () => {
    const res = await api.post(`/experiment/${slug}/log`, { variantKey: 'A', metrics: { latency_ms: 812 } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['logId', 'success']);
    assert.equal(body.success, true);
    assertUuidV7(body.logId);
  });

  test('after a 200 the row is committed: readable through the API and in the database at once', async () => {
    const created = await api.createExperiment();
    const { logId } = await api.log(created.slug, { variantKey: 'B', output: { text: 'ok' } });
    const rows = await runtime.rows<{ variant_key: string; output: unknown }>(
      sql`SELECT variant_key, output FROM results WHERE log_id = ${logId}`,
    );
    assert.deepEqual(
      rows.map((row) => ({ variant_key: row.variant_key, output: jsonColumn(row.output) })),
      [{ variant_key: 'B', output: { text: 'ok' } }],
    );
    // SQLite keeps the text as sent; PostgreSQL's json (not jsonb, migration 004) parses back the same value.
    if (runtime.backend === 'sqlite') assert.equal(rows[0]!.output, '{"text":"ok"}');
    const results = await api.allResults(created.slug);
    assert.deepEqual(
      results.map((r) => r.logId),
      [logId],
    );
  });

  test('the SQLite file is in WAL mode (group commit relies on it)', { skip: SQLITE_ONLY }, async () => {
    const [row] = await runtime.rows<{ journal_mode: string }>(sql`PRAGMA journal_mode`);
    assert.equal(row?.journal_mode, 'wal');
  });

  test('concurrent logs are all committed when answered', async () => {
    const created = await api.createExperiment();
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        api.post(`/experiment/${created.slug}/log`, { variantKey: i % 2 ? 'A' : 'B', metrics: { i } }),
      ),
    );
    const logIds = answers.map((res) => {
      assert.equal(res.statusCode, 200, res.body);
      return res.json().logId as string;
    });
    assert.equal(new Set(logIds).size, 300);
    const [stored] = await runtime.rows<{ n: number }>(
      sql`SELECT COUNT(*) AS n FROM results WHERE log_id IN (${sql.join(logIds)})`,
    );
    assert.equal(Number(stored?.n), 300);
  });

  test('an unknown variantKey → 200 with a warning naming it, and the result is stored and flagged', async () => {
    const res = await api.post(`/experiment/${slug}/log`, { variantKey: 'Z-unknown', output: { a: 1 } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.success, true);
    assertUuidV7(body.logId);
    assert.equal(typeof body.warning, 'string');
    assert.match(body.warning, /Z-unknown/);
    const results = await api.allResults(slug, '&variant=Z-unknown');
    assert.deepEqual(
      results.map((r) => [r.logId, r.variantKey]),
      [[body.logId, 'Z-unknown']],
    );
    const [flag] = await runtime.rows<{ known_variant: number | boolean }>(
      sql`SELECT known_variant FROM results WHERE log_id = ${body.logId}`,
    );
    assert.ok(flag, 'result row not found');
    assert.equal(Boolean(flag.known_variant), false);
  });

  test('a known variantKey carries no warning', async () => {
    const res = await api.post(`/experiment/${slug}/log`, { variantKey: 'B' });
    assert.equal(res.json().warning, undefined);
  });

  test('logs to a paused experiment are accepted', async () => {
    const created = await api.createExperiment();
    await api.setStatus(created.slug, 'paused');
    const { logId } = await api.log(created.slug, { variantKey: 'A' });
    assert.deepEqual(
      (await api.allResults(created.slug)).map((r) => r.logId),
      [logId],
    );
  });

  test('logs to a completed experiment are accepted', async () => {
    const created = await api.createExperiment();
    await api.setStatus(created.slug, 'completed');
    const { logId } = await api.log(created.slug, { variantKey: 'B' });
    assert.deepEqual(
      (await api.allResults(created.slug)).map((r) => r.logId),
      [logId],
    );
  });

  test('optional userId, assignmentId and timestamp are stored and read back', async () => {
    const created = await api.createExperiment();
    const assignment = await api.assign(created.slug, { userId: 'user-α' });
    const sent = {
      variantKey: assignment.variant,
      userId: 'user-α',
      assignmentId: assignment.assignmentId,
      timestamp: '2026-03-04T05:06:07.089Z',
    };
    const { logId } = await api.log(created.slug, sent);
    const [result] = (await api.allResults(created.slug)) as [Result];
    assert.equal(result.logId, logId);
    assert.equal(result.userId, 'user-α');
    assert.equal(result.assignmentId, assignment.assignmentId);
    assert.equal(result.timestamp, '2026-03-04T05:06:07.089Z');
    assert.equal(result.variantKey, assignment.variant);
  });

  test('a timestamp with an offset is stored as the same instant', async () => {
    const created = await api.createExperiment();
    await api.log(created.slug, { variantKey: 'A', timestamp: '2026-03-04T07:06:07+02:00' });
    const [result] = (await api.allResults(created.slug)) as [Result];
    assert.equal(Date.parse(result.timestamp!), Date.parse('2026-03-04T05:06:07Z'));
  });

  test('fields left out are read back as null', async () => {
    const created = await api.createExperiment();
    await api.log(created.slug, { variantKey: 'A' });
    const [result] = (await api.allResults(created.slug)) as [Result];
    for (const field of [
      'userId',
      'assignmentId',
      'input',
      'output',
      'metrics',
      'context',
      'timestamp',
    ] as const) {
      assert.equal(result[field], null, field);
    }
  });
});

describe('POST /experiment/:slug/logs', { skip: SKIP_BACKEND }, () => {
  const item = (i: number) => ({ variantKey: i % 2 ? 'B' : 'A', input: { i }, metrics: { score: i / 10 } });

  test('{results: [...]} → {success: true, logIds} in order, every one readable', async () => {
    const created = await api.createExperiment();
    const res = await api.post(`/experiment/${created.slug}/logs`, { results: [item(0), item(1), item(2)] });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['logIds', 'success']);
    assert.equal(body.success, true);
    assert.equal(body.logIds.length, 3);
    for (const id of body.logIds) assertUuidV7(id);
    const results = await api.allResults(created.slug);
    assert.deepEqual(
      results.map((r) => [r.logId, r.input]),
      body.logIds.map((id: string, i: number) => [id, { i }]),
    );
  });

  test('1000 items are accepted', async () => {
    const created = await api.createExperiment();
    const logIds = await api.logMany(
      created.slug,
      Array.from({ length: 1000 }, (_, i) => item(i)),
    );
    assert.equal(new Set(logIds).size, 1000);
    assert.equal((await api.allResults(created.slug)).length, 1000);
  });

  test('1001 items → 400 and nothing stored', async () => {
    const created = await api.createExperiment();
    const res = await api.post(`/experiment/${created.slug}/logs`, {
      results: Array.from({ length: 1001 }, (_, i) => item(i)),
    });
    assertError(res, 400, /results/);
    assert.deepEqual(await api.allResults(created.slug), []);
  });

  test('one invalid item among valid ones → 400 naming it, and nothing is stored', async () => {
    const created = await api.createExperiment();
    const badItems: unknown[] = [
      { input: { no: 'variantKey' } },
      { variantKey: 5 },
      { variantKey: 'A', metrics: [] },
    ];
    for (const bad of badItems) {
      const results = [item(0), item(1), bad, item(3)];
      assertError(await api.post(`/experiment/${created.slug}/logs`, { results }), 400, /results\/2/);
    }
    assert.deepEqual(await api.allResults(created.slug), []);
  });

  test('an impossible timestamp in one item → 400 naming timestamp, and nothing is stored', async () => {
    const created = await api.createExperiment();
    const results = [item(0), { variantKey: 'A', timestamp: '2016-12-31T23:59:60Z' }, item(2)];
    assertError(await api.post(`/experiment/${created.slug}/logs`, { results }), 400, /timestamp/);
    assert.deepEqual(await api.allResults(created.slug), []);
  });

  test('a body without a results array → 400 naming results', async () => {
    const url = `/experiment/${slug}/logs`;
    assertError(await api.post(url, {}), 400, /results/);
    assertError(await api.post(url, { results: { variantKey: 'A' } }), 400, /results/);
    assertError(await api.postRaw(url, '[{"variantKey":"A"}]'), 400, /body/);
    assertError(await api.postRaw(url, '{"results": ['), 400, /JSON/);
  });

  test('unknown slug → 404', async () => {
    assertError(
      await api.post('/experiment/no-such-batch/logs', { results: [item(0)] }),
      404,
      /no-such-batch/,
    );
  });

  test('unknown variant keys in a batch are stored and reported in warnings', async () => {
    const created = await api.createExperiment();
    const res = await api.post(`/experiment/${created.slug}/logs`, {
      results: [item(0), { variantKey: 'ghost' }, { variantKey: 'ghost' }],
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.logIds.length, 3);
    assert.ok(Array.isArray(body.warnings) && body.warnings.length > 0, res.body);
    assert.match(body.warnings.join(' '), /ghost/);
    assert.equal((await api.allResults(created.slug, '&variant=ghost')).length, 2);
  });

  test('results logged to two experiments are kept apart', async () => {
    const one = await api.createExperiment({ slug: uniqueSlug('one') });
    const two = await api.createExperiment({ slug: uniqueSlug('two') });
    const idsOne = await api.logMany(one.slug, [item(0), item(1)]);
    const idsTwo = await api.logMany(two.slug, [item(2)]);
    assert.deepEqual(
      (await api.allResults(one.slug)).map((r) => r.logId),
      idsOne,
    );
    assert.deepEqual(
      (await api.allResults(two.slug)).map((r) => r.logId),
      idsTwo,
    );
  });
});
