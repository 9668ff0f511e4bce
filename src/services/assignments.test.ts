// Assign on the in-memory store and a real group commit: the answer, and the exposure it leaves behind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotFoundError } from '../core/errors.js';
import { createExperiment } from '../core/experiment.js';
import type { ExposureBatch } from '../core/writes.js';
import { GroupCommit } from '../ingest/group-commit.js';
import { MemoryStore } from '../store/memory-store.js';
import { createAssign } from './assignments.js';
import { ExperimentCache } from './experiment-cache.js';

const NOW = '2026-03-01T12:00:00.000Z';

async function setup() {
  const store = new MemoryStore();
  const variants = [
    { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
    { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
  ];
  const running = await store.insertExperiment(
    createExperiment({ slug: 'live', status: 'running', variants }, NOW),
  );
  await store.insertExperiment(createExperiment({ slug: 'draft', variants }, NOW));
  const cache = new ExperimentCache(store);
  await cache.load();
  /** Every exposure batch handed to the store. */
  const batches: ExposureBatch[] = [];
  const ingest = new GroupCommit((batch) => {
    batches.push(...batch.exposures);
    return store.appendBatch(batch);
  });
  let n = 0;
  const assign = createAssign({
    experiments: cache,
    ingest,
    random: () => 0.75,
    newId: () => `as-${++n}`,
    now: () => NOW,
  });
  return { store, cache, ingest, assign, batches, id: running.id };
}

test('assign answers a variant and records one exposure of the running version', async () => {
  const { store, ingest, assign, id } = await setup();
  const answer = assign('live', 'u-1', { plan: 'pro', 'q"k': 'é😀' });
  assert.deepEqual(JSON.parse(answer.json), {
    variant: answer.variant,
    payload: answer.payload,
    assignmentId: answer.assignmentId,
    inExperiment: true,
  });
  assert.deepEqual([answer.variant, answer.payload], ['B', { prompt: 'b' }]);
  await ingest.drain();
  assert.deepEqual(await store.listExposures(id), [
    {
      assignmentId: answer.assignmentId,
      experimentId: id,
      version: 1,
      variantKey: 'B',
      userId: 'u-1',
      context: { plan: 'pro', 'q"k': 'é😀' },
      createdAt: NOW,
    },
  ]);
  assert.deepEqual(
    (await store.readRollups(id)).exposures.map((e) => [e.version, e.variantKey, e.n]),
    [[1, 'B', 1]],
  );
});

test('after a change of variants, exposures carry the new version', async () => {
  const { store, cache, ingest, assign, id } = await setup();
  assign('live', 'before');
  await store.updateExperiment('live', (e) => ({ ...e, version: 2 }));
  await cache.load();
  const after = assign('live', 'after');
  await ingest.drain();
  const exposures = await store.listExposures(id);
  assert.deepEqual(
    exposures.map((e) => [e.userId, e.version]),
    [
      ['before', 1],
      ['after', 2],
    ],
  );
  assert.equal(exposures[1]!.assignmentId, after.assignmentId);
});

test('every exposure is stored in one form: [assignmentId, variantKey, userId, context, createdAt]', async () => {
  const { ingest, assign, batches } = await setup();
  assign('live', 'u-1');
  assign('live', 'u-2', { nested: { deep: [1, null] } });
  await ingest.drain();
  assert.deepEqual(
    // The assignment id starts with the id drawn, then says what it was issued for (core/assignment-id.ts).
    batches.flatMap((b) => JSON.parse(b.json)).map(([id, ...rest]) => [id.split('.')[0], ...rest]),
    [
      ['as-1', 'B', 'u-1', null, NOW],
      ['as-2', 'B', 'u-2', { nested: { deep: [1, null] } }, NOW],
    ],
  );
});

test('assign of an experiment that is not running, or unknown, throws NotFoundError and records nothing', async () => {
  const { ingest, assign } = await setup();
  assert.throws(() => assign('draft', 'u-1'), NotFoundError);
  assert.throws(() => assign('missing', 'u-1'), NotFoundError);
  assert.equal(ingest.pendingExposures, 0);
});
