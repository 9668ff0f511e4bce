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
    // The decision is the intersection of both scales: its p-value is the larger one.
    assert.equal(r.pValue, Math.max(abs.pValue!, rel.pValue!));
    assert.equal(r.significant, r.pValue! < 0.05);
    assert.equal(r.exact, null);
    // The same data is significant at a level above its p-value.
    assert.equal(
      compareArms(control, treatment, { ...o, alpha: Math.min(0.99, r.pValue! * 2) }).significant,
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

  it('never significant with an interval through 0: the lift can veto the difference', () => {
    // Control mean 1, treatment mean 1.1, both with SD 1 at n 800: the difference's z is 0.1 / 0.05 = 2.0,
    // but the lift's standard error carries the control's variance times (m_T/m_C)^2 = 1.21: z 1.95.
    const arm = (n: number, mean: number) => ({ n, sum: n * mean, sumSquares: n - 1 + n * mean * mean });
    const c = arm(800, 1);
    const t = arm(800, 1.0985);
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      for (const sided of ['two', 'greater'] as const) {
        const alpha = method === 'sequential' ? 0.3 : 0.05;
        const r = compareArms(c, t, { method, alpha, sided, direction: 'increase', nStar: 200 });
        for (const [name, e] of [
          ['absolute', r.absolute],
          ['relative', r.relative],
        ] as const) {
          const through = (e.ci[0] ?? -1) <= 0 && (e.ci[1] ?? 1) >= 0;
          assert.ok(!(r.significant && through), `${method} ${sided}: significant, ${name} ${e.ci}`);
        }
        if (method === 'bayesian') continue;
        const absP = r.absolute.pValue!;
        assert.equal(r.pValue, Math.max(absP, r.relative.pValue!));
        if (method === 'frequentist' && sided === 'two') {
          assert.ok(absP < alpha && r.relative.pValue! > alpha, `${absP} ${r.relative.pValue}`);
          assert.equal(r.significant, false);
        }
      }
    }
  });

  it('small counts: 0/500 vs 3/500 is no winner (Fisher one-sided p = 0.124), for every method', () => {
    const c = { n: 500, successes: 0 };
    const t = { n: 500, successes: 3 };
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      const r = compareArms(c, t, { method, alpha: 0.05, sided: 'better', direction: 'increase' });
      assert.equal(r.significant, false, method);
      assert.equal(r.better, false, method);
      // All 3 successes in treatment: C(500, 3) / C(1000, 3) = (500 · 499 · 498) / (1000 · 999 · 998).
      const fisher = (500 * 499 * 498) / (1000 * 999 * 998);
      assert.ok(Math.abs(r.exact!.fisherPValue - fisher) < 1e-10 * fisher, `${r.exact!.fisherPValue}`);
      assert.match(r.warnings.join(), /Fisher/);
      if (method !== 'bayesian') assert.ok(r.pValue! >= r.exact!.fisherPValue, `${method} ${r.pValue}`);
    }
    // Welch alone would have called it (one-sided p about 0.04).
    assert.ok(compareMeans(c, t, { sided: 'greater', effect: 'absolute' }).pValue! < 0.05);
    // 0/500 vs 12/500 is clear for every test: still significant.
    const clear = compareArms(
      c,
      { n: 500, successes: 12 },
      { method: 'frequentist', alpha: 0.05, sided: 'two' },
    );
    assert.equal(clear.significant, true);
    assert.ok(clear.absolute.ci[0]! > 0);
  });

  it('small counts per user: a boolean RatioMoments arm pools its counts when kind is proportion', () => {
    // 400 users with one observation each: sumX = successes, sumY = observations; x^2 = x for 0/1 values.
    const ratio = (s: number) => ({ n: 400, sumX: s, sumX2: s, sumY: 400, sumY2: 400, sumXY: s });
    const o = { method: 'frequentist', alpha: 0.05, sided: 'two' } as const;
    assert.equal(compareArms(ratio(1), ratio(9), o).exact, null);
    const r = compareArms(ratio(1), ratio(9), { ...o, kind: 'proportion' });
    assert.ok(r.exact !== null);
    const asCounts = compareArms({ n: 400, successes: 1 }, { n: 400, successes: 9 }, o);
    assert.equal(r.exact.fisherPValue, asCounts.exact!.fisherPValue);
  });

  it('reports a warning shared by both scales once', () => {
    const empty = { n: 0, sum: 0, sumSquares: 0 };
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      const r = compareArms(empty, treatment, { method, alpha: 0.05, sided: 'two' });
      assert.ok(r.warnings.length > 0, method);
      assert.equal(new Set(r.warnings).size, r.warnings.length, `${method}: ${r.warnings.join(' | ')}`);
      assert.equal(r.significant, false);
      assert.equal(r.pValue, null);
    }
  });
});
