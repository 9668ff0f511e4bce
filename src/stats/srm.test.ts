// Tests the sample-ratio-mismatch check beyond the vectors: zero-weight arms, thresholds, degenerate input.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { srmTest } from './srm.js';
import { assertAllFinite } from './test-helpers.js';

describe('srmTest', () => {
  it('skips zero-weight arms: counts, expectations and degrees of freedom', () => {
    const base = srmTest([1000, 1200], [0.5, 0.5]);
    const skipped = srmTest([1000, 0, 1200], [0.5, 0, 0.5]);
    assert.equal(skipped.chiSquare, base.chiSquare);
    assert.equal(skipped.pValue, base.pValue);
    assert.equal(skipped.dof, 1);
    assert.deepEqual(skipped.expected, [1100, null, 1100]);
    assert.deepEqual(skipped.warnings, []);
  });

  it('warns about traffic in an arm whose weight is 0', () => {
    const r = srmTest([1000, 7, 1200], [0.5, 0, 0.5]);
    assert.equal(r.pValue, srmTest([1000, 1200], [0.5, 0.5]).pValue);
    assert.match(r.warnings.join(), /arm 1 has weight 0 but 7 observations/);
  });

  it('flags a mismatch below the threshold only', () => {
    assert.equal(srmTest([1000, 1200], [1, 1]).mismatch, true);
    assert.equal(srmTest([1000, 1040], [1, 1]).mismatch, false);
    const lenient = srmTest([1000, 1200], [1, 1], { threshold: 1e-6 });
    assert.equal(lenient.mismatch, false);
    assert.equal(lenient.threshold, 1e-6);
  });

  it('keeps tiny p-values positive', () => {
    const r = srmTest([1000, 2000], [1, 1]); // chi-square 333, p about 1e-74
    assert.ok(r.pValue! > 0 && r.pValue! < 1e-50);
  });

  const degenerate: Array<[string, number[], number[]]> = [
    ['length mismatch', [10, 20], [1, 1, 1]],
    ['no observations', [0, 0], [1, 1]],
    ['a single weighted arm', [10, 20], [1, 0]],
    ['negative counts', [-1, 20], [1, 1]],
    ['NaN weights', [10, 20], [Number.NaN, 1]],
  ];
  for (const [name, observed, weights] of degenerate) {
    it(`reports ${name} with a warning and no NaN`, () => {
      const r = srmTest(observed, weights);
      assert.ok(r.warnings.length > 0);
      assert.equal(r.pValue, null);
      assert.equal(r.mismatch, null);
      assertAllFinite(r);
    });
  }
});
