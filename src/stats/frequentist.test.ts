// Tests Welch's t-test beyond the vectors: sidedness, tails, degenerate data and invalid options.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareMeans } from './frequentist.js';
import { assertAllFinite } from './test-helpers.js';
import type { ArmData } from './types.js';

const control = { n: 3000, sum: 1396.87, sumSquares: 52377.9767 };
const treatment = { n: 3461, sum: 2422.7, sumSquares: 134698.29 };

/** Sufficient statistics of n observations with the given mean and sample standard deviation. */
const arm = (n: number, mean: number, sd: number): ArmData => ({
  n,
  sum: n * mean,
  sumSquares: (n - 1) * sd * sd + n * mean * mean,
});

describe('compareMeans', () => {
  it('one-sided p-values add up to 1 and the two-sided one is twice the smaller', () => {
    for (const effect of ['absolute', 'relative'] as const) {
      const greater = compareMeans(control, treatment, { effect, sided: 'greater' }).pValue!;
      const less = compareMeans(control, treatment, { effect, sided: 'less' }).pValue!;
      const two = compareMeans(control, treatment, { effect }).pValue!;
      assert.ok(Math.abs(greater + less - 1) < 1e-14);
      assert.ok(Math.abs(two - 2 * Math.min(greater, less)) < 1e-14);
    }
  });

  it('defaults to a two-sided test of the relative lift at alpha 0.05', () => {
    const r = compareMeans(control, treatment);
    assert.deepEqual([r.method, r.sided, r.effect, r.alpha], ['welch', 'two', 'relative', 0.05]);
  });

  it('divides the lift by |control mean|, so a rise from a negative mean is a positive lift', () => {
    const r = compareMeans(arm(50, -10, 2), arm(50, -5, 2));
    assert.ok(Math.abs(r.estimate! - 0.5) < 1e-12);
  });

  it('keeps a tiny p-value positive rather than rounding it to 0', () => {
    const r = compareMeans(arm(5000, 10, 1), arm(5000, 10.6, 1), { effect: 'absolute' });
    assert.ok(r.pValue! > 0 && r.pValue! < 1e-150, `${r.pValue}`); // t = 30
  });

  it('uses n_T - 1 degrees of freedom when the control does not vary, and says so', () => {
    const r = compareMeans(arm(20, 1, 0), arm(30, 1.5, 1), { effect: 'absolute' });
    assert.ok(Math.abs(r.dof! - 29) < 1e-9);
    assert.ok(r.pValue !== null);
    assert.match(r.warnings.join(), /control: zero variance/);
  });

  const degenerate: Array<[string, ArmData, ArmData, RegExp, Partial<Record<'estimate', number>>]> = [
    ['an empty arm', { n: 0, sum: 0, sumSquares: 0 }, treatment, /n = 0/, {}],
    ['a single observation', { n: 1, sum: 0.5, sumSquares: 0.25 }, treatment, /n >= 2/, { estimate: 0.4 }],
    ['no variance at all', arm(10, 1, 0), arm(10, 2, 0), /zero standard error/, { estimate: 1 }],
    ['a control mean of 0 (relative)', arm(10, 0, 1), arm(10, 2, 1), /control mean is 0/, {}],
    ['all-failure proportions', { n: 40, successes: 0 }, { n: 40, successes: 0 }, /control mean is 0/, {}],
    ['inconsistent moments', { n: 10, sum: 10, sumSquares: 1 }, treatment, /inconsistent/, {}],
  ];
  for (const [name, c, t, warning, expected] of degenerate) {
    it(`reports ${name} with a warning, nulls and no NaN`, () => {
      const r = compareMeans(c, t);
      assert.match(r.warnings.join('; '), warning);
      assert.equal(r.pValue, null);
      assert.deepEqual(r.ci, [null, null]);
      if (expected.estimate !== undefined) assert.ok(Math.abs(r.estimate! - expected.estimate) < 1e-9);
      assertAllFinite(r);
    });
  }

  it('still tests the absolute difference when the control mean is 0', () => {
    const r = compareMeans(arm(10, 0, 1), arm(10, 2, 1), { effect: 'absolute' });
    assert.deepEqual(r.warnings, []);
    assert.ok(r.pValue! < 0.01);
  });

  it('falls back to defaults, with warnings, for invalid options', () => {
    const r = compareMeans(control, treatment, {
      alpha: 1.5,
      sided: 'up' as never,
      effect: 'ratio' as never,
    });
    assert.deepEqual([r.alpha, r.sided, r.effect], [0.05, 'two', 'relative']);
    assert.equal(r.warnings.length, 3);
    assert.ok(r.ci[0] !== null && r.ci[1] !== null);
  });

  it('never throws or returns non-finite numbers, whatever the input', () => {
    const weird = [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1, 2, 1e308, 1e-308];
    for (const n of weird) {
      for (const x of weird) {
        const r = compareMeans({ n, sum: x, sumSquares: x * x }, { n: 2, sum: x, sumSquares: 1e308 });
        assertAllFinite(r);
        assert.ok(r.warnings.length > 0 || r.pValue !== null);
      }
    }
  });
});
