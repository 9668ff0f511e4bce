// Tests the per-treatment comparison dispatch: which test each method runs and how significance is decided.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bayesianCompare } from './bayesian.js';
import { compareArms } from './compare.js';
import { compareMeans } from './frequentist.js';
import { sequentialCompare } from './sequential.js';

const control = { n: 10, sum: 100, sumSquares: 1002.25 };
const treatment = { n: 10, sum: 105, sumSquares: 1111.5 };
const pick = (r: {
  estimate: number | null;
  ci: unknown;
  stdError: number | null;
  pValue: number | null;
}) => ({
  estimate: r.estimate,
  ci: r.ci,
  stdError: r.stdError,
  pValue: r.pValue,
});

describe('compareArms', () => {
  it('frequentist: Welch on both scales, significance from the absolute effect’s p-value', () => {
    const o = { method: 'frequentist', alpha: 0.05, sided: 'two' } as const;
    const r = compareArms(control, treatment, o);
    const abs = compareMeans(control, treatment, { alpha: 0.05, sided: 'two', effect: 'absolute' });
    const rel = compareMeans(control, treatment, { alpha: 0.05, sided: 'two', effect: 'relative' });
    assert.deepEqual(r.absolute, pick(abs));
    assert.deepEqual(r.relative, pick(rel));
    assert.equal(r.chanceToWin, null);
    assert.deepEqual(r.risk, [null, null]);
    assert.equal(r.significant, abs.pValue! < 0.05);
    // The same data is significant at a level above its p-value.
    assert.equal(
      compareArms(control, treatment, { ...o, alpha: Math.min(0.99, abs.pValue! * 2) }).significant,
      true,
    );
  });

  it('sequential: the confidence sequence with the given nStar', () => {
    const r = compareArms(control, treatment, {
      method: 'sequential',
      alpha: 0.1,
      sided: 'greater',
      nStar: 200,
    });
    const abs = sequentialCompare(control, treatment, {
      alpha: 0.1,
      sided: 'greater',
      effect: 'absolute',
      nStar: 200,
    });
    assert.deepEqual(r.absolute, pick(abs));
    assert.equal(r.significant, abs.pValue !== null && abs.pValue < 0.1);
  });

  it('bayesian: no p-values; chance to win of the lift, significant outside (alpha, 1 - alpha)', () => {
    const big = { n: 1000, sum: 11000, sumSquares: 11000 ** 2 / 1000 + 999 * 4 };
    const o = { method: 'bayesian', alpha: 0.05, sided: 'two', direction: 'increase' } as const;
    const r = compareArms(control, big, o);
    const rel = bayesianCompare(control, big, { alpha: 0.05, effect: 'relative' });
    assert.equal(r.absolute.pValue, null);
    assert.equal(r.relative.pValue, null);
    assert.equal(r.relative.estimate, rel.expected);
    assert.equal(r.chanceToWin, rel.chanceToWin);
    assert.deepEqual(r.risk, rel.risk);
    assert.ok(r.chanceToWin! > 0.95);
    assert.equal(r.significant, true);
    assert.equal(r.better, true);
    assert.equal(r.worse, false);
  });

  it('bayesian: falls back to the absolute effect when the control mean is 0 (no lift)', () => {
    const zero = { n: 10, sum: 0, sumSquares: 10 };
    const o = { method: 'bayesian', alpha: 0.05, sided: 'two', direction: 'increase' } as const;
    const r = compareArms(zero, treatment, o);
    const abs = bayesianCompare(zero, treatment, { alpha: 0.05, effect: 'absolute' });
    assert.equal(bayesianCompare(zero, treatment, { alpha: 0.05, effect: 'relative' }).chanceToWin, null);
    assert.equal(r.chanceToWin, abs.chanceToWin);
    assert.deepEqual(r.risk, abs.risk);
  });

  it('reports a warning shared by both scales once', () => {
    const empty = { n: 0, sum: 0, sumSquares: 0 };
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      const r = compareArms(empty, treatment, { method, alpha: 0.05, sided: 'two' });
      assert.ok(r.warnings.length > 0, method);
      assert.equal(new Set(r.warnings).size, r.warnings.length, `${method}: ${r.warnings.join(' | ')}`);
      assert.equal(r.significant, false);
    }
  });
});
