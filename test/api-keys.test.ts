// Scoped API keys: created with a secret shown once, listed without it, revoked; every scope × route;
// keys limited to experiments; the root key (API_KEY) keeps doing everything.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const dir = makeTempDir();
let rt: TestRuntime;

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'keys');
  await rt.api.createExperiment({ slug: 'alpha', status: 'running' });
  await rt.api.createExperiment({ slug: 'beta', status: 'running' });
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

async function createKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const res = await rt.api.post('/keys', body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

describe('API keys', { skip: SKIP_BACKEND }, () => {
  test('POST /keys answers 201 with the secret once; GET /keys lists it without the secret', async () => {
    const res = await rt.api.post('/keys', {
      name: 'support-agent',
      scopes: ['log', 'assign'],
      experiments: ['alpha'],
      rateLimitPerSecond: 50,
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    assert.deepEqual(Object.keys(created).sort(), [
      'createdAt',
      'experiments',
      'id',
      'key',
      'lastUsedAt',
      'name',
      'prefix',
      'rateLimitPerSecond',
      'scopes',
    ]);
    assert.equal(created.name, 'support-agent');
    assert.deepEqual(created.scopes, ['assign', 'log']);
    assert.deepEqual(created.experiments, ['alpha']);
    assert.equal(created.rateLimitPerSecond, 50);
    assert.match(created.key, /^ask_[A-Za-z0-9_-]{43}$/);
    assert.ok(created.key.startsWith(created.prefix));
    assert.equal(created.lastUsedAt, null);

    const list = await rt.api.get('/keys');
    assert.equal(list.statusCode, 200);
    const listed = list.json().keys.find((k: { id: string }) => k.id === created.id);
    assert.ok(listed, 'the new key is listed');
    assert.equal(listed.key, undefined, 'the secret is never listed');
    assert.equal(list.body.includes(created.key), false);
    assert.equal(listed.prefix, created.prefix);
  });

  test('the secret is stored only as a keyed hash', async () => {
    const { id, key } = await createKey({ name: 'hash-check', scopes: ['read'] });
    const { sql } = await import('kysely');
    const rows = await rt.rows<{ hash: string; prefix: string }>(
      sql`select hash, prefix from api_keys where id = ${id}`,
    );
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]!.hash, key);
    assert.equal(rows[0]!.hash.includes(key.slice(4)), false);
    assert.equal(rows[0]!.prefix, key.slice(0, 12));
  });

  test('GET /keys shows when a key was last used', async () => {
    const { id, key } = await createKey({ name: 'used', scopes: ['read'] });
    assert.equal((await rt.api.get('/experiments', key)).statusCode, 200);
    const listed = (await rt.api.get('/keys')).json().keys.find((k: { id: string }) => k.id === id);
    assert.ok(listed.lastUsedAt, 'lastUsedAt is set after a request');
    assert.ok(Date.now() - Date.parse(listed.lastUsedAt) < 60_000);
  });

  test('DELETE /keys/:id revokes: 204, then the key is 401 and no longer listed; again 404', async () => {
    const { id, key } = await createKey({ name: 'short-lived', scopes: ['assign'] });
    const ok = await rt.api.post('/experiment/alpha/assign', { userId: 'u' }, key);
    assert.equal(ok.statusCode, 200);
    const revoked = await rt.api.call({ method: 'DELETE', url: `/keys/${id}` });
    assert.equal(revoked.statusCode, 204);
    const refused = await rt.api.post('/experiment/alpha/assign', { userId: 'u' }, key);
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.body, '{"error":"Unauthorized"}');
    const listed = (await rt.api.get('/keys')).json().keys.map((k: { id: string }) => k.id);
    assert.equal(listed.includes(id), false);
    const again = await rt.api.call({ method: 'DELETE', url: `/keys/${id}` });
    assert.equal(again.statusCode, 404);
    assert.match(again.json().error, /no key with id/);
  });

  test('an unknown key, a key with a wrong character and no key are all exactly the spec 401', async () => {
    const { key } = await createKey({ name: 'victim', scopes: ['admin'] });
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    for (const candidate of [tampered, 'ask_nope', 'nope', null]) {
      const res = await rt.api.get('/experiments', candidate);
      assert.equal(res.statusCode, 401);
      assert.equal(res.body, '{"error":"Unauthorized"}');
    }
  });

  test('bad key requests are 400 with the reason', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ name: 'x', scopes: ['write'] }, /unknown scope 'write'/],
      [{ name: 'x', scopes: [] }, /scopes/],
      [{ scopes: ['read'] }, /name/],
      [{ name: 'x', scopes: ['read'], experiments: ['not a slug'] }, /not a valid slug/],
      [{ name: 'x', scopes: ['read'], rateLimitPerSecond: 0 }, /rateLimitPerSecond/],
      [{ name: 'x', scopes: ['read'], extra: 1 }, /extra|additional/],
    ];
    for (const [body, message] of cases) {
      const res = await rt.api.post('/keys', body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.match(res.json().error, message);
    }
  });
});

