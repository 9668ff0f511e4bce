// What clients that assign in-process rely on (issue 17, ADR 0019): GET /experiments/definitions (the
// running experiments a key may see, ETag and 304) and POST /exposures (their assignments, placed by
// ids they made themselves). The ids and the sticky draw are made here from docs/client-contract.md
// alone, as a client would, so that the contract, not the server's own code, is what is tested.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import {
  API_KEY,
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

interface Definition {
  slug: string;
  assignmentIdKey: number;
  version: number;
  assignment: 'random' | 'sticky';
  seed: string;
  variants: { key: string; trafficPercent: number; payload: Record<string, unknown> }[];
}

function fnv(s: string, h = 0x811c9dc5): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The contract's sticky draw: GrowthBook's v2 hash against the variants' ranges. */
function stickyVariant(d: Definition, userId: string): number {
  const n = (fnv(String(fnv(d.seed + userId))) % 10000) / 10000;
  let start = 0;
  for (const [i, v] of d.variants.entries()) {
    const end = start + v.trafficPercent / 100;
    if (n >= start && n < end) return i;
    start = end;
  }
  return d.variants.length - 1;
}

/** An id in the server's form, with the FNV check or the CRC-32 one (docs/client-contract.md). */
function localId(d: Definition, variantIndex: number, userId: string, kind: 'fnv' | 'crc' = 'fnv'): string {
  const uuid = randomUUID().replace(/^(.{14})./, '$17'); // any UUID will do; shaped as a v7
  const body = `${uuid}.${d.version.toString(36)}.${variantIndex.toString(36)}.${Buffer.from(userId).toString('base64')}`;
  let check: number;
  if (kind === 'crc') check = crc32(body, d.assignmentIdKey);
  else {
    let h = Math.imul(0x811c9dc5 ^ (d.assignmentIdKey & 0xffff), 0x01000193);
    h = Math.imul(h ^ (d.assignmentIdKey >>> 16), 0x01000193);
    check = fnv(body, h);
  }
  return `${body}.${check.toString(16).padStart(8, '0')}`;
}

