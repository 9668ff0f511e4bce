import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Exposure, encodeExposure } from '../core/exposure.js';
import type { ExposureBatch } from '../core/writes.js';
import { ExposureQueue, MAX_EXPOSURE_BATCH_BYTES, toExposureBatches } from './exposure-queue.js';

const pending = (
  experimentId: number,
  version: number,
  id: string,
  variantKey = 'A',
  pad = '',
): Exposure => ({
  assignmentId: id,
  experimentId,
  version,
  variantKey,
  userId: 'u',
  context: pad ? { pad } : null,
  createdAt: '2026-01-01T00:00:00.000Z',
});

const ids = (batches: ExposureBatch[]) => batches.map((b) => JSON.parse(b.json).map((e: string[]) => e[0]));

test('exposures become one batch per experiment version, in order, with counts per variant', () => {
  const batches = toExposureBatches([
    pending(1, 1, 'a', 'A'),
    pending(2, 1, 'b', 'A'),
    pending(1, 1, 'c', 'B'),
    pending(1, 2, 'd', 'A'),
    pending(1, 1, 'e', 'A'),
  ]);
  assert.deepEqual(
    batches.map((b) => [b.experimentId, b.version, b.count, b.variants]),
    [
      [
        1,
        1,
        3,
        [
          { variantKey: 'A', n: 2 },
          { variantKey: 'B', n: 1 },
        ],
      ],
      [2, 1, 1, [{ variantKey: 'A', n: 1 }]],
      [1, 2, 1, [{ variantKey: 'A', n: 1 }]],
    ],
  );
  assert.deepEqual(ids(batches), [['a', 'c', 'e'], ['b'], ['d']]);
});

test('the stored text is exactly the JSON array of the exposures, whatever their characters', () => {
  const contexts = [
    'plain',
    'ünïcødé ✓',
    '😀 emoji',
    'quote " and \\ backslash',
    '\u2028 line sep',
    'x'.repeat(9000),
  ];
  const list = contexts.map((pad, i) => pending(1, 1, `id${i}`, 'A', pad));
  const [batch] = toExposureBatches(list);
  assert.equal(batch!.json, `[${list.map(encodeExposure).join(',')}]`);
  assert.deepEqual(
    JSON.parse(batch!.json).map((e: Array<{ pad: string }>) => e[3]!.pad),
    contexts,
  );
});

