// Two real server processes on one PostgreSQL: changes through one reach the other within 1 s, and
// results logged through both are readable, all of them, through either.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'multi-instance-key-0123456789';
const skip = !(await postgresReachable());
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-multi-'));
let database: TestDatabase | undefined;
const servers: ServerProcess[] = [];

after(async () => {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Polls `probe` every 10 ms until it returns true; resolves with the milliseconds it took. */
async function within(ms: number, what: string, probe: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > ms) assert.fail(`${what} was not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function readAll(base: string, slug: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${cursor}` : '';
    const page = await call(base, 'GET', `/experiment/${slug}/results?limit=73${q}`);
    assert.equal(page.status, 200);
    ids.push(...page.body.results.map((r: { logId: string }) => r.logId));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids;
}

test('two instances on one PostgreSQL stay in step', { skip }, async (t) => {
  database = await createTestDatabase('multi');
  const env = { API_KEY, DATABASE_URL: database.url, DATA_DIR: dir };
  // Started together: the migration lock keeps them from racing on the schema.
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  servers.push(a!, b!);

  const created = await call(a!.baseUrl, 'POST', '/experiments', {
    slug: 'shared',
    status: 'running',
    variants: [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 100 },
      { key: 'B', payload: { prompt: 'b' }, trafficPercent: 0 },
    ],
  });
  assert.equal(created.status, 201);

  await t.test(
    'an experiment created through one instance is assignable on the other within 1 s',
    async () => {
      await within(1000, 'the new experiment on instance B', async () => {
        const r = await call(b!.baseUrl, 'POST', '/experiment/shared/assign', { userId: 'u' });
        return r.status === 200 && r.body.variant === 'A';
      });
    },
  );

  await t.test('a PATCH through one instance changes assignments on the other within 1 s', async () => {
    const patched = await call(a!.baseUrl, 'PATCH', '/experiment/shared', {
      variants: [
        { key: 'A', payload: { prompt: 'a' }, trafficPercent: 0 },
        { key: 'B', payload: { prompt: 'b2' }, trafficPercent: 100 },
      ],
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.version, 2);
    const ms = await within(1000, 'the new weights on instance B', async () => {
      const r = await call(b!.baseUrl, 'POST', '/experiment/shared/assign', { userId: 'u' });
      return r.body.variant === 'B' && r.body.payload.prompt === 'b2';
    });
    t.diagnostic(`instance B saw the PATCH after ${ms.toFixed(0)} ms`);
  });

  await t.test('a pause through the other instance stops assignment on the first within 1 s', async () => {
    assert.equal((await call(b!.baseUrl, 'PATCH', '/experiment/shared', { status: 'paused' })).status, 200);
    await within(1000, 'the pause on instance A', async () => {
      return (await call(a!.baseUrl, 'POST', '/experiment/shared/assign', { userId: 'u' })).status === 404;
    });
    assert.equal((await call(b!.baseUrl, 'PATCH', '/experiment/shared', { status: 'running' })).status, 200);
  });

  await t.test(
    'a log through one instance right after a create through the other is stored, not 404',
    async () => {
      for (let i = 0; i < 5; i++) {
        const slug = `fresh-${i}`;
        const made = await call(a!.baseUrl, 'POST', '/experiments', {
          slug,
          variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
        });
        assert.equal(made.status, 201);
        const logged = await call(b!.baseUrl, 'POST', `/experiment/${slug}/log`, { variantKey: 'A' });
        assert.equal(logged.status, 200, JSON.stringify(logged.body));
      }
    },
  );

  await t.test('results logged through both instances are all readable through either', async () => {
    const logged: string[] = [];
    const client = async (base: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await call(base, 'POST', '/experiment/shared/log', {
          variantKey: i % 2 ? 'A' : 'B',
          metrics: { i },
        });
        assert.equal(r.status, 200);
        logged.push(r.body.logId);
      }
    };
    // Readers page through while writers on both instances are still appending.
    const writers = Promise.all([
      ...Array.from({ length: 8 }, () => client(a!.baseUrl, 40)),
      ...Array.from({ length: 8 }, () => client(b!.baseUrl, 40)),
    ]);
    const midway = await readAll(b!.baseUrl, 'shared');
    assert.equal(new Set(midway).size, midway.length, 'no duplicates in pages read during writes');
    await writers;
    for (const base of [a!.baseUrl, b!.baseUrl]) {
      const ids = await readAll(base, 'shared');
      assert.equal(ids.length, 640);
      assert.deepEqual(new Set(ids), new Set(logged));
    }
    // Pages read mid-write were a prefix of the final order: no gaps appeared behind the cursor.
    const final = await readAll(a!.baseUrl, 'shared');
    assert.deepEqual(final.slice(0, midway.length), midway);
  });

  await t.test(
    'a key created through one instance works on the other; revoked, it stops within 1 s',
    async () => {
      const created = await call(a!.baseUrl, 'POST', '/keys', { name: 'roaming', scopes: ['assign'] });
      assert.equal(created.status, 201);
      const key = created.body.key as string;
      const assignWith = async (base: string) =>
        (await call(base, 'POST', '/experiment/shared/assign', { userId: 'u' }, { 'x-api-key': key })).status;
      await within(1000, 'the new key on instance B', async () => (await assignWith(b!.baseUrl)) === 200);
      assert.equal((await call(a!.baseUrl, 'DELETE', `/keys/${created.body.id}`)).status, 204);
      const ms = await within(
        1000,
        'the revocation on instance B',
        async () => (await assignWith(b!.baseUrl)) === 401,
      );
      t.diagnostic(`instance B refused the revoked key after ${ms.toFixed(0)} ms`);
      assert.equal(await assignWith(a!.baseUrl), 401);
    },
  );

  await t.test('one Idempotency-Key sent to both instances at once stores one result', async () => {
    const before = (await readAll(a!.baseUrl, 'shared')).length;
    const body = { results: Array.from({ length: 500 }, (_, i) => ({ variantKey: 'A', metrics: { i } })) };
    const answers = await Promise.all(
      [a!, b!, a!, b!].map((s) =>
        call(s.baseUrl, 'POST', '/experiment/shared/logs', body, { 'idempotency-key': 'both-instances' }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.ok(
      statuses.every((s) => s === 200 || s === 409),
      `only 200 and 409: ${statuses}`,
    );
    const ok = answers.filter((r) => r.status === 200).map((r) => r.body.logIds.join());
    assert.ok(ok.length >= 1);
    assert.equal(new Set(ok).size, 1, 'every 200 carries the same logIds');
    assert.equal((await readAll(b!.baseUrl, 'shared')).length, before + 500);
    const retried = await call(b!.baseUrl, 'POST', '/experiment/shared/logs', body, {
      'idempotency-key': 'both-instances',
    });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.logIds.join(), ok[0]);
  });
});