/** One request of each route, with a body that is valid for it. */
interface Probe {
  scope: 'assign' | 'log' | 'read' | 'admin';
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: () => string | Promise<string>;
  body?: () => unknown | Promise<unknown>;
}

let draftCounter = 0;
const PROBES: Probe[] = [
  {
    scope: 'admin',
    method: 'POST',
    url: () => '/experiments',
    body: () => ({
      slug: `made-${++draftCounter}`,
      variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
    }),
  },
  { scope: 'read', method: 'GET', url: () => '/experiments' },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha' },
  { scope: 'admin', method: 'PATCH', url: () => '/experiment/alpha', body: () => ({ description: 'd' }) },
  {
    scope: 'admin',
    method: 'DELETE',
    url: async () => {
      const slug = `draft-${++draftCounter}`;
      await rt.api.createExperiment({ slug, status: 'draft' });
      return `/experiment/${slug}`;
    },
  },
  { scope: 'assign', method: 'POST', url: () => '/experiment/alpha/assign', body: () => ({ userId: 'u-1' }) },
  { scope: 'log', method: 'POST', url: () => '/experiment/alpha/log', body: () => ({ variantKey: 'A' }) },
  {
    scope: 'log',
    method: 'POST',
    url: () => '/experiment/alpha/logs',
    body: () => ({ results: [{ variantKey: 'A' }] }),
  },
  {
    scope: 'log',
    method: 'POST',
    url: () => '/experiment/alpha/feedback',
    body: async () => ({
      assignmentId: (await rt.api.assign('alpha', { userId: 'u-feedback' })).assignmentId,
      metrics: { thumbs_up: true },
    }),
  },
  {
    scope: 'log',
    method: 'POST',
    url: () => '/feedback',
    body: async () => ({
      feedback: [
        {
          experiment: 'alpha',
          assignmentId: (await rt.api.assign('alpha', { userId: 'u-feedback' })).assignmentId,
          metrics: { rating: 3 },
        },
      ],
    }),
  },
  { scope: 'assign', method: 'GET', url: () => '/experiments/definitions' },
  {
    scope: 'assign',
    method: 'POST',
    url: () => '/exposures',
    body: () => ({ exposures: [{ experiment: 'alpha', assignmentId: 'not-placeable' }] }),
  },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha/analysis/timeseries?metric=thumbs_up' },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha/versions' },
  { scope: 'read', method: 'GET', url: () => '/keys/me' },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha/results' },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha/results/export' },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha/analysis' },
  { scope: 'read', method: 'GET', url: () => '/metrics' },
  { scope: 'read', method: 'GET', url: () => '/experiment/alpha/events' },
  { scope: 'admin', method: 'GET', url: () => '/events?type=key.*' },
  { scope: 'admin', method: 'POST', url: () => '/keys', body: () => ({ name: 'k', scopes: ['read'] }) },
  { scope: 'admin', method: 'GET', url: () => '/keys' },
  {
    scope: 'admin',
    method: 'DELETE',
    url: async () => `/keys/${(await createKey({ name: 'doomed', scopes: ['read'] })).id}`,
  },
];

