// Tests sample-size planning against hand-computed numbers and its refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unitsForPower } from './power.js';

describe('unitsForPower', () => {
  it('a 10% lift on a 50% success rate, two-sided at 5%, 80% power: 1,735 per variant', () => {
    // z_0.975 + z_0.8 = 1.959964 + 0.841621 = 2.801585, squared 7.848879. The lift's test (which must also
    // reject) has variance p(1 - p) (1 + 1.1^2) = 0.25 · 2.21 per unit; delta = 0.05:
    // 7.848879 · 0.5525 / 0.0025 = 1734.6 -> 1735 (the difference's test alone: 2 p(1 - p), 1570).
    assert.equal(unitsForPower({ variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05 }), 1735);
    for (const method of ['frequentist', 'bayesian'] as const) {
      assert.equal(unitsForPower({ variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05, method }), 1735);
    }
  });

  it('sequential: more units, depending on nStar (the simulation in test/stats-calibration checks the power)', () => {
    const o = { variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05, method: 'sequential' } as const;
    const n = unitsForPower({ ...o, nStar: 5000 })!;
    assert.ok(n > 1.5 * 1735 && n < 3 * 1735, `${n}`);
    assert.notEqual(unitsForPower({ ...o, nStar: 50_000 }), n);
    assert.equal(unitsForPower({ ...o, sided: 'greater', alpha: 0.5 }), null);
    assert.equal(unitsForPower({ ...o, nStar: 0 }), null);
  });

  it('one-sided needs fewer: z_0.95 = 1.644854', () => {
    // (1.644854 + 0.841621)^2 = 6.182557; · 0.5525 / 0.0025 = 1366.3 -> 1367.
    const o = { variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05 } as const;
    assert.equal(unitsForPower({ ...o, sided: 'greater' }), 1367);
    assert.equal(unitsForPower({ ...o, sided: 'less' }), 1367);
  });

  it('absolute effects, other power, and the sign of the control mean does not matter', () => {
    // Absolute delta 2 on variance 100, 90% power: (1.959964 + 1.281552)^2 = 10.507423; the lift's share
    // (1 + 2/7)^2 = 1.653061: · 100 · 2.653061 / 4 = 696.92 -> 697.
    assert.equal(
      unitsForPower({ variance: 100, controlMean: 7, mde: 2, alpha: 0.05, power: 0.9, effect: 'absolute' }),
      697,
    );
    const o = { variance: 4, mde: 0.05, alpha: 0.05 };
    assert.equal(unitsForPower({ ...o, controlMean: -20 }), unitsForPower({ ...o, controlMean: 20 }));
  });

  it("quarter the effect, sixteen times the units (times the change in the lift's share)", () => {
    const o = { variance: 9, controlMean: 3, alpha: 0.1 };
    const small = unitsForPower({ ...o, mde: 0.01 })!;
    const large = unitsForPower({ ...o, mde: 0.04 })!;
    const expected = (16 * (1 + 1.01 ** 2)) / (1 + 1.04 ** 2);
    assert.ok(Math.abs(small / large - expected) < 16 / large, `${small} / ${large}`);
  });

  it('is null when it cannot be computed', () => {
    const o = { variance: 1, controlMean: 1, mde: 0.05, alpha: 0.05 };
    for (const bad of [
      { variance: null },
      { variance: 0 },
      { variance: Number.NaN },
      { controlMean: 0 },
      { controlMean: null },
      { mde: 0 },
      { mde: -0.1 },
      { alpha: 1 },
      { power: 0 },
      { sided: 'better' as never },
    ]) {
      assert.equal(unitsForPower({ ...o, ...bad }), null, JSON.stringify(bad));
    }
    // An absolute effect does not need the control mean.
    assert.equal(unitsForPower({ ...o, controlMean: 0, effect: 'absolute' }), 6280);
  });
});
