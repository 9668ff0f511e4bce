// The result service on the in-memory store and a real group commit: what a client's log leaves behind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { createExperiment } from '../core/experiment.js';
import type { NewResult } from '../core/writes.js';
import { GroupCommit } from '../ingest/group-commit.js';
import { MemoryStore } from '../store/memory-store.js';
import { ExperimentCache } from './experiment-cache.js';
import { IssuedAssignments } from './issued-assignments.js';
import { ResultService } from './results.js';

const NOW = '2026-03-01T12:00:00.000Z';

async function setup(status: 'running' | 'draft' = 'running') {
  const store = new MemoryStore();
  const experiment = createExperiment(
    {
      slug: 'prompts',
      status,
      variants: [
        { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
      ],
    },
    NOW,
  );
  const { id } = await store.insertExperiment(experiment);
  /** Every result handed to the store, as the service built it. */
  const handed: NewResult[] = [];
  const ingest = new GroupCommit((batch) => {
    handed.push(...batch.results);
    return store.appendBatch(batch);
  });
  let n = 0;
  const results = new ResultService({
    experiments: new ExperimentCache(store),
    assignments: new IssuedAssignments(store),
    ingest,
    store,
    newId: () => `log-${++n}`,
    now: () => NOW,
  });
  return { store, id, results, handed };
}

test('a logged result is readable once its promise resolves, with every field', async () => {
  const { store, id, results } = await setup();
  const receipt = await results.log('prompts', {
    variantKey: 'B',
    input: { q: 'héllo' },
    output: { a: 'hi' },
    metrics: { latency_ms: 120, ok: true },
    context: { plan: 'pro' },
    userId: 'u-1',
    assignmentId: 'as-1',
    timestamp: '2026-03-01T13:00:00+01:00',
  });
  assert.deepEqual(receipt, { logId: 'log-1' });
  const page = await store.listResults({ experimentId: id, limit: 10 });
  assert.deepEqual(page.results, [
    {
      logId: 'log-1',
      variantKey: 'B',
      knownVariant: true,
      userId: 'u-1',
      assignmentId: 'as-1',
      assignedVariant: null,
      input: { q: 'héllo' },
      output: { a: 'hi' },
      metrics: { latency_ms: 120, ok: true },
      context: { plan: 'pro' },
      timestamp: '2026-03-01T12:00:00.000Z',
      createdAt: NOW,
      experimentVersion: 1,
      feedback: {},
      assignmentContext: null,
      comments: [],
    },
  ]);
  const rollups = await store.readRollups(id);
  assert.deepEqual(rollups.metrics.map((m) => [m.variantKey, m.metric, m.kind, m.n, m.sum]).sort(), [
    ['B', 'latency_ms', 'mean', 1, 120],
    ['B', 'ok', 'proportion', 1, 1],
  ]);
});

test('an unknown variant key is stored, flagged, and warned about', async () => {
  const { store, id, results, handed } = await setup();
  const receipt = await results.log('prompts', { variantKey: 'C' });
  assert.match(receipt.warning ?? '', /'C' matches no variant of experiment 'prompts' \(variants: A, B\)/);
  assert.deepEqual(
    handed.map((r) => [r.variantKey, r.knownVariant]),
    [['C', false]],
  );
  const stored = await store.listResults({ experimentId: id, limit: 10 });
  assert.deepEqual(
    stored.results.map((r) => r.variantKey),
    ['C'],
  );
  const many = await results.logMany('prompts', [
    { variantKey: 'A' },
    { variantKey: 'D' },
    { variantKey: 'D' },
  ]);
  assert.equal(many.warnings.length, 1);
  assert.match(many.warnings[0]!, /'D' matches no variant/);
});

test('logMany is all-or-nothing: one invalid input stores none', async () => {
  const { store, id, results } = await setup();
  await assert.rejects(
    results.logMany('prompts', [{ variantKey: 'A' }, { variantKey: 'B', timestamp: 'yesterday' }]),
    ValidationError,
  );
  assert.equal((await store.listResults({ experimentId: id, limit: 10 })).results.length, 0);
  const { logIds } = await results.logMany('prompts', [{ variantKey: 'A' }, { variantKey: 'B' }]);
  const stored = await store.listResults({ experimentId: id, limit: 10 });
  assert.deepEqual(
    stored.results.map((r) => r.logId),
    logIds,
  );
});

test('results of an experiment deleted before the commit are refused whole, naming the slug', async () => {
  const { store, id, results } = await setup('draft');
  await results.list('prompts', {});
  // Deleted behind the service's back: its table still has the experiment, the store no longer does.
  await store.deleteExperiment('prompts', () => {});
  await assert.rejects(
    results.logMany('prompts', [{ variantKey: 'A' }, { variantKey: 'B' }]),
    (err: Error) => err instanceof NotFoundError && /'prompts' \(it was deleted\)/.test(err.message),
  );
  assert.equal((await store.listResults({ experimentId: id, limit: 10 })).results.length, 0);
});

test('an unknown slug is a NotFoundError', async () => {
  const { results } = await setup();
  await assert.rejects(results.log('nope', { variantKey: 'A' }), NotFoundError);
  await assert.rejects(results.list('nope', {}), NotFoundError);
});

test('list pages by cursor; an export reads what was committed when it began', async () => {
  const { results } = await setup();
  const { logIds } = await results.logMany(
    'prompts',
    Array.from({ length: 5 }, (_, i) => ({ variantKey: i % 2 ? 'B' : 'A' })),
  );
  const first = await results.list('prompts', { limit: 2 });
  assert.ok(first.nextCursor);
  const second = await results.list('prompts', { limit: 10, cursor: first.nextCursor });
  assert.deepEqual(
    [...first.results, ...second.results].map((r) => r.logId),
    logIds,
  );
  assert.equal(second.nextCursor, null);
  const onlyB = await results.list('prompts', { variant: 'B' });
  assert.deepEqual(
    onlyB.results.map((r) => r.logId),
    [logIds[1], logIds[3]],
  );
  const exported = await results.exportAll('prompts');
  await results.log('prompts', { variantKey: 'A' });
  const seen: string[] = [];
  for await (const r of exported.results) seen.push(r.logId);
  assert.deepEqual(seen, logIds);
});
