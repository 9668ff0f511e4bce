// The definitions answers: built once per change, the same bytes plain and gzip, a tag per content.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { createExperiment, type Status } from '../core/experiment.js';
import type { StoredExperiment } from '../store/store.js';
import { type Bytes, DefinitionsService } from './definitions.js';
import { ExperimentCache } from './experiment-cache.js';

const NOW = '2025-01-01T00:00:00.000Z';
let nextId = 1;

function stored(slug: string, status: Status = 'running', prompt = 'hello'): StoredExperiment {
  const variants = [
    { key: 'A', payload: { prompt }, trafficPercent: 50 },
    { key: 'B', payload: { prompt: `${prompt}!` }, trafficPercent: 50 },
  ];
  return { id: nextId++, experiment: createExperiment({ slug, variants, status }, NOW) };
}

function cacheOf(rows: StoredExperiment[]): ExperimentCache {
  const cache = new ExperimentCache({
    listExperiments: async () => [...rows],
    findExperiment: async () => undefined,
  });
  for (const r of rows) cache.put(r);
  return cache;
}

const text = (b: Bytes) => {
  const all = Buffer.concat(b.chunks);
  assert.equal(all.length, b.length);
  return all.toString('utf8');
};

describe('DefinitionsService', () => {
  it('answers the running experiments sorted by slug; the gzip gunzips to the same JSON', async () => {
    const rows = [stored('b'), stored('a', 'running', 'x'.repeat(5000)), stored('c', 'draft')];
    const service = new DefinitionsService(cacheOf(rows));
    const answer = service.answer(null);
    const json = text(answer.identity());
    const parsed = JSON.parse(json) as { experiments: { slug: string; assignmentIdKey: number }[] };
    assert.deepEqual(
      parsed.experiments.map((d) => d.slug),
      ['a', 'b'],
    );
    assert.equal(parsed.experiments[0]!.assignmentIdKey, rows[1]!.id);
    const gz = await answer.gzip();
    assert.equal(gunzipSync(Buffer.concat(gz.chunks)).toString('utf8'), json);
    assert.ok(gz.length < answer.identity().length, 'compressed');
    assert.match(answer.etag, /^"[A-Za-z0-9_-]{27}"$/);
  });

  it('no experiments is an empty list, gzip too', async () => {
    const answer = new DefinitionsService(cacheOf([])).answer(null);
    assert.equal(text(answer.identity()), '{"experiments":[],"groups":{}}');
    assert.equal(
      gunzipSync(Buffer.concat((await answer.gzip()).chunks)).toString(),
      '{"experiments":[],"groups":{}}',
    );
  });

  it('is the same answer until the table changes; a key sees only its experiments', () => {
    const rows = [stored('a'), stored('b'), stored('c')];
    const cache = cacheOf(rows);
    const service = new DefinitionsService(cache);
    const all = service.answer(null);
    assert.equal(service.answer(null), all, 'built once, answered again');
    const some = service.answer(new Set(['c', 'a', 'nope']));
    assert.deepEqual(
      (JSON.parse(text(some.identity())) as { experiments: { slug: string }[] }).experiments.map(
        (d) => d.slug,
      ),
      ['a', 'c'],
    );
    assert.notEqual(some.etag, all.etag);
    assert.equal(service.answer(new Set(['a', 'c'])).etag, some.etag, 'the same set, the same tag');
    assert.equal(service.answer(new Set()).etag, new DefinitionsService(cacheOf([])).answer(null).etag);

    // A change that leaves every definition as it was (a rename) answers the same tag.
    cache.put({ id: rows[0]!.id, experiment: { ...rows[0]!.experiment, name: 'renamed' } });
    const renamed = service.answer(null);
    assert.notEqual(renamed, all, 'rebuilt after a change');
    assert.equal(renamed.etag, all.etag);

    // New variants (a new version) change the tag; a stopped experiment leaves the answer.
    const e = rows[1]!.experiment;
    cache.put({
      id: rows[1]!.id,
      experiment: { ...e, version: 2, variants: [{ ...e.variants[0]!, trafficPercent: 100 }] },
    });
    const changed = service.answer(null);
    assert.notEqual(changed.etag, all.etag);
    assert.match(text(changed.identity()), /"version":2/);
    cache.put({ id: rows[2]!.id, experiment: { ...rows[2]!.experiment, status: 'paused', active: false } });
    assert.doesNotMatch(text(service.answer(null).identity()), /"slug":"c"/);
  });

  it('a reload of unchanged experiments answers the same tag', async () => {
    const rows = [stored('a'), stored('b')];
    const cache = cacheOf(rows);
    const service = new DefinitionsService(cache);
    const before = service.answer(null);
    await cache.load();
    const after = service.answer(null);
    assert.notEqual(after, before);
    assert.equal(after.etag, before.etag);
    assert.equal(text(after.identity()), text(before.identity()));
  });
});
