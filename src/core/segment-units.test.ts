import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sketchBin } from '../stats/sketch.js';
import {
  addSegmentValue,
  addToSegmentSums,
  applySegmentUnitDeltas,
  noSegmentMoves,
  rollUpSegmentUnits,
  type SegmentUnitSum,
  segmentUnitKey,
} from './segment-units.js';
import { rollUpSegments } from './segments.js';
import { topSegments } from './top-segments.js';

const at = { experimentId: 1, version: 1, variantKey: 'A' };
const result = (userId: string | null, metrics: Record<string, number | boolean>, plan: string) => ({
  rolled: { ...at, metrics, unitUserId: userId },
  segments: { plan },
});

describe('segment units', () => {
  test("a user's values within each segment value are that value's unit: one delta per user, value and metric", () => {
    const { units, sketches } = rollUpSegments([
      result('u1', { latency: 100, ok: true }, 'pro'),
      result('u1', { latency: 300 }, 'pro'),
      result('u1', { latency: 50 }, 'free'),
      result('u2', { latency: 200 }, 'pro'),
      // No user (a result without a userId, or a random experiment): in the sums per call only.
      result(null, { latency: 999 }, 'pro'),
    ]);
    assert.deepEqual(
      units.map((d) => [d.userId, d.value, d.metric, d.kind, d.dn, d.dsum]),
      [
        ['u1', 'pro', 'latency', 'mean', 2, 400],
        ['u1', 'pro', 'ok', 'proportion', 1, 1],
        ['u1', 'free', 'latency', 'mean', 1, 50],
        ['u2', 'pro', 'latency', 'mean', 1, 200],
      ],
    );
    // Every number in its bin of its value (booleans have none); the user-less one too.
    const bins = sketches.rows().map((b) => [b.value, b.metric, b.side, b.bin, b.count]);
    const bin = (x: number) => sketchBin(x).key;
    assert.deepEqual(
      bins.sort(),
      [
        ['free', 'latency', 1, bin(50), 1],
        ['pro', 'latency', 1, bin(100), 1],
        ['pro', 'latency', 1, bin(200), 1],
        ['pro', 'latency', 1, bin(300), 1],
        ['pro', 'latency', 1, bin(999), 1],
      ].sort(),
    );
  });

  test('applied deltas move the per-value sums by the difference; live moves add up to a rebuild', () => {
    const current = new Map<string, SegmentUnitSum>();
    const live = new Map<
      string,
      { units: number; sumX: number; sumX2: number; sumY: number; sumY2: number; sumXY: number }
    >();
    const batches = [
      [result('u1', { x: 2 }, 'pro'), result('u2', { x: 1 }, 'pro'), result('u1', { x: 5 }, 'free')],
      [result('u1', { x: 3 }, 'pro'), result('u3', { x: 8 }, 'pro'), result('u3', { x: 1 }, 'pro')],
    ];
    for (const batch of batches) {
      const { units } = rollUpSegments(batch);
      const { sums, rollups } = applySegmentUnitDeltas(units, current);
      for (const s of sums) current.set(segmentUnitKey(s), s);
      for (const r of rollups) {
        const acc = live.get(r.value) ?? { units: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 };
        for (const k of Object.keys(acc) as Array<keyof typeof acc>) acc[k] += r[k];
        live.set(r.value, acc);
      }
    }
    // pro: u1 (5, 2), u2 (1, 1), u3 (9, 2); free: u1 (5, 1).
    assert.deepEqual(live.get('pro'), { units: 3, sumX: 15, sumX2: 107, sumY: 5, sumY2: 9, sumXY: 29 });
    assert.deepEqual(live.get('free'), { units: 1, sumX: 5, sumX2: 25, sumY: 1, sumY2: 1, sumXY: 5 });
    const rebuilt = rollUpSegmentUnits(current.values());
    assert.deepEqual(
      rebuilt.map(({ value, units, sumX, sumX2, sumY, sumY2, sumXY }) => [
        value,
        { units, sumX, sumX2, sumY, sumY2, sumXY },
      ]),
      [
        ['pro', live.get('pro')],
        ['free', live.get('free')],
      ],
    );
  });

  test('feedback replacing a value takes it out of the segments that counted it and puts the new one in', () => {
    const moves = noSegmentMoves();
    addSegmentValue(moves, at, { plan: 'pro', region: 'eu' }, 'rating', 'mean', 4, 1, 'u1');
    addSegmentValue(moves, at, { plan: 'pro', region: 'eu' }, 'rating', 'mean', 4, -1, 'u1');
    addSegmentValue(moves, at, { plan: 'team' }, 'rating', 'mean', 2, 1, 'u1');
    const sums = new Map<string, SegmentUnitSum>();
    addToSegmentSums(sums, moves.units);
    assert.deepEqual(
      [...sums.values()].map((s) => [s.key, s.value, s.n, s.sum]),
      [
        ['plan', 'pro', 0, 0],
        ['region', 'eu', 0, 0],
        ['plan', 'team', 1, 2],
      ],
    );
    assert.deepEqual(
      rollUpSegmentUnits(sums.values()).map((r) => [r.key, r.value, r.units]),
      [['plan', 'team', 1]],
      'a user with no values left is no unit',
    );
    // The bins cancel where the old value was, and count the new one.
    assert.deepEqual(
      moves.sketches.rows().map((b) => [b.key, b.value, b.count]),
      [['plan', 'team', 1]],
    );
    assert.deepEqual(
      moves.metrics.map((m) => [m.key, m.value, m.n, m.sum]),
      [
        ['plan', 'pro', 1, 4],
        ['region', 'eu', 1, 4],
        ['plan', 'pro', -1, -4],
        ['region', 'eu', -1, -4],
        ['plan', 'team', 1, 2],
      ],
    );
  });

  test("topSegments gives each value its users' sums and bins, and sums the merged rest's", () => {
    const row = (value: string, units: number) => ({
      experimentId: 1,
      key: 'plan',
      value,
      version: 1,
      variantKey: 'A',
      metric: 'x',
      kind: 'mean' as const,
      units,
      sumX: units * 2,
      sumX2: units * 4,
      sumY: units,
      sumY2: units,
      sumXY: units * 2,
    });
    const bin = (value: string, count: number) => ({
      experimentId: 1,
      key: 'plan',
      value,
      version: 1,
      variantKey: 'A',
      metric: 'x',
      side: 1 as const,
      bin: 7,
      count,
    });
    const values = Array.from({ length: 52 }, (_, i) => `v${String(i).padStart(2, '0')}`);
    const shown = topSegments(
      values.map((value, i) => ({ ...row(value, 0), n: 100 - i, sum: 0, sumSquares: 0 })),
      values.map((value, i) => ({
        experimentId: 1,
        key: 'plan',
        value,
        version: 1,
        variantKey: 'A',
        n: 100 - i,
      })),
      { units: values.map((v) => row(v, 3)), sketches: values.map((v) => bin(v, 5)) },
    );
    assert.equal(shown.length, 51);
    assert.deepEqual(
      shown[0]!.units.map((u) => [u.value, u.units]),
      [['v00', 3]],
    );
    const other = shown[50]!;
    assert.equal(other.mergedValues, 2);
    assert.deepEqual(
      other.units.map((u) => [u.value, u.units, u.sumX]),
      [['(other)', 6, 12]],
      "v50 and v51's users added, each a unit of its value",
    );
    assert.deepEqual(
      other.sketches.map((b) => [b.value, b.bin, b.count]),
      [['(other)', 7, 10]],
    );
  });
});
