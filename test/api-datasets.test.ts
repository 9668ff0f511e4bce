// Datasets (issue 40, ADR 0046) through the real server: 10,000 items in one request (over a socket: the
// route's own body limit), versions that read exactly what they held, idempotent re-sends, pages and the
// NDJSON export covering every item once, deletes, scopes, dataset.* events, and 400s that say why.
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

interface Item {
  id: string;
  input: unknown;
  expected: unknown;
  metadata: Record<string, unknown> | null;
  since?: number;
}

interface Event {
  type: string;
  experiment: string | null;
  data: Record<string, unknown>;
}

const dir = makeTempDir();
let rt: TestRuntime;
let readKey: string;

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'datasets');
  const res = await rt.api.post('/keys', { name: 'reader', scopes: ['read'] });
  assert.equal(res.statusCode, 201, res.body);
  readKey = res.json().key;
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

const uniqueName = () => uniqueSlug('ds');

async function create(body: Record<string, unknown>) {
  const res = await rt.api.post('/datasets', body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function putItems(name: string, items: unknown[]) {
  const res = await rt.api.post(`/datasets/${name}/items`, { items });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** Every item of a version, walking the pages; asserts no page repeats an id. */
async function allItems(name: string, query = '', limit = 1000, key?: string): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | null = null;
  do {
    const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await rt.api.get(`/datasets/${name}/items?limit=${limit}${query}${after}`, key);
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  assert.equal(new Set(all.map((i) => i.id)).size, all.length, 'an item came twice');
  return all;
}

async function exported(name: string, query = '', key?: string): Promise<Item[]> {
  const res = await rt.api.get(`/datasets/${name}/export${query}`, key);
  assert.equal(res.statusCode, 200, res.body.slice(0, 200));
  assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
  return res.body
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

const withoutSince = (items: Item[]) => items.map(({ since: _, ...rest }) => rest);

async function datasetEvents(name: string): Promise<Event[]> {
  const res = await rt.api.get('/events?type=dataset.*&limit=100');
  assert.equal(res.statusCode, 200, res.body);
  return (res.json().events as Event[]).filter((e) => e.data.name === name);
}

describe('datasets', { skip: SKIP_BACKEND }, () => {
  test('10,000 items in one request (over 1 MB, over a socket); pages and the export read each once, in order', async () => {
    const name = uniqueName();
    const items = Array.from({ length: 10_000 }, (_, i) => ({
      id: `q-${i}`,
      input: { question: `What is ${i} + ${i}? ${'Explain briefly. '.repeat(6)}` },
      expected: { answer: String(2 * i) },
      metadata: { n: i, topic: i % 2 === 0 ? 'even' : 'odd' },
    }));
    const payload = JSON.stringify({ name, items });
    assert.ok(payload.length > 2_000_000, `${payload.length} bytes`);
    const res = await send(rt.api.port, {
      method: 'POST',
      url: '/datasets',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      payload,
    });
    assert.equal(res.statusCode, 201, res.body.slice(0, 300));
    const created = res.json();
    assert.equal(created.name, name);
    assert.equal(created.version, 1);
    assert.equal(created.items, 10_000);
    assert.equal(created.description, '');
    assert.equal(created.createdAt, created.updatedAt);
    assert.deepEqual((await rt.api.get(`/datasets/${name}`, readKey)).json(), created);

    const read = await allItems(name, '', 777);
    assert.deepEqual(withoutSince(read), items);
    assert.ok(read.every((i) => i.since === 1));
    assert.deepEqual(await exported(name), items);
    const res2 = await rt.api.get(`/datasets/${name}/export`);
    assert.match(String(res2.headers['content-disposition']), new RegExp(`${name}-v1\\.ndjson`));
  });

  test('appending and changing makes version 2; versions 1 and 2 read exactly their items; a re-send keeps the version', async () => {
    const name = uniqueName();
    const v1 = [
      { id: 'a', input: { q: 'A?' }, expected: 'a' },
      { id: 'b', input: 'B?', metadata: { hard: true } },
      { id: 'c', input: [1, 2, 3], expected: { x: 1, y: 2 } },
    ];
    const created = await create({ name, description: 'three', items: v1 });
    assert.equal(created.description, 'three');
    const v1Read = [
      { id: 'a', input: { q: 'A?' }, expected: 'a', metadata: null },
      { id: 'b', input: 'B?', expected: null, metadata: { hard: true } },
      { id: 'c', input: [1, 2, 3], expected: { x: 1, y: 2 }, metadata: null },
    ];
    assert.deepEqual(withoutSince(await allItems(name)), v1Read);

    // b changes, c is sent as it is (its keys in another order), d is new, and e has no id: a UUID is made.
    const change = [
      { id: 'b', input: 'B, changed?', metadata: { hard: true } },
      { id: 'c', input: [1, 2, 3], expected: { y: 2, x: 1 } },
      { id: 'd', input: { q: 'D?' } },
      { input: { q: 'E?' } },
    ];
    const v2 = await putItems(name, change);
    assert.deepEqual(
      [v2.version, v2.items, v2.added, v2.changed, v2.removed, v2.unchanged],
      [2, 5, 2, 1, 0, 1],
    );
    assert.equal(v2.id, created.id);
    const v2Items = await allItems(name, '', 2);
    const made = v2Items.at(-1)!.id;
    assert.match(made, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual(v2Items, [
      { ...v1Read[0]!, since: 1 },
      { id: 'b', input: 'B, changed?', expected: null, metadata: { hard: true }, since: 2 },
      { ...v1Read[2]!, since: 1 },
      { id: 'd', input: { q: 'D?' }, expected: null, metadata: null, since: 2 },
      { id: made, input: { q: 'E?' }, expected: null, metadata: null, since: 2 },
    ]);
    assert.deepEqual(withoutSince(await allItems(name, '&version=1', 1)), v1Read);
    assert.deepEqual(await allItems(name, '&version=2'), v2Items);
    assert.deepEqual(await exported(name, '?version=1'), v1Read);
    assert.deepEqual(await exported(name), withoutSince(v2Items));

    // The same items again (b as changed, d as added): nothing changes, the version stays.
    const again = await putItems(name, [change[0], change[1], change[2]]);
    assert.deepEqual([again.version, again.added, again.changed, again.unchanged], [2, 0, 0, 3]);
    assert.equal(again.updatedAt, v2.updatedAt);
    assert.equal((await rt.api.get(`/datasets/${name}`)).json().version, 2);

    // Removing an item makes version 3; version 2 still holds it.
    const removed = await rt.api.delete(`/datasets/${name}/items/d`);
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual([removed.json().version, removed.json().items, removed.json().removed], [3, 4, 1]);
    assert.deepEqual(
      (await allItems(name)).map((i) => i.id),
      ['a', 'b', 'c', made],
    );
    assert.deepEqual(await allItems(name, '&version=2'), v2Items);
    assertError(await rt.api.delete(`/datasets/${name}/items/d`), 404, /no item 'd' in version 3/);
    // Added again, it comes last and from version 4.
    const back = await putItems(name, [{ id: 'd', input: { q: 'D?' } }]);
    assert.deepEqual([back.version, back.added], [4, 1]);
    const since = (await allItems(name)).map((i) => `${i.id}@${i.since}`);
    assert.deepEqual(since, ['a@1', 'b@2', 'c@1', `${made}@2`, 'd@4']);
    assertError(
      await rt.api.get(`/datasets/${name}/items?version=5`),
      404,
      /no version 5 \(its versions are 1 to 4\)/,
    );
    assertError(await rt.api.get(`/datasets/${name}/export?version=9`), 404, /no version 9/);

    const events = await datasetEvents(name);
    assert.ok(events.every((e) => e.experiment === null && e.data.id === created.id));
    assert.deepEqual(events[0]!.data, { id: created.id, name, version: 1, items: 3 });
    // type, version, items, added, changed, removed
    const counts = (e: Event) => ['version', 'items', 'added', 'changed', 'removed'].map((k) => e.data[k]);
    assert.deepEqual(
      events.map((e) => [e.type, ...counts(e)]),
      [
        ['dataset.created', 1, 3, undefined, undefined, undefined],
        ['dataset.changed', 2, 5, 2, 1, 0],
        ['dataset.changed', 3, 4, 0, 0, 1],
        ['dataset.changed', 4, 5, 1, 0, 0],
      ],
    );
  });

  test('GET /datasets pages every dataset once', async () => {
    const names = [uniqueName(), uniqueName(), uniqueName()];
    for (const name of names) await create({ name, items: [] });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await rt.api.get(`/datasets?limit=2${after}`, readKey);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      assert.ok(page.datasets.length <= 2);
      seen.push(...page.datasets.map((d: { name: string }) => d.name));
      cursor = page.nextCursor;
    } while (cursor !== null);
    assert.equal(new Set(seen).size, seen.length, 'a dataset came twice');
    // In creation order by time, then id: datasets made within one millisecond may come in either order.
    assert.deepEqual(seen.filter((n) => names.includes(n)).sort(), [...names].sort());
    assertError(await rt.api.get('/datasets?cursor=nonsense'), 400, /cursor is not valid/);
  });

  test('DELETE answers 204 and takes the items; the name can be used again, by another dataset', async () => {
    const name = uniqueName();
    const odd = 'a/b c?é';
    const first = await create({
      name,
      items: [
        { id: 'x', input: 1 },
        { id: odd, input: 2 },
      ],
    });
    // Any id travels in the path once encoded.
    const gone = await rt.api.delete(`/datasets/${name}/items/${encodeURIComponent(odd)}`);
    assert.equal(gone.statusCode, 200, gone.body);
    assert.deepEqual([gone.json().version, gone.json().items], [2, 1]);
    const res = await rt.api.delete(`/datasets/${name}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assertError(await rt.api.get(`/datasets/${name}`), 404, new RegExp(`no dataset named '${name}'`));
    assertError(await rt.api.get(`/datasets/${name}/items`), 404, /no dataset named/);
    assertError(await rt.api.get(`/datasets/${name}/export`), 404, /no dataset named/);
    assertError(await rt.api.delete(`/datasets/${name}`), 404, /no dataset named/);
    assertError(await rt.api.post(`/datasets/${name}/items`, { items: [{ input: 1 }] }), 404, /no dataset/);
    const second = await create({ name, items: [] });
    assert.notEqual(second.id, first.id);
    assert.deepEqual(await allItems(name), []);
    const deleted = (await datasetEvents(name)).filter((e) => e.type === 'dataset.deleted');
    assert.deepEqual(
      deleted.map((e) => e.data),
      [{ id: first.id, name, version: 2, items: 1 }],
    );
  });

  test('a read key (even one limited to experiments) reads; writing needs admin for every experiment (403)', async () => {
    const name = uniqueName();
    await create({ name, items: [{ id: 'x', input: { q: 1 } }] });
    const limited = await rt.api.post('/keys', {
      name: 'limited',
      scopes: ['read', 'admin'],
      experiments: [uniqueSlug()],
    });
    assert.equal(limited.statusCode, 201, limited.body);
    const limitedKey: string = limited.json().key;
    for (const key of [readKey, limitedKey]) {
      assert.equal((await rt.api.get('/datasets', key)).statusCode, 200);
      assert.equal((await rt.api.get(`/datasets/${name}`, key)).json().items, 1);
      assert.deepEqual(
        (await allItems(name, '', 100, key)).map((i) => i.id),
        ['x'],
      );
      assert.equal((await exported(name, '', key)).length, 1);
    }
    const writes = (key: string) => [
      rt.api.post('/datasets', { name: uniqueName(), items: [] }, key),
      rt.api.post(`/datasets/${name}/items`, { items: [{ id: 'y', input: 2 }] }, key),
      rt.api.call({ method: 'DELETE', url: `/datasets/${name}/items/x`, key }),
      rt.api.call({ method: 'DELETE', url: `/datasets/${name}`, key }),
    ];
    for (const res of await Promise.all(writes(readKey))) assertError(res, 403, /lacks the 'admin' scope/);
    for (const res of await Promise.all(writes(limitedKey)))
      assertError(res, 403, /needs a key for every experiment/);
    assertError(await rt.api.get('/datasets', null), 401);
    assert.deepEqual((await rt.api.get(`/datasets/${name}`)).json().version, 1, 'nothing changed');
  });

  test('400s say what is wrong and where; a taken name is 409; nothing is written', async () => {
    const name = uniqueName();
    assertError(await rt.api.post('/datasets', { items: [] }), 400, /name/);
    assertError(await rt.api.post('/datasets', { name }), 400, /items/);
    assertError(
      await rt.api.post('/datasets', { name: '-bad', items: [] }),
      400,
      /dataset name must be 1-100/,
    );
    assertError(
      await rt.api.post('/datasets', {
        name,
        items: [{ id: 'a', input: 1 }, { input: 2 }, { id: 'a', input: 3 }],
      }),
      400,
      /items\[2\]\.id 'a' repeats items\[0\]\.id/,
    );
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ id: String(i), input: i }));
    assertError(await rt.api.post('/datasets', { name, items: tooMany }), 400, /10000/);
    assertError(await rt.api.post('/datasets', { name, items: [{ id: 'a' }] }), 400, /input/);
    assertError(
      await rt.api.post('/datasets', { name, items: [{ input: 1, metadata: [1] }] }),
      400,
      /metadata/,
    );
    assertError(await rt.api.post('/datasets', { name, items: [{ id: '', input: 1 }] }), 400, /id/);
    assertError(
      await rt.api.post('/datasets', { name, items: [{ id: 'x'.repeat(257), input: 1 }] }),
      400,
      /id/,
    );
    assertError(await rt.api.post('/datasets', { name, items: [{ input: 1, extra: 1 }] }), 400, /extra/);
    assertError(await rt.api.get(`/datasets/${name}`), 404, /no dataset named/);

    await create({ name, items: [{ id: 'a', input: 1 }] });
    assertError(
      await rt.api.post('/datasets', { name, items: [] }),
      409,
      new RegExp(`a dataset named '${name}' already exists`),
    );
    assertError(await rt.api.post(`/datasets/${name}/items`, { items: [] }), 400, /items/);
    assertError(
      await rt.api.post(`/datasets/${name}/items`, {
        items: [
          { id: 'b', input: 1 },
          { id: 'b', input: 2 },
        ],
      }),
      400,
      /items\[1\]\.id 'b' repeats/,
    );
    assertError(await rt.api.get(`/datasets/${name}/items?cursor=zzz`), 400, /cursor is not valid/);
    assertError(await rt.api.get(`/datasets/${name}/items?version=0`), 400, /version/);
    assert.equal((await rt.api.get(`/datasets/${name}`)).json().version, 1);
    assert.deepEqual(
      (await datasetEvents(name)).map((e) => e.type),
      ['dataset.created'],
    );
  });
});