test('a batch never grows past the size cap: large exposures start new batches', () => {
  const big = 'x'.repeat(Math.floor(MAX_EXPOSURE_BATCH_BYTES / 3));
  const batches = toExposureBatches(Array.from({ length: 7 }, (_, i) => pending(1, 1, `e${i}`, 'A', big)));
  assert.ok(batches.length >= 3, `${batches.length} batches`);
  for (const b of batches)
    assert.ok(Buffer.byteLength(b.json) <= MAX_EXPOSURE_BATCH_BYTES, `${b.json.length}`);
  assert.deepEqual(ids(batches).flat(), ['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
  assert.equal(
    batches.reduce((a, b) => a + b.count, 0),
    7,
  );
});

test('take hands out whole batches, oldest first, as many as fit in max', () => {
  const q = new ExposureQueue(100);
  for (let i = 0; i < 3; i++) q.append(pending(1, 1, `a${i}`));
  for (let i = 0; i < 2; i++) q.append(pending(2, 1, `b${i}`));
  q.append(pending(3, 1, 'c0'));
  assert.equal(q.size, 6);
  assert.deepEqual(ids(q.take(5)), [
    ['a0', 'a1', 'a2'],
    ['b0', 'b1'],
  ]);
  assert.equal(q.size, 1);
  q.append(pending(1, 1, 'a3'));
  assert.deepEqual(ids(q.take(10)), [['c0'], ['a3']]);
  assert.equal(q.size, 0);
  assert.deepEqual(q.take(10), []);
});

test('a full queue refuses exposures; batches put back go first and what does not fit is dropped', () => {
  const q = new ExposureQueue(5);
  for (let i = 0; i < 3; i++) assert.equal(q.append(pending(1, 1, `a${i}`)), true);
  const taken = q.take(10);
  for (let i = 0; i < 3; i++) assert.equal(q.append(pending(1, 1, `n${i}`)), true);
  assert.equal(q.putBack(taken), 3, 'three back, but room for two: the whole batch is dropped');
  assert.equal(q.size, 3);
  const smaller = q.take(10);
  assert.equal(q.putBack(smaller), 0);
  assert.equal(q.size, 3);
  for (let i = 0; i < 2; i++) assert.equal(q.append(pending(1, 1, `m${i}`)), true);
  assert.equal(q.append(pending(1, 1, 'over')), false);
  assert.deepEqual(ids(q.take(10)), [
    ['n0', 'n1', 'n2'],
    ['m0', 'm1'],
  ]);
});

test('a batch holds at most maxPerBatch exposures, and take never exceeds max but for one batch', () => {
  const q = new ExposureQueue(100, 2);
  for (let i = 0; i < 5; i++) q.append(pending(1, 1, `a${i}`));
  assert.deepEqual(ids(q.take(3)), [['a0', 'a1']], 'a second batch of 2 would pass 3');
  assert.deepEqual(ids(q.take(1)), [['a2', 'a3']], 'the first batch is taken whatever its size');
  assert.deepEqual(ids(q.take(10)), [['a4']]);
});

test('batches put back go before those already returned and before open ones, in order', () => {
  const q = new ExposureQueue(100, 2);
  for (let i = 0; i < 6; i++) q.append(pending(1, 1, `a${i}`));
  const first = q.take(2);
  const second = q.take(2);
  assert.equal(q.putBack(second), 0);
  assert.equal(q.putBack(first), 0);
  q.append(pending(1, 1, 'late'));
  assert.deepEqual(
    ids(q.take(3)),
    [['a0', 'a1']],
    'stops inside the returned batches when the next does not fit',
  );
  assert.deepEqual(ids(q.take(100)), [['a2', 'a3'], ['a4', 'a5'], ['late']]);
  assert.equal(q.size, 0);
});

test('sealed text stays intact when its buffer is reused, by this queue or another', () => {
  const a = new ExposureQueue(1000);
  const b = new ExposureQueue(1000);
  const kept: Array<{ text: string; copy: string }> = [];
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < 50; i++)
      (i % 2 ? a : b).append(pending(round, 1, `r${round}-${i}`, 'A', 'ü'.repeat(i)));
    for (const batch of [...a.take(1000), ...b.take(1000)])
      kept.push({ text: batch.json, copy: `${batch.json}` });
  }
  for (const k of kept) {
    assert.equal(k.text, k.copy);
    assert.doesNotThrow(() => JSON.parse(k.text));
  }
});

test('multi-byte exposures near the cap are measured exactly, and one larger than the cap is alone', () => {
  // 2 bytes of UTF-8 per character: by the 3-bytes bound two would not fit, by their real size they do.
  const pad = 'é'.repeat(Math.floor(MAX_EXPOSURE_BATCH_BYTES / 5));
  const batches = toExposureBatches(Array.from({ length: 4 }, (_, i) => pending(1, 1, `m${i}`, 'A', pad)));
  assert.deepEqual(
    batches.map((b) => b.count),
    [2, 2],
  );
  for (const b of batches) assert.ok(Buffer.byteLength(b.json) <= MAX_EXPOSURE_BATCH_BYTES);
  const huge = 'x'.repeat(MAX_EXPOSURE_BATCH_BYTES);
  const alone = toExposureBatches([
    pending(1, 1, 's0'),
    pending(1, 1, 'big', 'A', huge),
    pending(1, 1, 's1'),
  ]);
  assert.deepEqual(ids(alone), [['s0'], ['big'], ['s1']]);
});
