// Tests Holm and Benjamini–Hochberg adjusted p-values against hand-computed examples, and significance
// re-decided from them across the comparisons of an analysis.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adjustPValues, correctSignificance } from './corrections.js';

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

describe('correctSignificance', () => {
  type Tested = {
    key: string;
    absolute?: { pValue: number | null };
    adjustedPValue?: number | null;
    significant?: boolean;
  };
  const variant = (key: string, pValue: number | null): Tested => ({
    key,
    absolute: { pValue },
    significant: pValue !== null && pValue < 0.05,
  });
  // Two metrics, three treatments in the family (controls have no `absolute` and are not tested).
  const metrics: Array<{ name: string; variants: Tested[] }> = [
    { name: 'latency', variants: [{ key: 'A' }, variant('B', 0.01), variant('C', 0.04)] },
    { name: 'converted', variants: [{ key: 'A' }, variant('B', 0.03)] },
  ];
  const o = { alpha: 0.05, method: 'frequentist' } as const;

  it('holm: adjusts across metrics × treatments and marks significance from the adjusted p-values', () => {
    // Sorted 0.01, 0.03, 0.04 (m = 3): 3(0.01), 2(0.03), 1(0.04) = 0.03, 0.06, 0.04 -> running max 0.03, 0.06, 0.06.
    const r = correctSignificance(metrics, { ...o, correction: 'holm' });
    const tested = r.metrics.flatMap((m) => m.variants.filter((v) => 'absolute' in v));
    assertAdjusted(
      tested.map((v) => v.adjustedPValue ?? null),
      [0.03, 0.06, 0.06],
    );
    // converted/B is significant on its own (0.03 < 0.05), not once the family is accounted for.
    assert.deepEqual(
      tested.map((v) => v.significant),
      [true, false, false],
    );
    // Controls stay as they were.
    assert.deepEqual(r.metrics[0]!.variants[0], { key: 'A' });
    assert.deepEqual(r.metrics[1]!.variants[0], { key: 'A' });
    assert.deepEqual(r.warnings, []);
  });

  it('bh: the false discovery rate keeps all three significant', () => {
    // 3/1(0.01), 3/2(0.03), 3/3(0.04) = 0.03, 0.045, 0.04 -> running min from the top: 0.03, 0.04, 0.04.
    const r = correctSignificance(metrics, { ...o, correction: 'bh' });
    const adjusted = r.metrics.flatMap((m) =>
      m.variants.slice(1).map((v) => [v.adjustedPValue, v.significant]),
    );
    assertAdjusted(
      adjusted.map(([p]) => p as number),
      [0.03, 0.04, 0.04],
    );
    assert.deepEqual(
      adjusted.map(([, s]) => s),
      [true, true, true],
    );
  });

  it('leaves a p-value that could not be computed out of the family, not significant', () => {
    // m = 2 (0.01 and 0.03): holm 0.02, 0.03.
    const r = correctSignificance(
      [{ variants: [{ key: 'A' } as Tested, variant('B', 0.01), variant('C', null), variant('D', 0.03)] }],
      { ...o, correction: 'holm' },
    );
    const tested = r.metrics[0]!.variants.slice(1);
    assertAdjusted(
      tested.map((v) => v.adjustedPValue ?? null),
      [0.02, null, 0.03],
    );
    assert.deepEqual(
      tested.map((v) => v.significant),
      [true, false, true],
    );
  });

  it('none: leaves every decision as it was', () => {
    const r = correctSignificance(metrics, { ...o, correction: 'none' });
    assert.deepEqual(r.metrics, metrics);
    assert.deepEqual(r.warnings, []);
  });

  it('bayesian: ignores the correction, with a warning', () => {
    const r = correctSignificance(metrics, { alpha: 0.05, method: 'bayesian', correction: 'holm' });
    assert.deepEqual(r.metrics, metrics);
    assert.deepEqual(r.warnings, ['correction applies to p-values; it is ignored for method=bayesian']);
  });

  it('leaves guardrails out of the family and unchanged', () => {
    // Without the guardrail the family is 0.01, 0.04, 0.03 as above (holm 0.03, 0.06, 0.06).
    const guardrail = {
      name: 'cost',
      role: 'guardrail' as const,
      variants: [{ key: 'A' }, variant('B', 0.001)],
    };
    const r = correctSignificance([...metrics, guardrail], { ...o, correction: 'holm' });
    const tested = r.metrics.slice(0, 2).flatMap((m) => m.variants.filter((v) => 'absolute' in v));
    assertAdjusted(
      tested.map((v) => v.adjustedPValue ?? null),
      [0.03, 0.06, 0.06],
    );
    assert.equal(r.metrics[2], guardrail);
  });

  it('re-decides better and worse with significance, from the sign of the effect', () => {
    const compared = (pValue: number, estimate: number) => ({
      absolute: { pValue, estimate },
      significant: true,
      direction: 'decrease' as const,
      better: estimate < 0,
      worse: estimate > 0,
    });
    const undirected = {
      absolute: { pValue: 0.001, estimate: 1 },
      significant: true,
      direction: null,
      better: null,
      worse: null,
    };
    // holm over 0.001, 0.001, 0.03, 0.04, 0.001 (m = 5): sorted 5(0.001), 4(0.001), 3(0.001), 2(0.03), 1(0.04)
    // = 0.005, 0.004, 0.003, 0.06, 0.04 -> running max 0.005 (three times), 0.06, 0.06: the 0.03 and 0.04 ones
    // are no longer significant.
    const r = correctSignificance(
      [
        {
          role: 'primary' as const,
          variants: [
            compared(0.001, -2),
            compared(0.001, 3),
            compared(0.03, 3),
            compared(0.04, -1),
            undirected,
          ],
        },
      ],
      { ...o, correction: 'holm' },
    );
    assert.deepEqual(
      r.metrics[0]!.variants.map((v) => [v.significant, v.better, v.worse]),
      [
        [true, true, false],
        [true, false, true],
        [false, false, false],
        [false, false, false],
        [true, null, null],
      ],
    );
  });

  it('does not change its input', () => {
    const before = structuredClone(metrics);
    correctSignificance(metrics, { ...o, correction: 'bh' });
    assert.deepEqual(metrics, before);
  });
});
