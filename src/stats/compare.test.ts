// Tests the per-treatment comparison: one test decides per kind of metric (Welch, the sequence or the flat
// posterior for means; the score test for proportions; exact for arms without spread), and both printed
// intervals are that test's, so neither can disagree with the decision.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bayesianCompare } from './bayesian.js';
import { compareArms } from './compare.js';
import { normalCdf } from './distributions.js';
import { compareMeans } from './frequentist.js';
import { sequentialCompare } from './sequential.js';
import type { Interval } from './types.js';

const control = { n: 10, sum: 100, sumSquares: 1002.25 };
const treatment = { n: 10, sum: 105, sumSquares: 1111.5 };
const arm = (n: number, mean: number, sd = 1) => ({
  n,
  sum: n * mean,
  sumSquares: (n - 1) * sd * sd + n * mean * mean,
});
const excludes0 = (ci: Interval) => (ci[0] !== null && ci[0] > 0) || (ci[1] !== null && ci[1] < 0);

describe('compareArms', () => {
  it('frequentist means: Welch decides on the difference; the lift has its Fieller interval', () => {
    const o = { method: 'frequentist', alpha: 0.05, sided: 'two' } as const;
    const r = compareArms(control, treatment, o);
    const abs = compareMeans(control, treatment, { alpha: 0.05, sided: 'two', effect: 'absolute' });
    const rel = compareMeans(control, treatment, { alpha: 0.05, sided: 'two', effect: 'relative' });
    assert.deepEqual(r.absolute, {
      estimate: abs.estimate,
      ci: abs.ci,
      stdError: abs.stdError,
      pValue: abs.pValue,
    });
    assert.equal(r.relative.estimate, rel.estimate);
    assert.equal(r.relative.stdError, rel.stdError);
    assert.equal(r.relative.pValue, abs.pValue);
    assert.equal(r.pValue, abs.pValue);
    assert.deepEqual(r.test, { method: 'welch', level: 0.95 });
    assert.equal(r.chanceToWin, null);
    assert.equal(r.exact, null);
    // Fieller: at each bound ρ = 1 + lift, (m_T − ρ m_C) / sqrt(s_T² + ρ² s_C²) is ± the same t quantile.
    const [mC, mT, sC2, sT2] = [10, 10.5, (1002.25 - 1000) / 9 / 10, (1111.5 - 1102.5) / 9 / 10];
    const crit = (abs.ci[1]! - abs.estimate!) / abs.stdError!;
    for (const [bound, sign] of [
      [r.relative.ci[0]!, 1],
      [r.relative.ci[1]!, -1],
    ] as const) {
      const rho = 1 + bound;
      const t = (mT - rho * mC) / Math.sqrt(sT2 + rho * rho * sC2);
      assert.ok(Math.abs(t - sign * crit) < 1e-9, `${t} vs ${sign * crit}`);
    }
  });

  it('one test decides: the lift no longer vetoes the difference, and both intervals exclude 0 together', () => {
    // Control 1, treatment 1.0985, SD 1, n 800: the difference's z is about 1.97; the old delta-method lift
    // test (z about 1.95) vetoed it.
    const c = arm(800, 1);
    const t = arm(800, 1.0985);
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      for (const sided of ['two', 'greater', 'less'] as const) {
        for (const alpha of [0.05, 0.3]) {
          const r = compareArms(c, t, { method, alpha, sided, direction: 'increase', nStar: 200 });
          assert.equal(r.significant, r.pValue! < alpha);
          assert.equal(excludes0(r.absolute.ci), r.significant, `${method} ${sided} ${alpha} absolute`);
          assert.equal(excludes0(r.relative.ci), r.significant, `${method} ${sided} ${alpha} relative`);
        }
      }
    }
    assert.equal(compareArms(c, t, { method: 'frequentist', alpha: 0.05, sided: 'two' }).significant, true);
  });

  it('agreement holds on random arms of every shape, for every method and alternative', () => {
    let seed = 3;
    const rand = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    let checked = 0;
    for (let i = 0; i < 300; i++) {
      const n = 5 + Math.floor(rand() * 400);
      const mean = (rand() - 0.3) * 10;
      const c = arm(n, mean, 0.5 + rand() * 5);
      const t = arm(5 + Math.floor(rand() * 400), mean + (rand() - 0.5) * 3, 0.5 + rand() * 5);
      const pc = { n: 20 + Math.floor(rand() * 500), successes: 0 };
      pc.successes = Math.floor(rand() * pc.n);
      const pt = { n: 20 + Math.floor(rand() * 500), successes: 0 };
      pt.successes = Math.floor(rand() * pt.n);
      for (const [a, b] of [
        [c, t],
        [pc, pt],
      ] as const) {
        for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
          for (const sided of ['two', 'greater', 'less'] as const) {
            const r = compareArms(a, b, { method, alpha: 0.05, sided, nStar: 1000 });
            assert.equal(excludes0(r.absolute.ci), r.significant, `${i} ${method} ${sided} absolute`);
            if (r.relative.ci[0] !== null || r.relative.ci[1] !== null) {
              assert.equal(excludes0(r.relative.ci), r.significant, `${i} ${method} ${sided} relative`);
              checked++;
            }
          }
        }
      }
    }
    assert.ok(checked > 4000, `${checked}`);
  });

  it('sequential: the confidence sequence of the difference, with the given nStar', () => {
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
    assert.equal(r.absolute.pValue, abs.pValue);
    assert.deepEqual(r.absolute.ci, abs.ci);
    assert.equal(r.test.method, 'sequence');
    assert.equal(r.significant, abs.pValue !== null && abs.pValue < 0.1);
  });

  it('bayesian means: the flat posterior of the difference decides; pValue is its other-side probability', () => {
    const big = arm(1000, 11, 2);
    const o = { method: 'bayesian', alpha: 0.05, sided: 'two', direction: 'increase' } as const;
    const r = compareArms(control, big, o);
    const abs = bayesianCompare(control, big, { alpha: 0.05, effect: 'absolute' });
    const z = abs.expected! / abs.stdDev!;
    assert.ok(Math.abs(r.chanceToWin! - normalCdf(z)) < 1e-12);
    assert.ok(Math.abs(r.pValue! - 2 * normalCdf(-Math.abs(z))) < 1e-15);
    assert.equal(r.test.method, 'posterior');
    assert.equal(r.significant, true);
    assert.equal(r.better, true);
    assert.equal(r.worse, false);
  });

  it('bayesian with a control mean of 0: no lift; the chance to win is the difference’s', () => {
    const zero = { n: 10, sum: 0, sumSquares: 10 };
    const r = compareArms(zero, treatment, {
      method: 'bayesian',
      alpha: 0.05,
      sided: 'two',
      direction: 'increase',
    });
    const abs = bayesianCompare(zero, treatment, { alpha: 0.05, effect: 'absolute' });
    assert.equal(r.relative.estimate, null);
    assert.ok(Math.abs(r.chanceToWin! - abs.chanceToWin!) < 1e-12);
  });

  it('a control mean within noise of 0 leaves the lift unbounded: null bounds and a warning, never infinity', () => {
    const r = compareArms(arm(20, 0.1, 3), arm(20, 3, 3), {
      method: 'frequentist',
      alpha: 0.05,
      sided: 'two',
    });
    assert.deepEqual(r.relative.ci, [null, null]);
    assert.match(r.warnings.join(), /unbounded/);
    assert.ok(excludes0(r.absolute.ci));
  });

  it('constants are known: a fixed price 0.003 vs 0.001 is decided, −66.7%, and its interval is the point', () => {
    const c = { n: 400, sum: 400 * 0.003, sumSquares: 400 * 0.003 ** 2 };
    const t = { n: 380, sum: 380 * 0.001, sumSquares: 380 * 0.001 ** 2 };
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      const r = compareArms(c, t, { method, alpha: 0.05, sided: 'two', direction: 'decrease' });
      assert.equal(r.test.method, 'known');
      assert.equal(r.significant, true);
      assert.equal(r.better, true);
      assert.equal(r.pValue, 0);
      assert.ok(Math.abs(r.relative.estimate! + 2 / 3) < 1e-12);
      assert.deepEqual(r.relative.ci, [r.relative.estimate, r.relative.estimate]);
      assert.ok(r.relative.ci.every((b) => b !== null && Number.isFinite(b)));
      if (method === 'bayesian') assert.equal(r.chanceToWin, 1);
    }
    // Rounding noise in the sums (sd 4e-11 on a mean of 0.001) is no spread: still known, not p = 1e-263.
    const noisy = { n: 59, sum: 59 * 0.001, sumSquares: 59 * 0.001 ** 2 + 58 * 4.1e-11 ** 2 };
    const r = compareArms(c, noisy, {
      method: 'frequentist',
      alpha: 0.05,
      sided: 'two',
      direction: 'decrease',
    });
    assert.equal(r.test.method, 'known');
  });

  it('proportions: the score test decides in every method, with Fisher beside it when events are few', () => {
    const c = { n: 500, successes: 0 };
    const t = { n: 500, successes: 3 };
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      const r = compareArms(c, t, { method, alpha: 0.05, sided: 'better', direction: 'increase' });
      assert.equal(r.test.method, method === 'sequential' ? 'score-sequence' : 'score');
      // All 3 successes in treatment: C(500, 3) / C(1000, 3) = (500 · 499 · 498) / (1000 · 999 · 998).
      const fisher = (500 * 499 * 498) / (1000 * 999 * 998);
      assert.ok(Math.abs(r.exact!.fisherPValue - fisher) < 1e-10 * fisher, `${r.exact!.fisherPValue}`);
      assert.equal(r.significant, r.pValue! < 0.05);
      assert.equal(excludes0(r.absolute.ci), r.significant);
    }
    // The pooled score z: 0.006 / sqrt(0.003 · 0.997 · (2/500) · 1000/999) = 1.734, one-sided p 0.0415.
    const f = compareArms(c, t, {
      method: 'frequentist',
      alpha: 0.05,
      sided: 'better',
      direction: 'increase',
    });
    assert.ok(
      Math.abs(f.pValue! - normalCdf(-0.006 / Math.sqrt(0.003 * 0.997 * (2 / 500) * (1000 / 999)))) < 1e-12,
    );
  });

  it('proportions per user: Rao–Scott counts, so repeat calls of one user do not count as independent', () => {
    // 400 users with one call each pool to the per-call counts exactly (design effect n/(n − 1) → at most 1.003).
    const single = (s: number) => ({ n: 400, sumX: s, sumX2: s, sumY: 400, sumY2: 400, sumXY: s });
    const o = { method: 'frequentist', alpha: 0.05, sided: 'two', kind: 'proportion' } as const;
    const r = compareArms(single(20), single(40), o);
    const calls = compareArms({ n: 400, successes: 20 }, { n: 400, successes: 40 }, o);
    assert.ok(Math.abs(r.pValue! - calls.pValue!) < 0.02 * calls.pValue!, `${r.pValue} vs ${calls.pValue}`);
    // 100 users with 4 identical calls each: the same shares from 400 calls, but only 100 independent units.
    const clustered = (users: number) => ({
      n: 100,
      sumX: 4 * users,
      sumX2: 16 * users,
      sumY: 400,
      sumY2: 1600,
      sumXY: 16 * users,
    });
    const c4 = compareArms(clustered(5), clustered(10), o);
    const c1 = compareArms({ n: 100, successes: 5 }, { n: 100, successes: 10 }, o);
    assert.ok(Math.abs(c4.pValue! - c1.pValue!) < 0.02, `${c4.pValue} vs users ${c1.pValue}`);
    assert.ok(c4.pValue! > calls.pValue!);
  });

  it('reports a warning shared by both scales once; no units, no p-value', () => {
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
