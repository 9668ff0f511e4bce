// Tests sample-size planning against hand-computed numbers, its margin for measured inputs, and its refusals.
// test/stats-units-scipy.test.ts checks the same formulas against scipy on random inputs, and
// test/stats-power-pilot.test.ts the power they deliver from a noisy pilot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unitsForPower } from './power.js';

// (z_0.975 + z_0.8)^2 = (1.959964 + 0.841621)^2 = 7.848880.
describe('unitsForPower, the inputs taken as known', () => {
  it('a 10% lift on a 50% success rate: the difference’s variance at the shifted rate, 1,562 per variant', () => {
    // p(1 - p) + p'(1 - p') = 0.25 + 0.55 · 0.45 = 0.4975 (0.45 gives the same); delta = 0.05:
    // 7.848880 · 0.4975 / 0.0025 = 1561.9 -> 1562.
    const o = { variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05, kind: 'proportion' } as const;
    assert.equal(unitsForPower(o), 1562);
    for (const method of ['frequentist', 'bayesian'] as const)
      assert.equal(unitsForPower({ ...o, method }), 1562);
  });

  it('a mean with a relative mde: the larger of a shift and a scale change, v (1 + (1 + mde)^2)', () => {
    // 7.848880 · 0.25 · (1 + 1.1^2) / 0.05^2 = 1734.6 -> 1735: a 10% larger mean with the same shape has a 21%
    // larger variance.
    assert.equal(unitsForPower({ variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05 }), 1735);
    // Toward 0 (one-sided) a scale change shrinks the variance, so the shift plans:
    // (1.644854 + 0.841621)^2 · 0.25 · 2 / 0.05^2 = 6.182557 · 200 = 1236.5, against 1367 away from 0.
    const half = { variance: 0.25, mde: 0.1, alpha: 0.05 };
    assert.equal(unitsForPower({ ...half, controlMean: 0.5, sided: 'less' }), 1237);
    assert.equal(unitsForPower({ ...half, controlMean: -0.5, sided: 'greater' }), 1237);
    assert.equal(unitsForPower({ ...half, controlMean: -0.5, sided: 'less' }), 1367);
    const o = { variance: 4, mde: 0.05, alpha: 0.05 };
    assert.equal(unitsForPower({ ...o, controlMean: -20 }), unitsForPower({ ...o, controlMean: 20 }));
  });

  it('sequential: more units, depending on nStar (test/stats-power-pilot checks the power)', () => {
    const o = { variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05, method: 'sequential' } as const;
    const n = unitsForPower({ ...o, nStar: 5000 })!;
    assert.ok(n > 1.5 * 1735 && n < 3 * 1735, `${n}`);
    assert.notEqual(unitsForPower({ ...o, nStar: 50_000 }), n);
    assert.equal(unitsForPower({ ...o, sided: 'greater', alpha: 0.5 }), null);
    assert.equal(unitsForPower({ ...o, nStar: 0 }), null);
  });

  it('one-sided needs fewer: z_0.95 = 1.644854', () => {
    // (1.644854 + 0.841621)^2 = 6.182557; · 0.25 · 2.21 / 0.0025 = 1366.3 -> 1367.
    const o = { variance: 0.25, controlMean: 0.5, mde: 0.1, alpha: 0.05 } as const;
    assert.equal(unitsForPower({ ...o, sided: 'greater' }), 1367);
  });

  it('absolute effects and other power: a shift, 2 v', () => {
    // Delta 2 on variance 100, 90% power: (1.959964 + 1.281552)^2 = 10.507423; · 200 / 4 = 525.37 -> 526.
    assert.equal(
      unitsForPower({ variance: 100, controlMean: 7, mde: 2, alpha: 0.05, power: 0.9, effect: 'absolute' }),
      526,
    );
  });

  it('proportions with an absolute mde plan at the rate the shift makes noisiest', () => {
    // p = 0.3, +0.1 (to 0.4) or -0.1 (to 0.2): 0.21 + max(0.24, 0.16) = 0.45; 7.848880 · 0.45 / 0.01 = 353.2.
    const o = { variance: 0.21, controlMean: 0.3, mde: 0.1, alpha: 0.05, effect: 'absolute' } as const;
    assert.equal(unitsForPower({ ...o, kind: 'proportion' }), 354);
    // One-sided down: 0.21 + 0.16 = 0.37 at (1.644854 + 0.841621)^2 = 6.182557: 228.75.
    assert.equal(unitsForPower({ ...o, kind: 'proportion', sided: 'less' }), 229);
    // A rise past 100% cannot happen: no plan one-sided; two-sided, the fall (to 0.85):
    // 7.848880 · (0.0475 + 0.1275) / 0.01 = 137.4.
    const high = { ...o, variance: 0.0475, controlMean: 0.95, kind: 'proportion' } as const;
    assert.equal(unitsForPower({ ...high, sided: 'greater' }), null);
    assert.equal(unitsForPower(high), 138);
  });

  it("quarter the effect, sixteen times the units (times the change in the scale model's share)", () => {
    const o = { variance: 9, controlMean: 3, alpha: 0.1 };
    const small = unitsForPower({ ...o, mde: 0.01 })!;
    const large = unitsForPower({ ...o, mde: 0.04 })!;
    const expected = (16 * (1 + 1.01 ** 2)) / (1 + 1.04 ** 2);
    assert.ok(Math.abs(small / large - expected) < 16 / large, `${small} / ${large}`);
  });
});

