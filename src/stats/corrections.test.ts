// Tests Holm and Benjamini–Hochberg adjusted p-values against hand-computed examples, and a family's
// comparisons recomputed so that their intervals agree with the adjusted p-values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adjustPValues, correctFamily } from './corrections.js';
import { compareMeans } from './frequentist.js';

function assertAdjusted(actual: (number | null)[], expected: (number | null)[]) {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => {
    const e = expected[i]!;
    if (e === null) assert.equal(a, null, `index ${i}`);
    else assert.ok(a !== null && Math.abs(a - e) < 1e-12, `index ${i}: got ${a}, expected ${e}`);
  });
}

describe('adjustPValues', () => {
  // Sorted: 0.005, 0.01, 0.03, 0.04 (m = 4).
  // Holm: 4(0.005), 3(0.01), 2(0.03), 1(0.04) = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06.
  // BH:   4/1(0.005), 4/2(0.01), 4/3(0.03), 4/4(0.04) = 0.02, 0.02, 0.04, 0.04 -> running min from the top.
  const ps = [0.01, 0.04, 0.03, 0.005];
  it('holm, in input order', () =>
    assertAdjusted(adjustPValues(ps, 'holm').adjusted, [0.03, 0.06, 0.06, 0.02]));
  it('bh, in input order', () => assertAdjusted(adjustPValues(ps, 'bh').adjusted, [0.02, 0.04, 0.04, 0.02]));

  // Sorted: 0.001, 0.04, 0.2, 0.5, 0.9 (m = 5).
  // Holm: 0.005, 0.16, 0.6, 1.0, 0.9 -> 0.005, 0.16, 0.6, 1, 1 (capped at 1, monotone).
  // BH:   0.005, 0.1, 1/3, 0.625, 0.9 -> already monotone.
  const qs = [0.5, 0.2, 0.9, 0.001, 0.04];
  it('holm caps at 1 and stays monotone', () =>
    assertAdjusted(adjustPValues(qs, 'holm').adjusted, [1, 0.6, 1, 0.005, 0.16]));
  it('bh caps and stays monotone', () =>
    assertAdjusted(adjustPValues(qs, 'bh').adjusted, [0.625, 1 / 3, 0.9, 0.005, 0.1]));

  it('gives tied p-values the same adjustment', () => {
    assertAdjusted(adjustPValues([0.02, 0.02, 0.02], 'holm').adjusted, [0.06, 0.06, 0.06]);
    assertAdjusted(adjustPValues([0.02, 0.02, 0.02], 'bh').adjusted, [0.02, 0.02, 0.02]);
  });

  it('bh never exceeds holm, and neither goes below the raw p-value', () => {
    const holm = adjustPValues(qs, 'holm').adjusted;
    const bh = adjustPValues(qs, 'bh').adjusted;
    for (const [i, p] of qs.entries()) assert.ok(bh[i]! <= holm[i]! && p <= bh[i]!);
  });

  it('leaves out entries that are not p-values, with a warning', () => {
    const result = adjustPValues([0.01, Number.NaN, 1.2, 0.04], 'holm');
    assertAdjusted(result.adjusted, [0.02, null, null, 0.04]);
    assert.match(result.warnings.join(), /indexes 1, 2/);
  });

  it('handles an empty list and an unknown method', () => {
    assert.deepEqual(adjustPValues([], 'bh').adjusted, []);
    const result = adjustPValues([0.1], 'bonferroni' as never);
    assert.deepEqual(result.adjusted, [null]);
    assert.equal(result.warnings.length, 1);
  });
});

describe('correctFamily', () => {
  // Welch comparisons whose p-values spread around alpha, so the correction changes some decisions.
  const arms = (shift: number) => ({
    control: { n: 200, sum: 200 * 10, sumSquares: 200 * (100 + 4) },
    treatment: { n: 200, sum: 200 * (10 + shift), sumSquares: 200 * ((10 + shift) ** 2 + 4) },
  });
  const shifts = [0.6, 0.45, 0.4, 0.3, 0.1, -0.5];
  const family = shifts.map((shift) => {
    const { control, treatment } = arms(shift);
    const at = (alpha: number) => compareMeans(control, treatment, { alpha, effect: 'absolute' });
    return { pValue: at(0.05).pValue, at };
  });

  for (const method of ['holm', 'bh'] as const) {
    it(`${method}: adjusted p-values as adjustPValues gives them, and intervals that agree with them`, () => {
      const corrected = correctFamily(family, { method, alpha: 0.05 });
      const expected = adjustPValues(
        family.map((f) => f.pValue!),
        method,
      ).adjusted;
      assertAdjusted(
        corrected.map((c) => c.adjustedPValue),
        expected,
      );
      let changed = 0;
      corrected.forEach((c, i) => {
        const [lo, hi] = c.comparison!.ci;
        const excludesZero = lo! > 0 || hi! < 0;
        assert.equal(c.significant, c.adjustedPValue! < 0.05, `significance ${i}`);
        assert.equal(
          excludesZero,
          c.significant,
          `interval ${i} [${lo}, ${hi}] vs adjusted p ${c.adjustedPValue}`,
        );
        // The adjusted interval contains the unadjusted one.
        const [lo0, hi0] = family[i]!.at(0.05).ci;
        assert.ok(lo! <= lo0! + 1e-12 && hi! >= hi0! - 1e-12, `interval ${i} is not narrower`);
        if (family[i]!.pValue! < 0.05 && !c.significant) changed++;
      });
      assert.ok(changed > 0, 'the example should have a comparison the correction makes not significant');
    });
  }

  it('leaves a p-value that could not be computed out of the family, not significant', () => {
    const r = correctFamily([family[0]!, { pValue: null, at: family[1]!.at }, family[2]!], {
      method: 'holm',
      alpha: 0.05,
    });
    const m2 = adjustPValues([family[0]!.pValue!, family[2]!.pValue!], 'holm').adjusted;
    assertAdjusted(
      r.map((c) => c.adjustedPValue),
      [m2[0]!, null, m2[1]!],
    );
    assert.equal(r[1]!.significant, false);
    assert.equal(r[1]!.comparison, null);
  });
});
