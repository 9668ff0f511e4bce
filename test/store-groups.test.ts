// The store contract for saved groups (migration 021, ADR 0038), on a real SQLite file, in-memory SQLite,
// PostgreSQL (when reachable) and the memory fake: put inserts then replaces (createdAt kept), values come
// back exactly (strings and numbers, order kept, 100,000 of them), each change commits with its events and
// bumps the revision other instances watch, delete answers whether there was a group.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type EventSource, ROOT_ACTOR } from '../src/core/events.js';
import { groupDeleted, groupSaved } from '../src/core/groups.js';
import { newId } from '../src/core/ids.js';
import { type DatabaseTarget, openStore } from '../src/store/index.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { EventStore, Store, StoredGroup } from '../src/store/store.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'agentsplit-groups-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const databases: TestDatabase[] = [];
after(async () => {
  for (const d of databases) await d.drop();
});

const sqlBackends: Array<{ name: string; target: () => Promise<DatabaseTarget>; skip?: boolean }> = [
  { name: 'SQLite file', target: async () => ({ kind: 'sqlite', path: join(dir, `${Math.random()}.db`) }) },
  { name: 'SQLite in memory', target: async () => ({ kind: 'sqlite', path: ':memory:' }) },
  {
    name: 'PostgreSQL',
    skip: !(await postgresReachable()),
    target: async () => {
      const db = await createTestDatabase('groups');
      databases.push(db);
      return { kind: 'postgres', url: db.url };
    },
  },
];
const backends: Array<{ name: string; open: () => Promise<Store & EventStore>; skip?: boolean }> = [
  ...sqlBackends.map((b) => ({ name: b.name, skip: b.skip, open: async () => openStore(await b.target()) })),
  { name: 'in-memory store', open: async () => new MemoryStore() },
];

const T1 = '2026-03-01T12:00:00.000Z';
const T2 = '2026-03-02T08:30:00.000Z';
const src = (at: string): EventSource => ({ actor: ROOT_ACTOR, at, newId });

function group(key: string, values: Array<string | number>, at: string, description = ''): StoredGroup {
  return { key, description, values, createdAt: at, updatedAt: at };
}

for (const backend of backends) {
  describe(`store contract, saved groups: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store & EventStore;
    before(async () => {
      store = await backend.open();
    });
    after(async () => {
      await store?.close();
    });

    test('put inserts, then replaces keeping createdAt; listGroups reads every group by key, values exact', async () => {
      assert.deepEqual(await store.listGroups(), []);
      const r0 = await store.experimentsRevision();
      const seen: Array<[StoredGroup | undefined, StoredGroup]> = [];
      const first = await store.putGroup(group('vip', ['a', 7, '7', 1.5, -0, 'é"\\'], T1, 'VIPs'), (b, a) => {
        seen.push([b, a]);
        return groupSaved(src(T1), 'vip', b?.values, a.values);
      });
      assert.deepEqual(first, group('vip', ['a', 7, '7', 1.5, -0, 'é"\\'], T1, 'VIPs'));
      assert.equal(seen[0]![0], undefined);
      await store.putGroup(group('alpha', [], T1), () => []);
      const r1 = await store.experimentsRevision();
      assert.ok(r1 > r0, 'a put bumps the revision');

      const second = await store.putGroup(group('vip', ['b', 7], T2), (b, a) => {
        seen.push([b, a]);
        return groupSaved(src(T2), 'vip', b?.values, a.values);
      });
      assert.equal(second.createdAt, T1, 'createdAt is the first put’s');
      assert.equal(second.updatedAt, T2);
      assert.equal(second.description, '');
      assert.deepEqual(seen[1]![0]?.values, ['a', 7, '7', 1.5, 0, 'é"\\']);
      assert.ok((await store.experimentsRevision()) > r1);

      const all = await store.listGroups();
      assert.deepEqual(
        all.map((g) => g.key),
        ['alpha', 'vip'],
      );
      assert.deepEqual(all[1], {
        key: 'vip',
        description: '',
        values: ['b', 7],
        createdAt: T1,
        updatedAt: T2,
      });
      for (const v of all[1]!.values) assert.equal(typeof v, v === 7 ? 'number' : 'string');

      const events = await store.listEvents({ type: { prefix: 'group.' }, limit: 10 });
      assert.deepEqual(
        events.map((e) => [e.type, e.experiment, e.data]),
        [
          ['group.saved', null, { key: 'vip', size: 6, added: 6, removed: 0, created: true }],
          ['group.saved', null, { key: 'vip', size: 2, added: 1, removed: 5, created: false }],
        ],
      );
    });

    test('delete removes the group with its events and bumps the revision; false when there is none', async () => {
      await store.putGroup(group('gone', [1, 2, 3], T1), () => []);
      const r0 = await store.experimentsRevision();
      const deleted = await store.deleteGroup('gone', (before) => {
        assert.deepEqual(before.values, [1, 2, 3]);
        return groupDeleted(src(T2), 'gone', before.values.length);
      });
      assert.equal(deleted, true);
      assert.ok((await store.experimentsRevision()) > r0);
      assert.ok(!(await store.listGroups()).some((g) => g.key === 'gone'));
      const events = await store.listEvents({ type: { exact: 'group.deleted' }, limit: 10 });
      assert.deepEqual(
        events.map((e) => e.data),
        [{ key: 'gone', size: 3 }],
      );
      assert.equal(
        await store.deleteGroup('gone', () => assert.fail('no events for a group that is not there')),
        false,
      );
    });

    test('a change whose events fail to commit leaves the group as it was', async () => {
      await store.putGroup(group('kept', ['x'], T1), () => []);
      const event = groupSaved(src(T2), 'kept', ['x'], ['y'])[0]!;
      // The same event id twice: the history's unique id refuses the second, and the put with it.
      await assert.rejects(store.putGroup(group('kept', ['y'], T2), () => [event, event]));
      const kept = (await store.listGroups()).find((g) => g.key === 'kept');
      assert.deepEqual(kept?.values, ['x']);
    });

    test('100,000 values round-trip in order', async () => {
      const values: Array<string | number> = Array.from({ length: 100_000 }, (_, i) =>
        i % 3 === 0 ? i : `${String(i).padStart(8, '0')}-0000-7000-8000-000000000000`,
      );
      await store.putGroup(group('big', values, T1), () => []);
      const big = (await store.listGroups()).find((g) => g.key === 'big');
      assert.deepEqual(big?.values, values);
    });
  });
}