describe('local evaluation', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'local_evaluation');
    api = runtime.api;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  async function definitions(key?: string): Promise<Definition[]> {
    const res = await api.get('/experiments/definitions', key);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { experiments: Definition[] }).experiments;
  }

  async function definition(slug: string, key?: string): Promise<Definition> {
    const d = (await definitions(key)).find((e) => e.slug === slug);
    assert.ok(d, `${slug} is among the definitions`);
    return d;
  }

  async function newKey(scopes: string[], experiments?: string[]): Promise<string> {
    const res = await api.post('/keys', { name: 'local', scopes, ...(experiments ? { experiments } : {}) });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { key: string }).key;
  }

  const exposures = (items: unknown[], key?: string, headers: Record<string, string> = {}) =>
    api.call({ method: 'POST', url: '/exposures', body: { exposures: items }, key, headers });

  async function exposureCounts(slug: string): Promise<Record<string, number>> {
    const res = await api.get(`/experiment/${slug}/analysis`);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { exposures: Record<string, number> }).exposures;
  }

  test('definitions hold every running experiment, sorted by slug, with what the draw needs', async () => {
    const b = await api.createExperiment({ slug: uniqueSlug('defs-b'), assignment: 'sticky', seed: 'salt' });
    const a = await api.createExperiment({ slug: uniqueSlug('defs-a') });
    const draft = await api.createExperiment({ slug: uniqueSlug('defs-draft'), status: 'draft' });
    const all = await definitions();
    const slugs = all.map((d) => d.slug);
    assert.deepEqual(slugs, [...slugs].sort());
    assert.ok(!slugs.includes(draft.slug), 'a draft is not served');
    const defB = all.find((d) => d.slug === b.slug)!;
    assert.equal(defB.assignment, 'sticky');
    assert.equal(defB.seed, 'salt');
    assert.equal(defB.version, 1);
    assert.ok(Number.isInteger(defB.assignmentIdKey) && defB.assignmentIdKey > 0);
    assert.deepEqual(defB.variants, [
      { key: 'A', trafficPercent: 50, payload: { prompt: 'You are terse.' } },
      { key: 'B', trafficPercent: 50, payload: { prompt: 'You are verbose.' } },
    ]);
    assert.equal(all.find((d) => d.slug === a.slug)!.assignment, 'random');
  });

  test('an unchanged set answers 304 to its ETag; a change answers the new set', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('defs-etag') });
    const first = await api.get('/experiments/definitions');
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
    assert.equal(first.headers['cache-control'], 'no-cache');
    const same = await api.call({
      method: 'GET',
      url: '/experiments/definitions',
      headers: { 'if-none-match': etag },
    });
    assert.equal(same.statusCode, 304);
    assert.equal(same.body, '');
    assert.equal(same.headers.etag, etag);
    const weak = await api.call({
      method: 'GET',
      url: '/experiments/definitions',
      headers: { 'if-none-match': `"other", W/${etag}` },
    });
    assert.equal(weak.statusCode, 304, 'a weak tag in a list matches too');
    await api.setStatus(exp.slug, 'paused');
    const changed = await api.call({
      method: 'GET',
      url: '/experiments/definitions',
      headers: { 'if-none-match': etag },
    });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    const slugs = (changed.json() as { experiments: Definition[] }).experiments.map((d) => d.slug);
    assert.ok(!slugs.includes(exp.slug), 'a paused experiment is no longer served');
  });

  test('a key limited to experiments sees only those; the assign scope is needed', async () => {
    const mine = await api.createExperiment({ slug: uniqueSlug('defs-mine') });
    await api.createExperiment({ slug: uniqueSlug('defs-other') });
    const agent = await newKey(['assign', 'log'], [mine.slug]);
    assert.deepEqual(
      (await definitions(agent)).map((d) => d.slug),
      [mine.slug],
    );
    const reader = await newKey(['read']);
    assertError(await api.get('/experiments/definitions', reader), 403, /assign/);
    const res = await api.get('/experiments/definitions', null);
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'Unauthorized' });
  });

  test('the contract draw equals the server sticky assignment for 2,000 users', async () => {
    const exp = await api.createExperiment({
      slug: uniqueSlug('defs-draw'),
      assignment: 'sticky',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 20 },
        { key: 'B', payload: {}, trafficPercent: 30 },
        { key: 'C', payload: {}, trafficPercent: 50 },
      ],
    });
    const d = await definition(exp.slug);
    for (let u = 0; u < 2000; u++) {
      const userId = `user-${u}-ü`;
      const served = await api.assign(exp.slug, { userId });
      assert.equal(d.variants[stickyVariant(d, userId)]!.key, served.variant, userId);
    }
  });

  test('exposures of locally made ids count like assign, with either check; feedback finds them', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo'), assignment: 'sticky' });
    const d = await definition(exp.slug);
    const users = Array.from({ length: 40 }, (_, i) => `u-${i}`);
    const items = users.map((userId, i) => ({
      experiment: exp.slug,
      assignmentId: localId(d, stickyVariant(d, userId), userId, i % 2 === 0 ? 'fnv' : 'crc'),
      context: { plan: 'pro' },
      timestamp: new Date(Date.now() - 60_000).toISOString(),
    }));
    const res = await exposures(items);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { success: true, accepted: 40, rejected: [] });
    const expected: Record<string, number> = { A: 0, B: 0 };
    for (const u of users) expected[d.variants[stickyVariant(d, u)]!.key]!++;
    assert.deepEqual(await exposureCounts(exp.slug), expected);

    // Feedback by a local id counts for its variant and user.
    const fb = await api.post(`/experiment/${exp.slug}/feedback`, {
      assignmentId: items[1]!.assignmentId,
      metrics: { thumbs_up: true },
    });
    assert.equal(fb.statusCode, 200, fb.body);
    // Log by a local id names its variant: another variantKey is stored and flagged.
    const wrong = d.variants[1 - stickyVariant(d, users[0]!)]!.key;
    const logged = await api.log(exp.slug, { variantKey: wrong, assignmentId: items[0]!.assignmentId });
    assert.match(logged.warning ?? '', /was issued for variant/);
  });

  test('items that cannot be placed are rejected by index and not stored; the rest commit', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-rej') });
    const other = await api.createExperiment({ slug: uniqueSlug('expo-other') });
    const d = await definition(exp.slug);
    const dOther = await definition(other.slug);
    const good = localId(d, 0, 'u-1');
    const res = await exposures([
      { experiment: exp.slug, assignmentId: good },
      { experiment: 'no-such-experiment', assignmentId: good },
      { experiment: exp.slug, assignmentId: localId(dOther, 0, 'u-1') }, // made for another experiment
      { experiment: exp.slug, assignmentId: `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}` }, // mistyped
      { experiment: exp.slug, assignmentId: localId({ ...d, version: 2 }, 0, 'u-1') }, // a version to come
      { experiment: exp.slug, assignmentId: localId(d, 7, 'u-1') }, // no such variant
      { experiment: exp.slug, assignmentId: randomUUID() }, // a bare UUID names nothing
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { accepted: number; rejected: { index: number; error: string }[] };
    assert.equal(body.accepted, 1);
    assert.deepEqual(
      body.rejected.map((r) => r.index),
      [1, 2, 3, 4, 5, 6],
    );
    assert.match(body.rejected[0]!.error, /no experiment with slug 'no-such-experiment'/);
    assert.match(body.rejected[1]!.error, /was not made for experiment/);
    assert.deepEqual(await exposureCounts(exp.slug), { A: 1, B: 0 });

    // A key limited to other experiments cannot place exposures in this one.
    const limited = await newKey(['assign'], [other.slug]);
    const refused = await exposures([{ experiment: exp.slug, assignmentId: localId(d, 1, 'u-2') }], limited);
    assert.equal(refused.statusCode, 200, refused.body);
    assert.match((refused.json() as typeof body).rejected[0]!.error, /may not use experiment/);
    assert.deepEqual(await exposureCounts(exp.slug), { A: 1, B: 0 });
    // log-only keys cannot send exposures at all
    assertError(await exposures([{ experiment: exp.slug, assignmentId: good }], await newKey(['log'])), 403);
  });

  test('an id twice in a batch counts once; ids naming users assign refuses are rejected', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-users') });
    const d = await definition(exp.slug);
    const id = localId(d, 1, 'u-1');
    const long = 'x'.repeat(600);
    const res = await exposures([
      { experiment: exp.slug, assignmentId: id },
      { experiment: exp.slug, assignmentId: id },
      { experiment: exp.slug, assignmentId: localId(d, 0, '') },
      { experiment: exp.slug, assignmentId: localId(d, 0, 'a\u0000b') },
      { experiment: exp.slug, assignmentId: localId(d, 0, long) },
      { experiment: exp.slug, assignmentId: localId(d, 0, '🙂'.repeat(512)) }, // 512 characters: fine
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { accepted: number; rejected: { index: number; error: string }[] };
    assert.equal(body.accepted, 2);
    assert.deepEqual(
      body.rejected.map((r) => r.index),
      [1, 2, 3, 4],
    );
    assert.match(body.rejected[0]!.error, /appears earlier in this batch: counted once/);
    assert.match(body.rejected[1]!.error, /was not made for experiment/);
    assert.ok(body.rejected[3]!.error.length < 250, 'a long id is shortened in the message');
    assert.deepEqual(await exposureCounts(exp.slug), { A: 1, B: 1 });
    // feedback by an id naming a NUL user is refused like any id the service never issued
    const fb = await api.post(`/experiment/${exp.slug}/feedback`, {
      assignmentId: localId(d, 0, 'a\u0000b'),
      metrics: { thumbs_up: true },
    });
    assertError(fb, 404, /issued no assignment/);
  });

  test('feedback names the assignment by its UUID: either check, any user id length, one value', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-fb'), assignment: 'sticky' });
    const d = await definition(exp.slug);
    const user = '🙂'.repeat(512); // the longest user id assign takes: an id of about 2,800 characters
    const fnvId = localId(d, stickyVariant(d, user), user, 'fnv');
    const body = fnvId.slice(0, fnvId.lastIndexOf('.'));
    const sameWithCrc = `${body}.${crc32(body, d.assignmentIdKey).toString(16).padStart(8, '0')}`;
    assert.notEqual(fnvId, sameWithCrc);
    for (const [assignmentId, up] of [
      [fnvId, true],
      [sameWithCrc, false],
    ] as const) {
      const res = await api.post(`/experiment/${exp.slug}/feedback`, {
        assignmentId,
        metrics: { thumbs_up: up },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const analysis = (await api.get(`/experiment/${exp.slug}/analysis`)).json() as {
      metrics: { name: string; variants: { key: string; n: number; mean: number | null }[] }[];
    };
    const thumbs = analysis.metrics.find((m) => m.name === 'thumbs_up')!;
    const arm = thumbs.variants.find((v) => v.n > 0)!;
    assert.deepEqual([arm.n, arm.mean], [1, 0], 'the second value replaced the first: one assignment');
  });

  test('bad bodies are 400 and store nothing', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-bad') });
    const d = await definition(exp.slug);
    const id = localId(d, 0, 'u');
    assertError(await exposures([]), 400, /fewer than 1/);
    assertError(await exposures([{ experiment: exp.slug }]), 400, /assignmentId/);
    assertError(await exposures([{ experiment: exp.slug, assignmentId: id, variant: 'A' }]), 400, /variant/);
    assertError(await exposures([{ experiment: exp.slug, assignmentId: id, timestamp: 'yesterday' }]), 400);
    assertError(
      await exposures(Array.from({ length: 1001 }, () => ({ experiment: exp.slug, assignmentId: id }))),
      400,
    );
    assertError(await api.postRaw('/exposures', '{"exposures": ['), 400);
    assert.deepEqual(await exposureCounts(exp.slug), { A: 0, B: 0 });
  });

  test('a retried batch with its Idempotency-Key is counted once', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-idem') });
    const d = await definition(exp.slug);
    const items = [0, 1, 2].map((i) => ({ experiment: exp.slug, assignmentId: localId(d, i % 2, `u-${i}`) }));
    const headers = { 'idempotency-key': `batch-${randomUUID()}` };
    const first = await exposures(items, API_KEY, headers);
    const again = await exposures(items, API_KEY, headers);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(await exposureCounts(exp.slug), { A: 2, B: 1 });
  });

  test('one exposure per assignment id: sent again and again, in either check, or issued by assign', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-once') });
    const d = await definition(exp.slug);
    const id = localId(d, 1, 'u-once');
    const body = id.slice(0, id.lastIndexOf('.'));
    const crc = `${body}.${crc32(body, d.assignmentIdKey).toString(16).padStart(8, '0')}`;
    for (const sent of [id, id, crc, id, id]) {
      const res = await exposures([{ experiment: exp.slug, assignmentId: sent }]);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { success: true, accepted: 1, rejected: [] }, 'accepted every time');
    }
    // Five sends at once (no Idempotency-Key): still one.
    const other = localId(d, 0, 'u-at-once');
    const sends = await Promise.all(
      Array.from({ length: 5 }, () => exposures([{ experiment: exp.slug, assignmentId: other }])),
    );
    for (const res of sends) assert.equal(res.statusCode, 200, res.body);
    // An id assign issued had its exposure recorded then: sending it adds nothing.
    const assigned = await api.post(`/experiment/${exp.slug}/assign`, { userId: 'u-server' });
    assert.equal(assigned.statusCode, 200, assigned.body);
    const { assignmentId, variant } = assigned.json() as { assignmentId: string; variant: string };
    for (let i = 0; i < 5; i++) {
      const res = await exposures([{ experiment: exp.slug, assignmentId }]);
      assert.deepEqual(res.json(), { success: true, accepted: 1, rejected: [] });
    }
    await runtime.ingest.drain();
    const counts = await exposureCounts(exp.slug);
    const expected: Record<string, number> = { A: 1, B: 1 };
    expected[variant] = (expected[variant] ?? 0) + 1;
    assert.deepEqual(counts, expected);
  });

  test('a timestamp after the server clock is taken as now', async () => {
    const exp = await api.createExperiment({ slug: uniqueSlug('expo-future') });
    const d = await definition(exp.slug);
    const res = await exposures([
      { experiment: exp.slug, assignmentId: localId(d, 0, 'u'), timestamp: '2999-01-01T00:00:00Z' },
    ]);
    assert.equal(res.statusCode, 200, res.body);
    await api.log(exp.slug, { variantKey: 'A', metrics: { rating: 4 } });
    const series = await api.get(`/experiment/${exp.slug}/analysis/timeseries?metric=rating`);
    assert.equal(series.statusCode, 200, series.body);
    assert.ok(!series.body.includes('2999'), 'no bucket in the future');
  });
});
