// Saved groups (ADR 0038) through the real server: PUT creates or replaces a group (admin), GET lists and
// reads (read), DELETE removes; 400s say what is wrong and where; 100,000 values travel both ways (over a
// socket too: the route's own body limit); every change is a group.saved / group.deleted event.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  API_KEY,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  send,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

interface Group {
  key: string;
  description: string;
  size: number;
  usedBy: string[];
  createdAt: string;
  updatedAt: string;
  values?: Array<string | number>;
}

interface Event {
  type: string;
  experiment: string | null;
  actor: { kind: string; id?: string; name?: string };
  data: Record<string, unknown>;
}

const dir = makeTempDir();
let rt: TestRuntime;
let readKey: string;

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'groups');
  const res = await rt.api.post('/keys', { name: 'reader', scopes: ['read'] });
  assert.equal(res.statusCode, 201, res.body);
  readKey = res.json().key;
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

const uniqueKey = () => uniqueSlug('grp');

async function put(key: string, body: unknown): Promise<Group> {
  const res = await rt.api.put(`/groups/${key}`, body);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function groupEvents(): Promise<Event[]> {
  const res = await rt.api.get('/events?type=group.*&limit=100');
  assert.equal(res.statusCode, 200, res.body);
  return res.json().events;
}

describe('saved groups', { skip: SKIP_BACKEND }, () => {
  test('PUT creates a group (duplicates dropped, order kept); GET reads it; GET /groups lists it without values', async () => {
    const key = uniqueKey();
    const created = await put(key, { values: ['u-2', 'u-1', 7, 'u-2', 7, '7'], description: 'beta' });
    assert.deepEqual(created.values, ['u-2', 'u-1', 7, '7']);
    assert.equal(created.size, 4);
    assert.equal(created.description, 'beta');
    assert.deepEqual(created.usedBy, []);
    assert.equal(created.createdAt, created.updatedAt);

    const got = await rt.api.get(`/groups/${key}`, readKey);
    assert.equal(got.statusCode, 200, got.body);
    assert.deepEqual(got.json(), created);

    const list = await rt.api.get('/groups', readKey);
    assert.equal(list.statusCode, 200, list.body);
    const listed = (list.json().groups as Group[]).find((g) => g.key === key);
    assert.deepEqual(listed, {
      key,
      description: 'beta',
      size: 4,
      usedBy: [],
      createdAt: created.createdAt,
      updatedAt: created.updatedAt,
    });
  });

  test('a second PUT replaces the values and description, keeps createdAt, and says what changed', async () => {
    const key = uniqueKey();
    const first = await put(key, { values: ['a', 'b', 'c'], description: 'first' });
    const second = await put(key, { values: ['c', 'd'] });
    assert.deepEqual(second.values, ['c', 'd']);
    assert.equal(second.description, '', 'an absent description is the empty one');
    assert.equal(second.createdAt, first.createdAt);
    assert.ok(second.updatedAt >= first.updatedAt);
    assert.deepEqual((await rt.api.get(`/groups/${key}`)).json().values, ['c', 'd']);

    const saved = (await groupEvents()).filter((e) => e.data.key === key);
    assert.deepEqual(
      saved.map((e) => [e.type, e.experiment, e.data]),
      [
        ['group.saved', null, { key, size: 3, added: 3, removed: 0, created: true }],
        ['group.saved', null, { key, size: 2, added: 1, removed: 2, created: false }],
      ],
    );
    assert.deepEqual(saved[0]!.actor, { kind: 'key', id: 'root', name: 'root' });
  });

  test('DELETE answers 204, then the group is gone (404 naming it); group.deleted is in the history', async () => {
    const key = uniqueKey();
    await put(key, { values: [1, 2] });
    const res = await rt.api.delete(`/groups/${key}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assertError(await rt.api.get(`/groups/${key}`), 404, new RegExp(`no saved group with key '${key}'`));
    assertError(await rt.api.delete(`/groups/${key}`), 404, new RegExp(key));
    assert.ok(!((await rt.api.get('/groups')).json().groups as Group[]).some((g) => g.key === key));
    const deleted = (await groupEvents()).filter((e) => e.type === 'group.deleted' && e.data.key === key);
    assert.deepEqual(
      deleted.map((e) => [e.experiment, e.data]),
      [[null, { key, size: 2 }]],
    );
  });

  test('400s say what is wrong and where', async () => {
    const key = uniqueKey();
    assertError(await rt.api.put(`/groups/${key}`, {}), 400, /values/);
    assertError(await rt.api.put(`/groups/${key}`, { values: 'a' }), 400, /values must be array/);
    assertError(await rt.api.put(`/groups/${key}`, { values: ['a', true] }), 400, /values\/1/);
    assertError(await rt.api.put(`/groups/${key}`, { values: ['a', 'b', {}] }), 400, /values\/2/);
    assertError(await rt.api.put(`/groups/${key}`, { values: ['a', ''] }), 400, /values\[1\].*1-512/);
    assertError(
      await rt.api.put(`/groups/${key}`, { values: ['ok', 'x'.repeat(513)] }),
      400,
      /values\[1\] must be a string of 1-512 characters \(it has 513\)/,
    );
    assertError(
      await rt.api.put(`/groups/${key}`, { values: [], description: 'd'.repeat(1001) }),
      400,
      /description/,
    );
    assertError(await rt.api.put(`/groups/${key}`, { values: [], extra: 1 }), 400, /cannot set 'extra'/);
    assertError(await rt.api.put('/groups/-bad', { values: [] }), 400, /group key must be 1-100 characters/);
    assertError(
      await rt.api.put(`/groups/${key}`, { values: Array.from({ length: 100_001 }, (_, i) => i) }),
      400,
      /100000/,
    );
    assertError(await rt.api.get(`/groups/${key}`), 404, /no saved group/);
    assert.equal((await groupEvents()).filter((e) => e.data.key === key).length, 0, 'nothing was saved');
  });

  test('a read key may list and read but not PUT or DELETE (403)', async () => {
    const key = uniqueKey();
    await put(key, { values: ['x'] });
    assertError(await rt.api.put(`/groups/${key}`, { values: ['y'] }, readKey), 403, /admin/);
    const del = await rt.api.call({ method: 'DELETE', url: `/groups/${key}`, key: readKey });
    assertError(del, 403, /admin/);
    assert.deepEqual((await rt.api.get(`/groups/${key}`, readKey)).json().values, ['x']);
    assertError(await rt.api.get('/groups', null), 401);
  });

  test('100,000 values of 36 characters round-trip (about 4 MB), in-process and over a socket', async () => {
    const key = uniqueKey();
    const values = Array.from(
      { length: 100_000 },
      (_, i) => `${String(i).padStart(8, '0')}-0000-7000-8000-000000000000`,
    );
    assert.ok(JSON.stringify({ values }).length > 3_900_000);
    const created = await put(key, { values });
    assert.equal(created.size, 100_000);
    const got = await rt.api.get(`/groups/${key}`);
    assert.deepEqual(got.json().values, values);

    const again = values.slice(0, 99_999).concat(['last']);
    const payload = JSON.stringify({ values: again });
    const res = await send(rt.api.port, {
      method: 'PUT',
      url: `/groups/${key}`,
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      payload,
    });
    assert.equal(res.statusCode, 200, res.body.slice(0, 200));
    assert.equal(res.json().size, 100_000);
    const saved = (await groupEvents()).filter((e) => e.data.key === key).at(-1)!;
    assert.deepEqual(saved.data, { key, size: 100_000, added: 1, removed: 1, created: false });

    // Other routes keep the server's limit; this one stops at its own.
    const big = await send(rt.api.port, {
      method: 'PUT',
      url: `/groups/${key}`,
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      payload: JSON.stringify({ values: ['x'.repeat(9 * 1024 * 1024)] }),
    });
    assertError(big, 413, /larger than the limit of 8388608 bytes/);
    const other = await send(rt.api.port, {
      method: 'POST',
      url: '/experiments',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      payload: JSON.stringify({ slug: uniqueSlug(), description: 'x'.repeat(2 * 1024 * 1024) }),
    });
    assertError(other, 413, /larger than the limit of 1048576 bytes/);
  });

  test('a group named by an experiment cannot be deleted (409 naming it) until that experiment is archived', async (t) => {
    const key = uniqueKey();
    await put(key, { values: ['vip'] });
    const slug = uniqueSlug();
    const created = await rt.api.post('/experiments', {
      slug,
      variants: [
        { key: 'a', trafficPercent: 50 },
        { key: 'b', trafficPercent: 50 },
      ],
      targeting: { userId: { $inGroup: key } },
    });
    if (created.statusCode === 400 || created.json().targeting === undefined) {
      // Experiments learn targeting in another part of issue 35; until then this cannot be set up.
      t.skip('experiments do not take targeting on this branch yet');
      return;
    }
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual((await rt.api.get(`/groups/${key}`)).json().usedBy, [slug]);
    assertError(await rt.api.delete(`/groups/${key}`), 409, new RegExp(`used by experiment '${slug}'`));
    const archived = await rt.api.patch(`/experiment/${slug}`, { status: 'archived' });
    assert.equal(archived.statusCode, 200, archived.body);
    assert.equal((await rt.api.delete(`/groups/${key}`)).statusCode, 204);
  });
});
