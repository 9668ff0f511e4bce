import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UnavailableError } from '../core/errors.js';
import type { WriteBatch } from '../core/writes.js';
import { GroupCommit } from './group-commit.js';
import { exposure, result } from './test-fixtures.js';

const exposureCount = (b: WriteBatch) => b.exposures.reduce((n, e) => n + e.count, 0);

/** A write function that records batches and lets the test decide when each one commits. */
function controlledWrite() {
  const batches: WriteBatch[] = [];
  const gates: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const write = (batch: WriteBatch) =>
    new Promise<void>((resolve, reject) => {
      batches.push(batch);
      gates.push({ resolve, reject });
    });
  return { batches, gates, write };
}

const tick = () => new Promise((r) => setImmediate(r));

test('requests that arrive together share one transaction', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write);
  const all = [
    gc.appendResults([result('a')]),
    gc.appendResults([result('b')]),
    gc.appendResults([result('c')]),
  ];
  await tick();
  assert.equal(w.batches.length, 1);
  assert.deepEqual(
    w.batches[0]!.results.map((r) => r.logId),
    ['a', 'b', 'c'],
  );
  w.gates[0]!.resolve();
  await Promise.all(all);
});

test('nothing resolves before its transaction commits', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write);
  let done = false;
  const p = gc.appendResults([result('a')]).then(() => {
    done = true;
  });
  await tick();
  await tick();
  assert.equal(done, false);
  w.gates[0]!.resolve();
  await p;
  assert.equal(done, true);
});

test('what arrives during a commit goes into the next transaction', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write);
  const first = gc.appendResults([result('a')]);
  await tick();
  const second = [gc.appendResults([result('b')]), gc.appendResults([result('c')])];
  await tick();
  assert.equal(w.batches.length, 1, 'only one transaction at a time');
  w.gates[0]!.resolve();
  await first;
  await tick();
  assert.equal(w.batches.length, 2);
  assert.deepEqual(
    w.batches[1]!.results.map((r) => r.logId),
    ['b', 'c'],
  );
  w.gates[1]!.resolve();
  await Promise.all(second);
});

test('exposures ride along with results and never wait', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write);
  gc.appendExposure(exposure('x'));
  gc.appendExposure(exposure('y'));
  const committed = gc.appendResults([result('a')]);
  await tick();
  assert.equal(w.batches.length, 1);
  assert.equal(exposureCount(w.batches[0]!), 2);
  w.gates[0]!.resolve();
  await committed;
});

test('exposures alone are written once enough are pending, or after the delay', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write, { exposureFlushSize: 3, exposureDelayMs: 30 });
  gc.appendExposure(exposure('1'));
  gc.appendExposure(exposure('2'));
  await tick();
  assert.equal(w.batches.length, 0, 'two of three: not yet');
  gc.appendExposure(exposure('3'));
  await tick();
  assert.equal(w.batches.length, 1, 'the third fills the batch');
  assert.equal(exposureCount(w.batches[0]!), 3);
  w.gates[0]!.resolve();
  await tick();
  gc.appendExposure(exposure('4'));
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(w.batches.length, 2, 'a lone exposure goes after the delay');
  w.gates[1]!.resolve();
  await gc.drain();
});

test('a failing request is isolated: its neighbours still commit', async () => {
  const committed: string[] = [];
  const gc = new GroupCommit(async (batch) => {
    if (batch.results.some((r) => r.experimentId === 666)) throw new Error('foreign key');
    committed.push(...batch.results.map((r) => r.logId));
  });
  const good1 = gc.appendResults([result('a')]);
  const bad = gc.appendResults([result('b', 666)]);
  const good2 = gc.appendResults([result('c')]);
  await good1;
  await good2;
  await assert.rejects(bad, /foreign key/);
  assert.deepEqual(committed.sort(), ['a', 'c']);
});

test('a request larger than the batch size is never split', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write, { maxResultsPerBatch: 2 });
  const big = gc.appendResults([result('a'), result('b'), result('c')]);
  const small = gc.appendResults([result('d')]);
  await tick();
  assert.equal(w.batches[0]!.results.length, 3);
  w.gates[0]!.resolve();
  await big;
  await tick();
  assert.equal(w.batches[1]!.results.length, 1);
  w.gates[1]!.resolve();
  await small;
});

