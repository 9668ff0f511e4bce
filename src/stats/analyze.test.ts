// analyzeRollups on hand-made rollups: which metrics a correction covers by default and when asked, and
// that a corrected comparison prints the interval its adjusted p-value speaks for.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AnalysisInput, adjustPValues, analyzeRollups } from './index.js';

/** A numeric metric's rollup rows: n values per variant with these means and standard deviation 1. */
function rows(metric: string, meanA: number, meanB: number, n = 400) {
  return [
    {
      version: 1,
      variantKey: 'A',
      metric,
      kind: 'mean' as const,
      n,
      sum: n * meanA,
      sumSquares: n * (meanA ** 2 + 1),
    },
    {
      version: 1,
      variantKey: 'B',
      metric,
      kind: 'mean' as const,
      n,
      sum: n * meanB,
      sumSquares: n * (meanB ** 2 + 1),
    },
  ];
}

function input(options: Partial<AnalysisInput['options']> = {}): AnalysisInput {
  const variants = [
    { key: 'A', trafficPercent: 50 },
    { key: 'B', trafficPercent: 50 },
  ];
  return {
    experiment: {
      slug: 'x',
      assignment: 'random',
      variants,
      metrics: [
        { name: 'success', direction: 'increase', role: 'primary' },
        { name: 'tokens', direction: 'decrease', role: 'secondary' },
      ],
    },
    versions: [{ version: 1, variants }],
    rollups: {
      exposures: [
        { version: 1, variantKey: 'A', n: 400 },
        { version: 1, variantKey: 'B', n: 400 },
      ],
      results: [],
      // p ≈ 0.045 each on its own: tokens (secondary), latency and cached (undeclared), success (primary).
      metrics: [
        ...rows('success', 10, 10.142),
        ...rows('tokens', 10, 10.142),
        ...rows('latency', 10, 10.142),
        ...rows('cached', 10, 10.142),
      ],
      units: [],
    },
    options: { control: 'A', method: 'frequentist', alpha: 0.05, sided: 'two', version: null, ...options },
  };
}

const byName = (a: ReturnType<typeof analyzeRollups>, name: string) =>
  a.metrics.find((m) => m.name === name)!;

describe('analyzeRollups: corrections', () => {
  it('by default, Benjamini–Hochberg across secondary and undeclared metrics; the primary as it is', () => {
    const a = analyzeRollups(input());
    assert.equal(a.correction, 'bh');
    assert.deepEqual(
      a.metrics.map((m) => [m.name, m.corrected]),
      [
        ['cached', true],
        ['latency', true],
        ['success', false],
        ['tokens', true],
      ],
    );
    const success = byName(a, 'success').variants[1]!;
    assert.ok(success.pValue! < 0.05 && success.significant, `primary p ${success.pValue}`);
    // Not corrected: pValue is the raw one.
    assert.equal(success.pValue, success.rawPValue);
    // Three comparisons at p ≈ 0.045: BH keeps them at 0.045, as significant as before, each interval as printed.
    const tokens = byName(a, 'tokens').variants[1]!;
    assert.ok(Math.abs(tokens.pValue! - tokens.rawPValue!) < 1e-12);
  });

  it('asked for, across every metric but guardrails, intervals widened to agree with the adjusted p-values', () => {
    const a = analyzeRollups(input({ correction: 'holm' }));
    assert.equal(a.correction, 'holm');
    for (const m of a.metrics) {
      assert.equal(m.corrected, true, m.name);
      const v = m.variants[1]!;
      // Holm over four p ≈ 0.045: none is significant, and no printed interval excludes 0. pValue is the
      // adjusted one (what decides), rawPValue and the scales' p-values the unadjusted one.
      assert.ok(v.pValue! > 0.05 && v.rawPValue! < 0.05, `${m.name}: ${v.pValue} ${v.rawPValue}`);
      assert.equal(v.absolute!.pValue, v.rawPValue);
      assert.ok(v.test!.level > 0.95, `${m.name}: the intervals' level ${v.test!.level}`);
      assert.equal(v.significant, false);
      assert.ok(
        v.absolute!.ci[0]! < 0 && v.relative!.ci[0]! < 0,
        `${m.name}: ${JSON.stringify(v.absolute!.ci)}`,
      );
      assert.notEqual(v.better, true);
    }
    assert.equal(a.verdict.status, 'no-winner-yet');
  });

  it('bayesian: the posterior tail (a z-test p under the flat prior) is what is corrected', () => {
    const alone = analyzeRollups(input({ method: 'bayesian', correction: 'none' }));
    assert.equal(byName(alone, 'tokens').variants[1]!.significant, true, 'each significant on its own');
    const a = analyzeRollups(input({ method: 'bayesian', correction: 'holm' }));
    for (const m of a.metrics) {
      const v = m.variants[1]!;
      assert.ok(v.pValue! > 0.05, `${m.name}: ${v.pValue}`);
      assert.equal(v.significant, false, m.name);
      assert.ok(v.relative!.ci[0]! < 0, `${m.name}: the credible interval widens to agree`);
    }
  });

  it('sequential: pValue is the adjusted p, never below the raw one (it used to drop: 0.000585 → 0.000309)', () => {
    const raw = analyzeRollups(input({ method: 'sequential', correction: 'none' }));
    const a = analyzeRollups(input({ method: 'sequential', correction: 'holm' }));
    const rawPs = raw.metrics.map((m) => m.variants[1]!.pValue!);
    const holm = adjustPValues(rawPs, 'holm').adjusted;
    a.metrics.forEach((m, i) => {
      const v = m.variants[1]!;
      assert.equal(v.rawPValue, rawPs[i], m.name);
      assert.ok(Math.abs(v.pValue! - holm[i]!) < 1e-15, `${m.name}: ${v.pValue} vs Holm ${holm[i]}`);
      assert.ok(v.pValue! >= v.rawPValue!, m.name);
    });
  });

  it('none: nothing corrected', () => {
    const a = analyzeRollups(input({ correction: 'none' }));
    assert.equal(a.correction, 'none');
    assert.ok(a.metrics.every((m) => !m.corrected && m.variants[1]!.pValue === m.variants[1]!.rawPValue));
  });
});
