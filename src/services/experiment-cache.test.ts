// Tests the in-memory experiment table against an in-memory fake of the two store reads it uses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createExperiment, type Status } from '../core/experiment.js';
import type { StoredExperiment } from '../store/store.js';
import { ExperimentCache, type ExperimentCacheStore } from './experiment-cache.js';

const NOW = '2025-01-01T00:00:00.000Z';
let nextId = 1;

function stored(slug: string, status: Status = 'running'): StoredExperiment {
  const variants = [
    { key: 'A', payload: {}, trafficPercent: 50 },
    { key: 'B', payload: {}, trafficPercent: 50 },
  ];
  return { id: nextId++, experiment: createExperiment({ slug, variants, status }, NOW) };
}

/** The store's experiments, and a count of the reads the cache made. */
function fakeStore(rows: StoredExperiment[]) {
  const calls = { list: 0, find: 0 };
  const store: ExperimentCacheStore = {
    listExperiments: async () => {
      calls.list++;
      return [...rows];
    },
    findExperiment: async (slug) => {
      calls.find++;
      return rows.find((r) => r.experiment.slug === slug);
    },
  };
  return { store, calls, rows };
}

describe('ExperimentCache', () => {
  it('load fills the table from the store', async () => {
    const { store } = fakeStore([stored('a'), stored('b', 'draft')]);
    const cache = new ExperimentCache(store);
    await cache.load();
    assert.equal(cache.lookup('a')?.experiment.slug, 'a');
    assert.ok(cache.lookup('a')?.compiled, 'compiled once, on load');
    assert.deepEqual(
      cache.list('draft').map((e) => e.experiment.slug),
      ['b'],
    );
    assert.equal(cache.list().length, 2);
  });

  it('a reload racing a local change reads again, so the change is not lost', async () => {
    const rows = [stored('a')];
    let release: () => void = () => {};
    let reads = 0;
    const store: ExperimentCacheStore = {
      // The first read takes its snapshot at once but answers only when released: a write lands meanwhile.
      listExperiments: async () => {
        reads++;
        const snapshot = [...rows];
        if (reads === 1) await new Promise<void>((r) => (release = r));
        return snapshot;
      },
      findExperiment: async () => undefined,
    };
    const cache = new ExperimentCache(store);
    const loading = cache.load();
    await new Promise((r) => setImmediate(r));
    const created = stored('b');
    rows.push(created); // committed by this instance's management service…
    cache.put(created); // …which then puts it in the cache, while the stale snapshot is still in flight
    release();
    await loading;
    assert.equal(reads, 2, 'the stale snapshot is read again');
    assert.equal(cache.lookup('b')?.id, created.id);
  });

  it('lookup never touches the store', async () => {
    const { store, calls } = fakeStore([stored('a'), stored('elsewhere')]);
    const cache = new ExperimentCache(store);
    cache.put(stored('a'));
    assert.ok(cache.lookup('a'));
    assert.equal(cache.lookup('elsewhere'), undefined, 'not loaded: unknown, without asking');
    assert.deepEqual(calls, { list: 0, find: 0 });
  });

  it('find remembers a slug another instance created', async () => {
    const { store, calls, rows } = fakeStore([stored('a')]);
    const cache = new ExperimentCache(store);
    await cache.load();
    rows.push(stored('new-elsewhere'));
    assert.equal(cache.lookup('new-elsewhere'), undefined);
    assert.equal((await cache.find('new-elsewhere'))?.experiment.slug, 'new-elsewhere');
    assert.equal(calls.find, 1);
    assert.ok(cache.lookup('new-elsewhere'), 'assign now sees it without I/O');
    await cache.find('new-elsewhere');
    assert.equal(calls.find, 1, 'a known slug is not asked for again');
  });

  it('find answers an impossible slug without asking the store', async () => {
    const { store, calls } = fakeStore([]);
    const cache = new ExperimentCache(store);
    assert.equal(await cache.find('no/such\u0000slug'), undefined);
    assert.equal(await cache.find('missing'), undefined);
    assert.equal(calls.find, 1, 'only the possible slug was asked for');
  });

  it('a failed reload keeps the table it had', async () => {
    let fail = false;
    const rows = [stored('a')];
    const cache = new ExperimentCache({
      listExperiments: async () => {
        if (fail) throw new Error('database down');
        return rows;
      },
      findExperiment: async () => undefined,
    });
    await cache.load();
    fail = true;
    await assert.rejects(cache.load(), /database down/);
    assert.ok(cache.lookup('a'));
  });

  it('put replaces an entry and forget drops it', async () => {
    const cache = new ExperimentCache(fakeStore([]).store);
    const first = stored('a', 'draft');
    cache.put(first);
    const running = { id: first.id, experiment: { ...first.experiment, status: 'running' as const } };
    cache.put(running);
    assert.equal(cache.lookup('a')?.experiment.status, 'running');
    cache.forget('a');
    assert.equal(cache.lookup('a'), undefined);
    assert.deepEqual(cache.list(), []);
  });
});
