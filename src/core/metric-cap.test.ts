import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyMetricCap } from './metric-cap.js';
import { type RolledResult, rollUpResults } from './rollups.js';

const rolled = (experimentId: number, metrics: Record<string, unknown>): RolledResult => ({
  experimentId,
  version: 1,
  variantKey: 'A',
  metrics: metrics as RolledResult['metrics'],
});

test('new names are admitted in order until the cap; later ones are over it, names already in stay in', () => {
  const names = new Map<number, Set<string>>([[1, new Set(['a'])]]);
  const of = (id: number) => {
    if (!names.has(id)) names.set(id, new Set());
    return names.get(id)!;
  };
  const results = [
    rolled(1, { a: 1, b: 2, c: 3 }),
    rolled(1, { d: 4, a: 5, b: true }),
    rolled(2, { x: 1, y: 2, z: 3, w: 4 }),
  ];
  applyMetricCap(results, of, 3);
  assert.deepEqual([...names.get(1)!], ['a', 'b', 'c']);
  assert.deepEqual(
    results.map((r) => (r.overCap ? [...r.overCap] : null)),
    [null, ['d'], ['w']],
  );
  const sums = rollUpResults(results).map((r) => `${r.experimentId}/${r.metric}/${r.kind}=${r.sum}`);
  assert.ok(!sums.some((s) => s.startsWith('1/d') || s.startsWith('2/w')), sums.join(' '));
  assert.ok(sums.includes('1/a/mean=6'));
});

test('values that are never rolled up (strings, objects, null, huge numbers) take no place under the cap', () => {
  const names = new Set<string>();
  const results = [rolled(1, { s: '812', o: {}, n: null, h: 1e200, real: 1 }), rolled(1, { other: 2 })];
  applyMetricCap(results, () => names, 2);
  assert.deepEqual([...names], ['real', 'other']);
  assert.deepEqual(
    results.map((r) => r.overCap ?? null),
    [null, null],
  );
});

test('a decision made earlier is replaced, not added to (a batch retried after a failure)', () => {
  const r = rolled(1, { a: 1 });
  r.overCap = new Set(['a']);
  applyMetricCap([r], () => new Set(), 5);
  assert.equal(r.overCap, null);
});
