// Tests the sequential confidence sequences beyond the vectors: consistency of p-value and interval, degenerate data.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareMeans } from './frequentist.js';
import { ONE_SIDED_P_CAP, sequentialCompare, sequentialHalfWidth, sequentialRho } from './sequential.js';
import { assertAllFinite } from './test-helpers.js';
import type { ArmData } from './types.js';

const arm = (n: number, mean: number, sd: number): ArmData => ({
  n,
  sum: n * mean,
  sumSquares: (n - 1) * sd * sd + n * mean * mean,
});

describe('sequentialCompare', () => {
  const control = arm(3000, 0.5, 4);
  const treatment = arm(3200, 0.75, 4);

  it('is wider than the fixed-horizon Welch interval', () => {
    const seq = sequentialCompare(control, treatment);
    const fixed = compareMeans(control, treatment);
    assert.ok(seq.ci[0]! < fixed.ci[0]! && seq.ci[1]! > fixed.ci[1]!);
    assert.equal(seq.nStar, 5000);
  });

  for (const sided of ['two', 'greater', 'less'] as const) {
    it(`${sided}: the p-value is the alpha at which the bound reaches 0`, () => {
      const c = sided === 'less' ? treatment : control;
      const t = sided === 'less' ? control : treatment;
      const r = sequentialCompare(c, t, { sided, effect: 'absolute' });
      assert.ok(r.pValue! > 0.001 && r.pValue! < 0.4, `${r.pValue}`);
      const rho = sequentialRho(sided === 'two' ? 0.05 : 0.1, 5000);
      const halfWidth = sequentialHalfWidth(r.stdError!, 6200 * rho * rho, r.pValue!, sided);
      assert.ok(Math.abs(Math.abs(r.estimate!) - halfWidth) < 1e-12 * halfWidth);
      const bound = sided === 'less' ? r.ci[1]! : r.ci[0]!;
      assert.equal(bound * Math.sign(r.estimate!) > 0, r.pValue! < 0.05);
    });
  }

  it('gives the same p-value whatever the unit of the metric (no absolute tolerance inside)', () => {
    const scaled = (a: ArmData, k: number) => {
      const m = a as { n: number; sum: number; sumSquares: number };
      return { n: m.n, sum: m.sum * k, sumSquares: m.sumSquares * k * k };
    };
    for (const sided of ['two', 'greater'] as const) {
      const base = sequentialCompare(control, treatment, { sided, effect: 'absolute' }).pValue!;
      for (const k of [1e-6, 1e-3, 1e4]) {
        const p = sequentialCompare(scaled(control, k), scaled(treatment, k), { sided, effect: 'absolute' })
          .pValue!;
        assert.ok(Math.abs(p - base) < 1e-9 * base, `k ${k}: ${p} vs ${base}`);
      }
    }
  });

  it('caps one-sided p-values at 0.4999, e.g. for an effect in the other direction', () => {
    const r = sequentialCompare(treatment, control, { sided: 'greater' });
    assert.equal(r.pValue, ONE_SIDED_P_CAP);
  });

  it('keeps tiny p-values positive while they are representable', () => {
    for (const sided of ['two', 'greater'] as const) {
      const r = sequentialCompare(arm(20000, 10, 1), arm(20000, 10.3, 1), { sided }); // z = 30
      assert.ok(r.pValue! > 0 && r.pValue! < 1e-100, `${sided}: ${r.pValue}`);
    }
  });

  it('refuses one-sided tests at alpha >= 0.5 and invalid nStar, with warnings', () => {
    const r = sequentialCompare(control, treatment, { sided: 'less', alpha: 0.6 });
    assert.equal(r.pValue, null);
    assert.match(r.warnings.join(), /alpha < 0.5/);
    const s = sequentialCompare(control, treatment, { nStar: -3 });
    assert.equal(s.nStar, 5000);
    assert.match(s.warnings.join(), /nStar/);
  });

  it('reports degenerate data with warnings and no NaN', () => {
    const cases: Array<[ArmData, ArmData]> = [
      [
        { n: 0, successes: 0 },
        { n: 10, successes: 5 },
      ],
      [{ n: 1, sum: 1, sumSquares: 1 }, arm(10, 1, 1)],
      [arm(10, 0, 1), arm(10, 1, 1)],
      [arm(10, 2, 0), arm(10, 3, 0)],
    ];
    for (const [c, t] of cases) {
      const r = sequentialCompare(c, t);
      assert.ok(r.warnings.length > 0);
      assert.equal(r.pValue, null);
      assertAllFinite(r);
    }
  });
});
