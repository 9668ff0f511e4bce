// Batches written at once (GroupCommit's concurrency 2 on PostgreSQL) that add to the same rollup rows:
// each commits, neither deadlocks, and the sums are exact.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Exposure } from '../src/core/exposure.js';
import type { NewResult } from '../src/core/writes.js';
import { toExposureBatches } from '../src/ingest/exposure-queue.js';
import {
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

describe('concurrent batches on the same rollup rows', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let id: number;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'concurrent-batches');
    const { slug } = await runtime.api.createExperiment({
      metrics: [{ name: 'cost', direction: 'decrease' }],
    });
    const found = await runtime.store.findExperiment(slug);
    assert.ok(found);
    id = found.id;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test('results and exposures of 8 batches at once all count, exactly', async () => {
    const result = (b: number, i: number): NewResult => ({
      logId: `cb-${b}-${i}`,
      experimentId: id,
      version: 1,
      variantKey: i % 2 ? 'B' : 'A',
      knownVariant: true,
      userId: null,
      assignmentId: null,
      input: null,
      output: null,
      metrics: JSON.stringify({ cost: b + i / 4 }),
      context: null,
      timestamp: null,
      createdAt: '2026-03-02T09:15:00.000Z',
    });
    const exposure = (b: number, i: number): Exposure => ({
      assignmentId: `cb-as-${b}-${i}`,
      experimentId: id,
      version: 1,
      variantKey: i % 2 ? 'B' : 'A',
      userId: `cb-u-${b}-${i}`,
      context: null,
      createdAt: '2026-03-02T09:15:00.000Z',
    });
    const batches = Array.from({ length: 8 }, (_, b) => b);
    await Promise.all(
      batches.flatMap((b) => [
        runtime.store.appendBatch({ results: [0, 1, 2, 3].map((i) => result(b, i)), exposures: [] }),
        // Exposures alone take no lock: their rollup rows are contended by the upserts alone.
        runtime.store.appendBatch({
          results: [],
          exposures: toExposureBatches([0, 1, 2].map((i) => exposure(b, i))),
        }),
      ]),
    );
    const rollups = await runtime.store.readRollups(id);
    const cost = (v: string) => rollups.metrics.find((m) => m.metric === 'cost' && m.variantKey === v);
    // A: i = 0, 2 → Σ (b + i/4) = 2b + 0.5 over b; B: i = 1, 3 → 2b + 1.
    const sumB = batches.reduce((s, b) => s + 2 * b, 0);
    assert.equal(cost('A')?.n, 16);
    assert.equal(cost('A')?.sum, sumB + 8 * 0.5);
    assert.equal(cost('B')?.n, 16);
    assert.equal(cost('B')?.sum, sumB + 8 * 1);
    const exposed = (v: string) => rollups.exposures.find((e) => e.variantKey === v)?.n;
    assert.equal(exposed('A'), 16);
    assert.equal(exposed('B'), 8);
    const counted = (v: string) => rollups.results.find((e) => e.variantKey === v)?.n;
    assert.equal(counted('A'), 16);
    assert.equal(counted('B'), 16);
  });
});