describe('unitsForPower, measured on `units`: the bounds that keep a noisy pilot from planning short', () => {
  it('a mean: the variance at its chi-square upper bound, |m_C| at its lower bound (one-sided 80%)', () => {
    // 30 units, variance 16, mean 10, +10%: chi2_0.2(29) = 22.475052, so v+ = 16 · 29 / 22.475052 = 20.645114;
    // |m|- = 10 - 0.841621 · sqrt(16 / 30) = 9.385367; 7.848880 · 20.645114 · 2.21 / 0.9385367^2 = 406.55.
    const o = { variance: 16, controlMean: 10, mde: 0.1, alpha: 0.05 };
    assert.equal(unitsForPower(o), 278); // 7.848880 · 16 · 2.21 = 277.5 with the estimates taken as known
    assert.equal(unitsForPower({ ...o, units: 30 }), 407);
    // The margin shrinks as the units grow, toward the known-input number.
    const plans = [30, 100, 1000, 100_000].map((units) => unitsForPower({ ...o, units })!);
    assert.deepEqual(
      plans,
      [...plans].sort((a, b) => b - a),
    );
    assert.ok(plans[3]! - 278 <= 2, `${plans}`);
    // A lower confidence, a smaller margin.
    assert.ok(unitsForPower({ ...o, units: 30, confidence: 0.6 })! < 407);
  });

  it('an absolute mde needs only the variance bound', () => {
    // chi2_0.2(100) = 87.945336: 7.848880 · 2 · 100 · 100 / 87.945336 / 4 = 446.24 -> 447.
    const o = { variance: 100, controlMean: 7, mde: 2, alpha: 0.05, effect: 'absolute' } as const;
    assert.equal(unitsForPower({ ...o, units: 101 }), 447);
    assert.equal(unitsForPower({ ...o, controlMean: 0, units: 101 }), 447);
  });

  it('a proportion: the rate at its Wilson lower bound for a relative mde (40 of 400 in control, +20%)', () => {
    // Wilson at z_0.8 on 400: 0.088074; delta = 0.2 · 0.088074 = 0.017615, p' = 0.105689:
    // 7.848880 · (0.088074 · 0.911926 + 0.105689 · 0.894311) / 0.017615^2 = 4422.6 -> 4423 (known: 3839).
    const o = { variance: 0.09, controlMean: 0.1, mde: 0.2, alpha: 0.05, kind: 'proportion' } as const;
    assert.equal(unitsForPower(o), 3839);
    assert.equal(unitsForPower({ ...o, units: 400 }), 4423);
  });

  it('a proportion with an absolute mde: the noisiest rate inside the interval, not only its ends', () => {
    // 12 of 30: Wilson [0.328, 0.477] holds 0.45, where p(1 - p) + p'(1 - p') peaks for a rise of 0.1:
    // 0.2475 + 0.2475 = 0.495; 7.848880 · 0.495 / 0.01 = 388.5 (at the estimate 0.4 alone: 0.49, 384.6).
    const o = {
      variance: 0.24,
      controlMean: 0.4,
      mde: 0.1,
      alpha: 0.05,
      effect: 'absolute',
      kind: 'proportion',
    } as const;
    assert.equal(unitsForPower(o), 385);
    assert.equal(unitsForPower({ ...o, units: 30 }), 389);
  });

  it('a proportion per user keeps its design effect: twice the variance, twice the units', () => {
    const o = { controlMean: 0.1, mde: 0.2, alpha: 0.05, kind: 'proportion' } as const;
    const plain = unitsForPower({ ...o, variance: 0.09 })!;
    const clustered = unitsForPower({ ...o, variance: 0.18 })!;
    assert.ok(Math.abs(clustered - 2 * plain) <= 1, `${plain} ${clustered}`);
    // Measured, the clustered rate is known from half the effective units, so its margin is wider.
    const margin = (variance: number) =>
      unitsForPower({ ...o, variance, units: 400 })! / unitsForPower({ ...o, variance })!;
    assert.ok(margin(0.18) > margin(0.09));
  });

  it('no plan while the control mean is not known to differ from 0 (a relative mde has no size yet)', () => {
    // |m|- = 0.5 - 0.841621 · sqrt(4 / 10) < 0.
    assert.equal(unitsForPower({ variance: 4, controlMean: 0.5, mde: 0.1, alpha: 0.05, units: 10 }), null);
    assert.ok(unitsForPower({ variance: 4, controlMean: 0.5, mde: 0.1, alpha: 0.05, units: 1000 })! > 0);
  });
});

describe('unitsForPower refusals', () => {
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
      { effect: 'ratio' as never },
      { units: 1 },
      { units: Number.NaN },
      { confidence: 1 },
      { kind: 'proportion' as const, controlMean: 1 },
      { kind: 'proportion' as const, controlMean: 1.5 },
    ]) {
      assert.equal(unitsForPower({ ...o, ...bad }), null, JSON.stringify(bad));
    }
    // An absolute effect does not need the control mean: 7.848880 · 2 / 0.0025 = 6279.1.
    assert.equal(unitsForPower({ ...o, controlMean: 0, effect: 'absolute' }), 6280);
  });
});
