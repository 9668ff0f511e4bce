// Tests the Bayesian analysis beyond the vectors: risk identities and tails, priors, degenerate data.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bayesianCompare, normalRisk } from './bayesian.js';
import { compareMeans } from './frequentist.js';
import { assertAllFinite } from './test-helpers.js';

const control = { n: 10, sum: 100, sumSquares: 1002.25 };
const treatment = { n: 10, sum: 105, sumSquares: 1111.5 };

describe('normalRisk', () => {
  it('risk of control minus risk of treatment is the mean (E[max(X,0)] - E[max(-X,0)] = E[X])', () => {
    for (const [mean, sd] of [
      [0.1, 0.05],
      [-2, 0.7],
      [0, 3],
      [1e-3, 1e-4],
    ] as const) {
      const [c, t] = normalRisk(mean, sd);
      assert.ok(Math.abs(c! - t! - mean) < 1e-15 + 1e-13 * Math.abs(mean));
    }
  });

  it('is accurate far in the tail where phi(z) - z Q(z) cancels (values from mpmath)', () => {
    const cases: Array<[number, number]> = [
      [5.5, 3.255006863050307e-9],
      [10, 7.474560254589328e-25],
      [30, 1.631956734091401e-199],
    ];
    for (const [z, expected] of cases) {
      const risk = normalRisk(z, 1)[1]!;
      // 1e-12: Q(30) itself carries ~1e-13 from rounding z^2 / 2 inside exp.
      assert.ok(Math.abs(risk - expected) < 1e-12 * expected, `z ${z}: ${risk}`);
    }
  });

  it('is deterministic for a zero standard deviation and null for an invalid one', () => {
    assert.deepEqual(normalRisk(-0.2, 0), [0, 0.2]);
    assert.deepEqual(normalRisk(1, -1), [null, null]);
    assert.deepEqual(normalRisk(Number.NaN, 1), [null, null]);
  });
});

describe('bayesianCompare', () => {
  it('with a flat prior, the posterior is the frequentist estimate and standard error', () => {
    const b = bayesianCompare(control, treatment);
    const f = compareMeans(control, treatment);
    assert.equal(b.expected, f.estimate);
    assert.equal(b.stdDev, f.stdError);
    assert.equal(b.prior, null);
  });

  it('a prior pulls the posterior toward its mean and narrows it', () => {
    const flat = bayesianCompare(control, treatment);
    const b = bayesianCompare(control, treatment, { prior: { mean: -0.1, variance: 0.001 } });
    assert.ok(b.expected! < flat.expected! && b.expected! > -0.1);
    assert.ok(b.stdDev! < flat.stdDev!);
  });

  it('ignores an invalid prior with a warning', () => {
    const b = bayesianCompare(control, treatment, { prior: { mean: 0, variance: 0 } });
    assert.equal(b.prior, null);
    assert.match(b.warnings.join(), /prior/);
    assert.equal(b.expected, bayesianCompare(control, treatment).expected);
  });

  it('supports the absolute effect', () => {
    const b = bayesianCompare(control, treatment, { effect: 'absolute' });
    assert.ok(Math.abs(b.expected! - 0.5) < 1e-12);
  });

  it('reports degenerate data with warnings, nulls and no NaN', () => {
    const cases = [
      [
        { n: 0, successes: 0 },
        { n: 10, successes: 3 },
      ],
      [
        { n: 10, successes: 0 },
        { n: 10, successes: 3 },
      ],
      [
        { n: 10, successes: 10 },
        { n: 10, successes: 10 },
      ],
      [{ n: 1, sum: 2, sumSquares: 4 }, treatment],
    ];
    for (const [c, t] of cases) {
      const b = bayesianCompare(c!, t!);
      assert.ok(b.warnings.length > 0);
      assert.equal(b.chanceToWin, null);
      assert.deepEqual(b.risk, [null, null]);
      assertAllFinite(b);
    }
  });
});
