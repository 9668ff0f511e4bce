import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  extremesAfter,
  type MetricRollup,
  mergeRollups,
  metricRollupKey,
  rollUpExposures,
  rollUpResults,
} from './rollups.js';

test('numbers roll up as means, booleans as proportions, anything else is skipped', () => {
  const rolled = rollUpResults([
    {
      experimentId: 1,
      version: 1,
      variantKey: 'A',
      metrics: { latency: 10, ok: true, label: 'x', nested: { a: 1 } },
    },
    { experimentId: 1, version: 1, variantKey: 'A', metrics: { latency: 20, ok: false, empty: null } },
    { experimentId: 1, version: 1, variantKey: 'B', metrics: { latency: 5 } },
    { experimentId: 1, version: 2, variantKey: 'A', metrics: { latency: 7 } },
    { experimentId: 1, version: 1, variantKey: 'A', metrics: null },
  ]);
  const find = (variantKey: string, version: number, metric: string) =>
    rolled.find((r) => r.variantKey === variantKey && r.version === version && r.metric === metric);
  assert.deepEqual(find('A', 1, 'latency'), {
    experimentId: 1,
    version: 1,
    variantKey: 'A',
    metric: 'latency',
    kind: 'mean',
    n: 2,
    sum: 30,
    sumSquares: 500,
    minValue: 10,
    maxValue: 20,
  });
  assert.deepEqual(
    { n: find('A', 1, 'ok')?.n, sum: find('A', 1, 'ok')?.sum, kind: find('A', 1, 'ok')?.kind },
    { n: 2, sum: 1, kind: 'proportion' },
  );
  assert.deepEqual([find('A', 1, 'ok')?.minValue, find('A', 1, 'ok')?.maxValue], [0, 1]);
  assert.equal(find('B', 1, 'latency')?.sum, 5);
  assert.equal(find('A', 2, 'latency')?.n, 1);
  assert.equal(rolled.length, 4, 'label, nested and null are not metric values');
});

test('a metric named __proto__ is an ordinary metric', () => {
  const rolled = rollUpResults([
    { experimentId: 1, version: 1, variantKey: 'A', metrics: JSON.parse('{"__proto__": 3}') },
  ]);
  assert.equal(rolled[0]?.metric, '__proto__');
  assert.equal(({} as Record<string, unknown>).n, undefined);
});

test('exposures are counted per experiment, version and variant', () => {
  const rolled = rollUpExposures([
    { experimentId: 1, version: 1, variantKey: 'A' },
    { experimentId: 1, version: 1, variantKey: 'A' },
    { experimentId: 1, version: 2, variantKey: 'A' },
    { experimentId: 2, version: 1, variantKey: 'B' },
  ]);
  assert.deepEqual(
    rolled.map((r) => [r.experimentId, r.version, r.variantKey, r.n]),
    [
      [1, 1, 'A', 2],
      [1, 2, 'A', 1],
      [2, 1, 'B', 1],
    ],
  );
});

test('numbers too large to square are not rolled up (their sums would overflow)', () => {
  const rolled = rollUpResults([
    { experimentId: 1, version: 1, variantKey: 'A', metrics: { x: 1e308, y: -1e200, z: 1e100 } },
  ]);
  assert.deepEqual(
    rolled.map((r) => [r.metric, r.sumSquares]),
    [['z', 1e200]],
  );
});

test('min and max: merged moves widen to the values they add; a stored row moves only past them, an unknown one never', () => {
  const move = (n: number, minValue: number | null, maxValue: number | null): MetricRollup => ({
    experimentId: 1,
    version: 1,
    variantKey: 'A',
    metric: 'rating',
    kind: 'mean',
    n,
    sum: 0,
    sumSquares: 0,
    minValue,
    maxValue,
  });
  // Feedback replacing 5 by 4: the value taken out adds none (null), the new one widens.
  const [merged] = mergeRollups([move(-1, null, null), move(1, 4, 4), move(1, 2, 3)], metricRollupKey);
  assert.deepEqual([merged!.n, merged!.minValue, merged!.maxValue], [1, 2, 4]);
  assert.deepEqual(extremesAfter({ minValue: 1, maxValue: 5 }, { minValue: 0.5, maxValue: 3 }), {
    minValue: 0.5,
    maxValue: 5,
  });
  // A value taken out cannot narrow them (live extremes are of every value ever counted).
  assert.deepEqual(extremesAfter({ minValue: 1, maxValue: 5 }, { minValue: null, maxValue: null }), {
    minValue: 1,
    maxValue: 5,
  });
  // Unknown (a row from before migration 017): new values alone do not bound the old ones.
  assert.deepEqual(extremesAfter({ minValue: null, maxValue: null }, { minValue: 0, maxValue: 9 }), {
    minValue: null,
    maxValue: null,
  });
});
