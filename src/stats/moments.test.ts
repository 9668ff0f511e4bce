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

  const degenerate = [
    { arm: { n: 0, sum: 0, sumSquares: 0 }, mean: null, warning: /n = 0/ },
    { arm: { n: 1, sum: 3, sumSquares: 9 }, mean: 3, warning: /n < 2/ },
    { arm: { n: 5, sum: 10, sumSquares: 1 }, mean: 2, warning: /inconsistent/ },
    { arm: { n: 5, successes: 6 }, mean: null, warning: /successes/ },
    { arm: { n: Number.NaN, sum: 1, sumSquares: 1 }, mean: null, warning: /n must be/ },
    { arm: { n: 3, sum: Number.POSITIVE_INFINITY, sumSquares: 1 }, mean: null, warning: /finite/ },
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