describe('every scope × every route', { skip: SKIP_BACKEND }, () => {
  for (const held of ['assign', 'log', 'read', 'admin'] as const) {
    test(`a key with only '${held}'`, async () => {
      const { key } = await createKey({ name: `only-${held}`, scopes: [held] });
      for (const probe of PROBES) {
        const url = await probe.url();
        const res = await rt.api.call({ method: probe.method, url, body: await probe.body?.(), key });
        const allowed = held === 'admin' || held === probe.scope;
        const what = `${probe.method} ${url} with '${held}': ${res.statusCode} ${res.body.slice(0, 200)}`;
        if (allowed) {
          assert.ok(res.statusCode >= 200 && res.statusCode < 300, what);
        } else {
          assert.equal(res.statusCode, 403, what);
          assert.equal(
            res.json().error,
            `this key lacks the '${probe.scope}' scope (it has: '${held}')`,
            what,
          );
        }
      }
    });
  }

  test('the root key (API_KEY) may call every route', async () => {
    for (const probe of PROBES) {
      const url = await probe.url();
      const res = await rt.api.call({ method: probe.method, url, body: await probe.body?.(), key: API_KEY });
      assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${probe.method} ${url}: ${res.statusCode}`);
    }
  });

  test('a key with several scopes may call the routes of each', async () => {
    const { key } = await createKey({ name: 'agent', scopes: ['assign', 'log'] });
    const assign = await rt.api.post('/experiment/alpha/assign', { userId: 'u' }, key);
    assert.equal(assign.statusCode, 200);
    const log = await rt.api.post('/experiment/alpha/log', { variantKey: 'A', metrics: { rating: 5 } }, key);
    assert.equal(log.statusCode, 200);
    const read = await rt.api.get('/experiment/alpha/results', key);
    assert.equal(read.statusCode, 403);
    assert.equal(read.json().error, "this key lacks the 'read' scope (it has: 'assign', 'log')");
  });
});

describe('keys limited to experiments', { skip: SKIP_BACKEND }, () => {
  test('may use their experiments and get 403 naming the limit on others', async () => {
    const { key } = await createKey({
      name: 'alpha-only',
      scopes: ['assign', 'log', 'read'],
      experiments: ['alpha'],
    });
    assert.equal((await rt.api.post('/experiment/alpha/assign', { userId: 'u' }, key)).statusCode, 200);
    assert.equal((await rt.api.post('/experiment/alpha/log', { variantKey: 'A' }, key)).statusCode, 200);
    assert.equal((await rt.api.get('/experiment/alpha/analysis', key)).statusCode, 200);
    for (const [method, url, body] of [
      ['POST', '/experiment/beta/assign', { userId: 'u' }],
      ['POST', '/experiment/beta/log', { variantKey: 'A' }],
      ['GET', '/experiment/beta/results', undefined],
      ['GET', '/experiment/beta', undefined],
    ] as const) {
      const res = await rt.api.call({ method, url, body, key });
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.json().error, "this key is limited to experiments 'alpha'; not 'beta'");
    }
  });

  test('GET /experiments lists only their experiments', async () => {
    const { key } = await createKey({ name: 'beta-reader', scopes: ['read'], experiments: ['beta'] });
    const res = await rt.api.get('/experiments', key);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json().experiments.map((e: { slug: string }) => e.slug),
      ['beta'],
    );
  });

  test('an admin key limited to experiments may create only those, and may not manage keys', async () => {
    const { key } = await createKey({ name: 'gamma-admin', scopes: ['admin'], experiments: ['gamma'] });
    const variants = [{ key: 'A', payload: {}, trafficPercent: 100 }];
    const made = await rt.api.post('/experiments', { slug: 'gamma', variants }, key);
    assert.equal(made.statusCode, 201, made.body);
    const other = await rt.api.post('/experiments', { slug: 'delta', variants }, key);
    assert.equal(other.statusCode, 403);
    assert.match(other.json().error, /may not create 'delta'/);
    const keys = await rt.api.get('/keys', key);
    assert.equal(keys.statusCode, 403);
    assert.match(keys.json().error, /needs a key for every experiment/);
  });
});

describe('GET /keys pages like GET /experiments (issue 24)', { skip: SKIP_BACKEND }, () => {
  interface Listed {
    id: string;
    name: string;
    createdAt: string;
  }

  /** Every page, `limit` at a time; the keys in the order the pages gave them, and the page sizes. */
  async function allPages(limit: number, between?: (page: number, keys: Listed[]) => Promise<void>) {
    const keys: Listed[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await rt.api.get(`/keys?limit=${limit}${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as { keys: Listed[]; nextCursor: string | null };
      assert.deepEqual(Object.keys(page).sort(), ['keys', 'nextCursor']);
      keys.push(...page.keys);
      sizes.push(page.keys.length);
      cursor = page.nextCursor;
      await between?.(sizes.length, page.keys);
    } while (cursor !== null);
    return { keys, sizes };
  }

  /** The live keys as the database orders them (created_at, then id). */
  async function liveInOrder(): Promise<string[]> {
    const { sql } = await import('kysely');
    const rows = await rt.rows<{ id: string }>(
      sql`select id from api_keys where revoked_at is null order by created_at, id`,
    );
    return rows.map((r) => r.id);
  }

  test('250 keys, limit=100: every live key exactly once, in creation order; revoked ones never', async () => {
    const made: Array<{ id: string; key: string }> = [];
    // Eight at a time: several keys share a millisecond, so the order within one is by id.
    for (let i = 0; i < 250; i += 8) {
      const batch = Array.from({ length: Math.min(8, 250 - i) }, (_, j) =>
        createKey({ name: `paged-${i + j}`, scopes: ['read'] }),
      );
      made.push(...(await Promise.all(batch)));
    }
    const revoked = [made[3]!.id, made[120]!.id, made[249]!.id];
    for (const id of revoked) {
      assert.equal((await rt.api.call({ method: 'DELETE', url: `/keys/${id}` })).statusCode, 204);
    }
    const expected = await liveInOrder();
    assert.ok(expected.length >= 247, `${expected.length} live keys`);
    const { keys, sizes } = await allPages(100);
    const ids = keys.map((k) => k.id);
    assert.deepEqual(ids, expected, 'every live key once, in (createdAt, id) order');
    assert.equal(new Set(ids).size, ids.length);
    for (const id of revoked) assert.equal(ids.includes(id), false, `revoked ${id} is not listed`);
    for (let i = 1; i < keys.length; i++) {
      assert.ok(keys[i - 1]!.createdAt <= keys[i]!.createdAt, 'createdAt never goes back');
    }
    assert.deepEqual(
      sizes,
      [...Array(Math.floor(ids.length / 100)).fill(100), ids.length % 100].filter((n) => n > 0),
      'full pages, then the rest',
    );
    // Without limit: 50 per page, as GET /experiments.
    const first = (await rt.api.get('/keys')).json();
    assert.equal(first.keys.length, 50);
    assert.equal(typeof first.nextCursor, 'string');
  });

  test('a key revoked or created while paging: the pages go on from where they were', async () => {
    const before = await liveInOrder();
    let gone = '';
    let added = '';
    const { keys } = await allPages(40, async (page, onPage) => {
      if (page !== 1) return;
      // The last key of the page the cursor points after, and one key of a later page.
      gone = onPage.at(-1)!.id;
      assert.equal((await rt.api.call({ method: 'DELETE', url: `/keys/${gone}` })).statusCode, 204);
      assert.equal((await rt.api.call({ method: 'DELETE', url: `/keys/${before[60]!}` })).statusCode, 204);
      added = (await createKey({ name: 'late', scopes: ['read'] })).id;
    });
    const ids = keys.map((k) => k.id);
    assert.equal(new Set(ids).size, ids.length, 'no key twice');
    assert.deepEqual(
      ids,
      [...before.slice(0, 40), ...before.slice(40).filter((id) => id !== before[60]), added],
      'page 1 as it was; later pages without the key revoked meanwhile, with the one created',
    );
    assert.ok(ids.includes(gone), 'it was on page 1');
  });

  test('a bad cursor or limit is 400 with a JSON error', async () => {
    const otherList = (await rt.api.get('/experiments?limit=1')).json().nextCursor as string | null;
    const forged = (text: string) => Buffer.from(text).toString('base64url');
    const cursors = [
      'not-a-cursor',
      '%00',
      forged('k:12'),
      forged('k:1748854800000.bad id'),
      forged('k:999999999999999.01934f6e-7a1c-7c3e-9d2a-5b8e0f4c2a11'),
      forged('e:1748854800000.01934f6e-7a1c-7c3e-9d2a-5b8e0f4c2a11'),
      forged('e:50'),
      ...(otherList === null ? [] : [otherList]),
    ];
    for (const cursor of cursors) {
      const res = await rt.api.get(`/keys?cursor=${encodeURIComponent(cursor)}`);
      assert.equal(res.statusCode, 400, `${cursor}: ${res.body}`);
      assert.match(res.json().error, /cursor is not valid: pass the nextCursor of a previous page unchanged/);
      assert.deepEqual(Object.keys(res.json()), ['error']);
    }
    for (const query of ['limit=0', 'limit=101', 'limit=ten', `cursor=${'a'.repeat(201)}`]) {
      const res = await rt.api.get(`/keys?${query}`);
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json()), ['error']);
    }
  });
});
