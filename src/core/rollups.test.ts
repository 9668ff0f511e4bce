import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rollUpExposures, rollUpResults } from './rollups.js';

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
  });
  assert.deepEqual(
    { n: find('A', 1, 'ok')?.n, sum: find('A', 1, 'ok')?.sum, kind: find('A', 1, 'ok')?.kind },
    { n: 2, sum: 1, kind: 'proportion' },
  );
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
