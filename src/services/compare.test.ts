// The comparison service on the in-memory store: it reads at most maxCompared results per variant,
// newest first, across pages of the store, and says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createExperiment } from '../core/experiment.js';
import type { NewResult } from '../core/writes.js';
import { MemoryStore } from '../store/memory-store.js';
import { CompareService } from './compare.js';
import { ExperimentCache } from './experiment-cache.js';

const NOW = '2026-03-01T12:00:00.000Z';

async function setup(countA: number, countB: number, maxCompared: number) {
  const store = new MemoryStore();
  const experiment = createExperiment(
    {
      slug: 'prompts',
      status: 'running',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
    },
    NOW,
  );
  const { id } = await store.insertExperiment(experiment);
  const results: NewResult[] = [];
  const add = (variantKey: string, i: number) =>
    results.push({
      logId: `${variantKey}-${i}`,
      experimentId: id,
      version: 1,
      variantKey,
      knownVariant: true,
      userId: null,
      assignmentId: null,
      // Inputs 0..9 in turn; the oldest results (i < 10) answer input "old" instead.
      input: JSON.stringify({ q: i < 10 ? 'old' : String(i % 10) }),
      output: null,
      metrics: JSON.stringify({ score: i }),
      context: null,
      timestamp: null,
      createdAt: NOW,
    });
  for (let i = 0; i < countA; i++) add('A', i);
  for (let i = 0; i < countB; i++) add('B', i);
  await store.appendBatch({ results, exposures: [] });
  return new CompareService({ experiments: new ExperimentCache(store), store, maxCompared });
}

test('more results than maxCompared: the newest are read, across store pages, and truncated is said', async () => {
  const compare = await setup(2600, 20, 2500);
  const got = await compare.compare('prompts', { a: 'A', b: 'B', metric: 'score', limit: 100 });
  assert.deepEqual(got.scanned, { a: 2500, b: 20 });
  assert.equal(got.truncated, true);
  // A's 100 oldest (0..99) were not read: its "old" input has only B's ten results.
  const old = got.inputs.find((i) => i.input?.q === 'old')!;
  assert.deepEqual([old.a.n, old.b.n], [0, 10]);
  const n = got.inputs.reduce((t, i) => t + i.a.n, 0);
  assert.equal(n, 2500);
  // Input "3": A's 13, 23, …, 2593 from 103 on (250 results), mean of 103..2593 step 10 = 1348.
  const three = got.inputs.find((i) => i.input?.q === '3')!;
  assert.deepEqual([three.a.n, three.a.mean, three.b.n, three.b.mean], [250, 1348, 1, 13]);
  assert.equal(three.a.outputs.length, 3);
  assert.deepEqual(
    three.a.outputs.map((o) => o.logId),
    ['A-2593', 'A-2583', 'A-2573'],
  );
});

test('exactly maxCompared results: all read, not truncated', async () => {
  const compare = await setup(1000, 3, 1000);
  const got = await compare.compare('prompts', { a: 'A', b: 'B' });
  assert.deepEqual([got.scanned, got.truncated], [{ a: 1000, b: 3 }, false]);
});
