// GroupService over the memory store and a real experiment cache: the cache holds each group as a Set
// (and reloads it from the store), usedBy reads experiments' targeting and override conditions, and a
// group in use by a non-archived experiment cannot be deleted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupsUsed } from '../core/entry-rules.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import { ROOT_ACTOR } from '../core/events.js';
import { createExperiment, type Experiment } from '../core/experiment.js';
import { MemoryStore } from '../store/memory-store.js';
import { ExperimentCache } from './experiment-cache.js';
import { groupUsage } from './group-usage.js';
import { GroupService } from './groups.js';

const NOW = '2026-01-01T00:00:00.000Z';
let ids = 0;
const newId = () => `id-${++ids}`;

/** An experiment with targeting fields as issue 35 stores them (Experiment's type does not name them here). */
function experiment(slug: string, fields: Record<string, unknown>, status = 'running'): Experiment {
  const e = createExperiment({ slug, variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] }, NOW);
  return { ...e, ...fields, status } as Experiment;
}

async function setup() {
  const store = new MemoryStore();
  const cache = new ExperimentCache(store);
  await cache.load();
  const service = new GroupService({ store, cache, usedBy: groupUsage(cache), newId, now: () => NOW });
  return { store, cache, service };
}

describe('groupsUsed', () => {
  it('finds $inGroup and $notInGroup in targeting and in overrides’ conditions, nested', () => {
    const e = experiment('e', {
      targeting: { $or: [{ id: { $inGroup: 'a' } }, { $not: { id: { $notInGroup: 'b' } } }] },
      overrides: [
        { variant: 'A', userIds: ['u'] },
        { variant: 'A', condition: { org: { $inGroup: 'c' } } },
      ],
    });
    assert.deepEqual([...groupsUsed(e)].sort(), ['a', 'b', 'c']);
    assert.deepEqual(groupsUsed(experiment('plain', {})), []);
    assert.deepEqual(groupsUsed(experiment('nulls', { targeting: null, overrides: [] })), []);
  });
});

describe('GroupService', () => {
  it('put keeps the group in the cache as a Set; get and list answer from it', async () => {
    const { cache, service } = await setup();
    const revision = cache.revision;
    const put = await service.put('vip', { values: ['u1', 2, 'u1'], description: 'd' }, ROOT_ACTOR);
    assert.deepEqual(put.values, ['u1', 2]);
    assert.ok(cache.revision > revision, 'a put moves the cache revision');
    assert.equal(cache.groups.get('vip')?.has('u1'), true);
    assert.equal(cache.groups.get('vip')?.has('2'), false);
    assert.deepEqual(service.get('vip'), put);
    assert.deepEqual(service.list().groups, [
      { key: 'vip', description: 'd', size: 2, usedBy: [], createdAt: NOW, updatedAt: NOW },
    ]);
    assert.throws(() => service.get('nope'), NotFoundError);
    await assert.rejects(service.put('vip', { values: [true] }, ROOT_ACTOR), ValidationError);
    await assert.rejects(service.put('bad key', { values: [] }, ROOT_ACTOR), ValidationError);
  });

  it('a fresh cache loads the groups the store holds (another instance’s view)', async () => {
    const { store, service } = await setup();
    await service.put('g1', { values: [1, 2, 3] }, ROOT_ACTOR);
    const other = new ExperimentCache(store);
    await other.load();
    assert.deepEqual([...(other.groups.get('g1') ?? [])], [1, 2, 3]);
    assert.equal(other.groupOf('g1')?.size, 3);
  });

  it('delete: 409 naming the non-archived experiments that use the group; archived ones do not count', async () => {
    const { store, cache, service } = await setup();
    await service.put('beta', { values: ['u'] }, ROOT_ACTOR);
    for (const e of [
      experiment('uses-targeting', { targeting: { userId: { $inGroup: 'beta' } } }),
      experiment(
        'uses-override',
        { overrides: [{ variant: 'A', condition: { id: { $notInGroup: 'beta' } } }] },
        'draft',
      ),
      experiment('archived-one', { targeting: { userId: { $inGroup: 'beta' } } }, 'archived'),
      experiment('other', { targeting: { userId: { $inGroup: 'gamma' } } }),
    ]) {
      cache.put(await store.insertExperiment(e));
    }
    assert.deepEqual(service.get('beta').usedBy, ['uses-targeting', 'uses-override']);
    await assert.rejects(
      service.remove('beta', ROOT_ACTOR),
      (err: unknown) =>
        err instanceof ConflictError &&
        /saved group 'beta' is used by experiments 'uses-targeting', 'uses-override'/.test(err.message),
    );
    assert.ok(cache.groups.has('beta'), 'still there');

    for (const slug of ['uses-targeting', 'uses-override']) {
      cache.put(await store.updateExperiment(slug, (e) => ({ ...e, status: 'archived' })));
    }
    await service.remove('beta', ROOT_ACTOR);
    assert.equal(cache.groups.has('beta'), false);
    assert.deepEqual(await store.listGroups(), []);
    await assert.rejects(service.remove('beta', ROOT_ACTOR), NotFoundError);
    const events = await store.listEvents({ type: { prefix: 'group.' }, limit: 10 });
    assert.deepEqual(
      events.map((e) => e.type),
      ['group.saved', 'group.deleted'],
    );
  });
});
