import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ValidationError } from './errors.js';
import {
  OTHER_SEGMENT,
  resultSegments,
  rollUpSegments,
  type SegmentCount,
  type SegmentRollup,
  segmentValue,
  segmentValues,
  TOP_SEGMENTS,
  targetSegments,
  validateSegments,
} from './segments.js';
import { topSegments } from './top-segments.js';

describe('segments', () => {
  test('validateSegments accepts up to 5 unique keys and names what is wrong otherwise', () => {
    assert.deepEqual(validateSegments([]), []);
    assert.deepEqual(validateSegments(['plan', 'region.eu', 'a_b-c']), ['plan', 'region.eu', 'a_b-c']);
    assert.throws(() => validateSegments('plan'), ValidationError);
    assert.throws(() => validateSegments(['a', 'b', 'c', 'd', 'e', 'f']), /at most 5/);
    assert.throws(() => validateSegments(['plan', 'plan']), /segments\[1\] 'plan' is declared twice/);
    assert.throws(() => validateSegments(['x', 'has space']), /segments\[1\] must be a context key/);
    assert.throws(() => validateSegments([1]), /segments\[0\]/);
    assert.throws(() => validateSegments(['a'.repeat(65)]), /segments\[0\]/);
  });

  test('a value is a string as it is, a number or boolean as its JSON text; anything else none', () => {
    const context = { s: 'pro', n: 3, f: 0.5, b: false, z: null, o: { a: 1 }, a: [1], e: '' };
    assert.equal(segmentValue(context, 's'), 'pro');
    assert.equal(segmentValue(context, 'n'), '3');
    assert.equal(segmentValue(context, 'f'), '0.5');
    assert.equal(segmentValue(context, 'b'), 'false');
    for (const k of ['z', 'o', 'a', 'e', 'missing', '__proto__', 'toString']) {
      assert.equal(segmentValue(context, k), undefined, k);
    }
    assert.equal(segmentValue(null, 's'), undefined);
    assert.equal(segmentValue({ s: 'x'.repeat(500) }, 's')!.length, 200);
    assert.deepEqual(segmentValues(context, ['s', 'z', 'n']), { s: 'pro', n: '3' });
    assert.equal(segmentValues(context, ['z']), null);
  });

  test("a result's own values first; the rest looked up by its assignment, waiting only for a client's", () => {
    assert.equal(resultSegments({ plan: 'pro' }, [], undefined), undefined);
    assert.deepEqual(resultSegments({ plan: 'pro' }, ['plan', 'region'], undefined), {
      values: { plan: 'pro' },
      lookup: [],
      wait: false,
    });
    assert.deepEqual(resultSegments(null, ['plan', 'region'], { id: 'x', clientMade: true }), {
      values: {},
      lookup: ['plan', 'region'],
      wait: true,
    });
  });

  test('rollUpSegments sums per key, value, variant and metric; counts every result once per key', () => {
    const rolled = (variantKey: string, metrics: Record<string, unknown>) => ({
      experimentId: 1,
      version: 1,
      variantKey,
      metrics: metrics as never,
      overCap: new Set(['capped']),
    });
    const { metrics, counts } = rollUpSegments([
      {
        rolled: rolled('A', { x: 2, ok: true, capped: 9, s: 'text' }),
        segments: { plan: 'pro', region: 'eu' },
      },
      { rolled: rolled('A', { x: 4 }), segments: { plan: 'pro' } },
      { rolled: rolled('B', { x: 1 }), segments: {} },
    ]);
    const byKey = Object.fromEntries(
      metrics.map((m) => [`${m.key}/${m.value}/${m.variantKey}/${m.metric}`, [m.n, m.sum, m.sumSquares]]),
    );
    assert.deepEqual(byKey, {
      'plan/pro/A/x': [2, 6, 20],
      'plan/pro/A/ok': [1, 1, 1],
      'region/eu/A/x': [1, 2, 4],
      'region/eu/A/ok': [1, 1, 1],
    });
    assert.deepEqual(
      counts.map((c) => [c.key, c.value, c.variantKey, c.n]),
      [
        ['plan', 'pro', 'A', 2],
        ['region', 'eu', 'A', 1],
      ],
    );
  });

  test('topSegments keeps the values with most results (ties by value) and merges the rest', () => {
    const counts: SegmentCount[] = [];
    const metrics: SegmentRollup[] = [];
    for (let i = 0; i < TOP_SEGMENTS + 3; i++) {
      const value = `v${String(i).padStart(2, '0')}`;
      for (const variantKey of ['A', 'B']) {
        const n = i < 2 ? 1 : 10; // v00 and v01 are the smallest, v02 ties the rest
        counts.push({ experimentId: 1, key: 'k', value, version: 1, variantKey, n });
        metrics.push({
          experimentId: 1,
          key: 'k',
          value,
          version: 1,
          variantKey,
          metric: 'x',
          kind: 'mean',
          n,
          sum: n * i,
          sumSquares: n * i * i,
        });
      }
    }
    const top = topSegments(metrics, counts);
    assert.equal(top.length, TOP_SEGMENTS + 1);
    assert.equal(top[0]!.value, 'v02');
    const other = top.at(-1)!;
    assert.equal(other.value, OTHER_SEGMENT);
    assert.equal(other.mergedValues, 3);
    // v00, v01 (1 each) and the last of the ties by value (v52, 10).
    assert.deepEqual(
      other.counts.map((c) => [c.variantKey, c.n]),
      [
        ['A', 12],
        ['B', 12],
      ],
    );
    assert.deepEqual(
      other.metrics.map((m) => [m.variantKey, m.n, m.sum]),
      [
        ['A', 12, 0 + 1 + 520],
        ['B', 12, 0 + 1 + 520],
      ],
    );
    assert.deepEqual(topSegments([], []), []);
  });

  test("feedback's target: a result's own values and its assignment's to look up; an assignment's all to look up", () => {
    const keys = ['plan', 'region'];
    assert.deepEqual(targetSegments(keys, { context: { plan: 'pro' }, assignmentId: 'as-1' }), {
      values: { plan: 'pro' },
      lookup: ['region'],
      assignmentId: 'as-1',
    });
    assert.deepEqual(targetSegments(keys, { context: { plan: 'pro' }, assignmentId: null }), {
      values: { plan: 'pro' },
      lookup: [],
      assignmentId: null,
    });
    assert.deepEqual(targetSegments(keys, { assignmentId: 'as-2' }), {
      values: {},
      lookup: keys,
      assignmentId: 'as-2',
    });
    assert.equal(targetSegments([], { assignmentId: 'as-2' }), undefined);
  });

  test('topSegments shows a value only feedback gave (no results) after those with results', () => {
    const row = (value: string, n: number): SegmentRollup => ({
      experimentId: 1,
      key: 'plan',
      value,
      version: 1,
      variantKey: 'A',
      metric: 'rating',
      kind: 'mean',
      n,
      sum: n * 2,
      sumSquares: n * 4,
    });
    const counts: SegmentCount[] = [
      { experimentId: 1, key: 'plan', value: 'pro', version: 1, variantKey: 'A', n: 1 },
    ];
    // 'emptied': its only value moved out (n back to 0): shown nowhere.
    const shown = topSegments([row('pro', 1), row('rated-only', 3), row('emptied', 0)], counts);
    assert.deepEqual(
      shown.map((s) => [s.value, s.counts.length, s.metrics.map((m) => m.n)]),
      [
        ['pro', 1, [1]],
        ['rated-only', 0, [3]],
      ],
    );
  });

  test('topSegments ranks by users where per-user rows exist, and shows `limit` values', () => {
    // 'calls' has most results (20) from 2 users; 'people' 6 results from 5 users: per user, 'people' first.
    const counts: SegmentCount[] = [
      { experimentId: 1, key: 'k', value: 'calls', version: 1, variantKey: 'A', n: 20 },
      { experimentId: 1, key: 'k', value: 'people', version: 1, variantKey: 'A', n: 6 },
      { experimentId: 1, key: 'k', value: 'few', version: 1, variantKey: 'A', n: 1 },
    ];
    const unit = (value: string, metric: string, units: number) => ({
      experimentId: 1,
      key: 'k',
      value,
      version: 1,
      variantKey: 'A',
      metric,
      kind: 'mean' as const,
      units,
      sumX: units,
      sumX2: units,
      sumY: units,
      sumY2: units,
      sumXY: units,
    });
    // A user counts once per variant, by the metric most users have (not summed over metrics).
    const units = [unit('calls', 'x', 2), unit('calls', 'y', 1), unit('people', 'x', 5), unit('few', 'x', 1)];
    const ranked = topSegments([], counts, { units, sketches: [] });
    assert.deepEqual(
      ranked.map((s) => s.value),
      ['people', 'calls', 'few'],
    );
    const two = topSegments([], counts, { units, sketches: [] }, 1);
    assert.deepEqual(
      two.map((s) => [s.value, s.mergedValues]),
      [
        ['people', undefined],
        [OTHER_SEGMENT, 2],
      ],
    );
    assert.deepEqual(
      two[1]!.counts.map((c) => c.n),
      [21],
    );
  });
});