test('exposures beyond the buffer are dropped and counted, not queued without bound', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write, { maxBufferedExposures: 2, exposureFlushSize: 2 });
  gc.appendExposure(exposure('1'));
  gc.appendExposure(exposure('2'));
  gc.appendExposure(exposure('3'));
  assert.equal(gc.droppedExposures, 1);
  await tick();
  w.gates[0]!.resolve();
  await gc.drain();
});

test('drain waits for everything handed in', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write);
  gc.appendExposure(exposure('1'));
  let drained = false;
  const d = gc.drain().then(() => {
    drained = true;
  });
  await tick();
  assert.equal(drained, false);
  w.gates[0]!.resolve();
  await d;
  assert.equal(drained, true);
});

test('while the database is unavailable, results fail at once and exposures wait for the retry', async () => {
  let down = true;
  const written: WriteBatch[] = [];
  const gc = new GroupCommit(
    async (batch) => {
      if (down) throw new UnavailableError('down');
      written.push(batch);
    },
    { retryDelayMs: 20 },
  );
  gc.appendExposure(exposure('kept'));
  await assert.rejects(gc.appendResults([result('a'), result('b')]), UnavailableError);
  assert.equal(gc.pendingExposures, 1, 'the exposure is back in the buffer, not dropped');
  down = false;
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(gc.pendingExposures, 0);
  assert.deepEqual(
    written.flatMap((b) => b.exposures.flatMap((e) => JSON.parse(e.json).map((x: string[]) => x[0]))),
    ['kept'],
  );
  assert.equal(written.flatMap((b) => b.results).length, 0, 'failed results are not written later');
  await gc.appendResults([result('c')]);
});

test('drain during an outage attempts once more and returns', async () => {
  const gc = new GroupCommit(
    async () => {
      throw new UnavailableError('down');
    },
    { retryDelayMs: 60_000 },
  );
  gc.appendExposure(exposure('x'));
  await tick();
  await gc.drain();
  assert.equal(gc.pendingExposures, 1);
});

test('after an outage, results do not wait for the exposure retry timer', async () => {
  let down = true;
  const gc = new GroupCommit(
    async () => {
      if (down) throw new UnavailableError('down');
    },
    { retryDelayMs: 60_000 },
  );
  gc.appendExposure(exposure('x'));
  await assert.rejects(gc.appendResults([result('a')]), UnavailableError);
  down = false;
  await gc.appendResults([result('b')]); // would hang for a minute if it waited for the timer
  assert.equal(gc.pendingExposures, 0, 'the buffered exposure went along');
});

test('with concurrency 2, a second batch starts while the first commits; exposures ride in one at a time', async () => {
  const w = controlledWrite();
  const gc = new GroupCommit(w.write, { concurrency: 2, exposureFlushSize: 1 });
  gc.appendExposure(exposure('e1'));
  const first = gc.appendResults([result('a')]);
  await tick();
  assert.equal(w.batches.length, 1);
  assert.equal(exposureCount(w.batches[0]!), 1);
  gc.appendExposure(exposure('e2'));
  const second = gc.appendResults([result('b')]);
  await tick();
  // In flight together; e2 waits for the batch carrying e1, so exposures are stored in their order.
  assert.equal(w.batches.length, 2);
  assert.deepEqual(
    w.batches[1]!.results.map((r) => r.logId),
    ['b'],
  );
  assert.equal(exposureCount(w.batches[1]!), 0);
  const third = gc.appendResults([result('c')]);
  await tick();
  assert.equal(w.batches.length, 2, 'no third batch while two are in flight');
  w.gates[1]!.resolve();
  await second;
  await tick();
  assert.deepEqual(
    w.batches[2]!.results.map((r) => r.logId),
    ['c'],
  );
  assert.equal(exposureCount(w.batches[2]!), 0);
  w.gates[0]!.resolve();
  await first;
  w.gates[2]!.resolve();
  await third;
  const drained = gc.drain();
  await tick();
  assert.equal(exposureCount(w.batches[3]!), 1);
  w.gates[3]!.resolve();
  await drained;
  assert.equal(gc.pendingExposures, 0);
});
