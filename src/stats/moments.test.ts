// Tests per-arm summaries from sufficient statistics and proportions, including degenerate inputs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarizeArm } from './moments.js';
import { assertAllFinite } from './test-helpers.js';

describe('summarizeArm', () => {
  it('uses the n - 1 sample variance for numeric metrics', () => {
    // Observations 1, 2, 3, 4.
    const s = summarizeArm({ n: 4, sum: 10, sumSquares: 30 });
    assert.equal(s.mean, 2.5);
    assert.ok(Math.abs(s.variance! - 5 / 3) < 1e-15);
    assert.ok(Math.abs(s.stdDev! - Math.sqrt(5 / 3)) < 1e-15);
    assert.deepEqual(s.warnings, []);
  });

  it('uses p (1 - p) for proportions', () => {
    const s = summarizeArm({ n: 4, successes: 3 });
    assert.equal(s.mean, 0.75);
    assert.equal(s.variance, 0.1875);
  });

  it('treats rounding noise on constant data as zero variance, without a warning', () => {
    const s = summarizeArm({ n: 3, sum: 0.1 + 0.1 + 0.1, sumSquares: 0.01 + 0.01 + 0.01 });
    assert.equal(s.variance, 0);
    assert.deepEqual(s.warnings, []);
  });

  it('ratio: R = sumX / sumY and n Var(R) by the delta method', () => {
    // Units (x, y): (2, 1), (3, 2), (1, 3), (4, 2). R = 10 / 8 = 1.25, my = 2. The residuals x - R y are
    // 0.75, 0.5, -2.75, 1.5 (sum 0); their squares sum to 10.625, so n Var(R) = 10.625 / 3 / my^2 = 85/96.
    const s = summarizeArm({ n: 4, sumX: 10, sumX2: 30, sumY: 8, sumY2: 18, sumXY: 19 });
    assert.equal(s.mean, 1.25);
    assert.ok(Math.abs(s.variance! - 85 / 96) < 1e-15, `${s.variance}`);
    assert.deepEqual(s.warnings, []);
  });

  it('ratio: one observation per unit is the plain mean and sample variance', () => {
    // Observations 1, 2, 3, 4, each its own unit (y = 1).
    const s = summarizeArm({ n: 4, sumX: 10, sumX2: 30, sumY: 4, sumY2: 4, sumXY: 10 });
    assert.equal(s.mean, 2.5);
    assert.ok(Math.abs(s.variance! - 5 / 3) < 1e-15);
  });

  it('ratio: a constant ratio per unit has zero variance, without a warning', () => {
    // Units (x, y) = (0.3, 1), (0.6, 2), (0.9, 3): x = 0.3 y exactly, so R is known without error.
    const s = summarizeArm({ n: 3, sumX: 1.8, sumX2: 1.26, sumY: 6, sumY2: 14, sumXY: 4.2 });
    assert.ok(Math.abs(s.mean! - 0.3) < 1e-15);
    assert.equal(s.variance, 0);
    assert.deepEqual(s.warnings, []);
  });

  const degenerate = [
    { arm: { n: 0, sum: 0, sumSquares: 0 }, mean: null, warning: /n = 0/ },
    { arm: { n: 1, sum: 3, sumSquares: 9 }, mean: 3, warning: /n < 2/ },
    { arm: { n: 5, sum: 10, sumSquares: 1 }, mean: 2, warning: /inconsistent/ },
    { arm: { n: 5, successes: 6 }, mean: null, warning: /successes/ },
    { arm: { n: Number.NaN, sum: 1, sumSquares: 1 }, mean: null, warning: /n must be/ },
    { arm: { n: 3, sum: Number.POSITIVE_INFINITY, sumSquares: 1 }, mean: null, warning: /finite/ },
    { arm: { n: 1, sumX: 3, sumX2: 9, sumY: 2, sumY2: 4, sumXY: 6 }, mean: 1.5, warning: /n < 2/ },
    { arm: { n: 2, sumX: 3, sumX2: 5, sumY: 0, sumY2: 0, sumXY: 0 }, mean: null, warning: /sumY = 0/ },
    { arm: { n: 2, sumX: 3, sumX2: 1, sumY: 2, sumY2: 2, sumXY: 3 }, mean: 1.5, warning: /inconsistent/ },
    // vx = 0.5, vy = 0.5 but cxy = 4.5: a covariance no data can have.
    { arm: { n: 2, sumX: 3, sumX2: 5, sumY: 3, sumY2: 5, sumXY: 9 }, mean: 1, warning: /covariance/ },
    { arm: { n: 2, sumX: 3, sumX2: 5, sumY: 3, sumY2: 5, sumXY: Number.NaN }, mean: null, warning: /finite/ },
  ];
  for (const { arm, mean, warning } of degenerate) {
    it(`warns instead of failing: ${JSON.stringify(arm)}`, () => {
      const s = summarizeArm(arm);
      assert.equal(s.mean, mean);
      assert.equal(s.variance, null);
      assert.match(s.warnings.join('; '), warning);
      assertAllFinite(s);
    });
  }
});
