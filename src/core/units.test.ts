import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyUnitDeltas,
  mergeUnitDeltas,
  rollUpUnits,
  type UnitDelta,
  type UnitSum,
  unitKey,
} from './units.js';

const key = { experimentId: 1, version: 1, variantKey: 'A', metric: 'score', kind: 'mean' as const };
const delta = (userId: string, dn: number, dsum: number): UnitDelta => ({ ...key, userId, dn, dsum });

test('a user going from (a, c) to (a + dx, c + dy) moves the variant sums by the difference', () => {
  // u1 had x = 3 over 2 values; u2 is new.
  const current = new Map<string, UnitSum>([
    [unitKey({ ...key, userId: 'u1' }), { ...key, userId: 'u1', n: 2, sum: 3 }],
  ]);
  const { sums, rollups } = applyUnitDeltas(mergeUnitDeltas([delta('u1', 1, 4), delta('u2', 2, 5)]), current);
  assert.deepEqual(
    sums.map((s) => [s.userId, s.n, s.sum]),
    [
      ['u1', 3, 7],
      ['u2', 2, 5],
    ],
  );
  // Σx: +4 +5; Σx²: (49 − 9) + 25; Σy: +1 +2; Σy²: (9 − 4) + 4; Σxy: (21 − 6) + 10; one new unit.
  assert.deepEqual(rollups, [{ ...key, units: 1, sumX: 9, sumX2: 65, sumY: 3, sumY2: 9, sumXY: 25 }]);
});

test('the same user twice in one batch is merged before it is read', () => {
  assert.deepEqual(mergeUnitDeltas([delta('u1', 1, 2), delta('u1', 1, 3)]), [delta('u1', 2, 5)]);
});

test('live differences add up to the rollup of the final sums (what a rebuild computes)', () => {
  const current = new Map<string, UnitSum>();
  const live = { units: 0, sumX: 0, sumX2: 0, sumY: 0, sumY2: 0, sumXY: 0 };
  const batches = [
    [delta('u1', 1, 2), delta('u2', 1, 1)],
    [delta('u1', 1, 3), delta('u3', 2, 8)],
    [delta('u2', 1, -1), delta('u3', -1, -4)],
  ];
  for (const batch of batches) {
    const { sums, rollups } = applyUnitDeltas(mergeUnitDeltas(batch), current);
    for (const s of sums) current.set(unitKey(s), s);
    for (const r of rollups) {
      for (const k of Object.keys(live) as Array<keyof typeof live>) live[k] += r[k];
    }
  }
  const [rebuilt] = rollUpUnits(current.values());
  assert.deepEqual(live, {
    units: rebuilt!.units,
    sumX: rebuilt!.sumX,
    sumX2: rebuilt!.sumX2,
    sumY: rebuilt!.sumY,
    sumY2: rebuilt!.sumY2,
    sumXY: rebuilt!.sumXY,
  });
});

test('a user whose last value moves away stops being a unit', () => {
  const current = new Map<string, UnitSum>([
    [unitKey({ ...key, userId: 'u1' }), { ...key, userId: 'u1', n: 1, sum: 1 }],
  ]);
  const { rollups } = applyUnitDeltas([delta('u1', -1, -1)], current);
  assert.equal(rollups[0]!.units, -1);
  assert.deepEqual(rollUpUnits([{ ...key, userId: 'u1', n: 0, sum: 0 }]), []);
});
