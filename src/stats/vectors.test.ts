// Reproduces every case of shared/vectors/statistics.json (GrowthBook gbstats and scipy reference values).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bayesianCompare, normalRisk } from './bayesian.js';
import { compareMeans } from './frequentist.js';
import { sequentialCompare, sequentialHalfWidth, sequentialRho } from './sequential.js';
import { srmTest } from './srm.js';
import {
  assertAllFinite,
  assertMatches,
  type ComparisonCase,
  loadStatisticsVectors,
} from './test-helpers.js';
import type { EffectEstimate } from './types.js';

const vectors = loadStatisticsVectors();

function checkEstimate(
  id: string,
  result: EffectEstimate,
  expect: ComparisonCase['expect'],
  skip: string[] = [],
) {
  for (const [key, value] of Object.entries(expect)) {
    if (skip.includes(key)) continue;
    if (key === 'ci') {
      const [lower, upper] = value as number[];
      assertMatches(result.ci[0], lower!, `${id} ci[0]`);
      assertMatches(result.ci[1], upper!, `${id} ci[1]`);
    } else if (key === 'ciLower') {
      assertMatches(result.ci[0], value as number, `${id} ciLower`);
      assert.equal(result.ci[1], null, `${id}: a 'greater' test has no upper bound`);
    } else if (key === 'ciUpper') {
      assertMatches(result.ci[1], value as number, `${id} ciUpper`);
      assert.equal(result.ci[0], null, `${id}: a 'less' test has no lower bound`);
    } else {
      assertMatches(result[key as keyof EffectEstimate] as number | null, value as number, `${id} ${key}`);
    }
  }
}

describe('welch vectors', () => {
  for (const c of vectors.welch) {
    it(c.id, () => {
      const result = compareMeans(c.control, c.treatment, c);
      checkEstimate(c.id, result, c.expect);
      assert.deepEqual(result.warnings, []);
      assertAllFinite(result);
    });
  }
});

describe('sequential vectors', () => {
  for (const c of vectors.sequential.cases) {
    it(c.id, () => {
      const result = sequentialCompare(c.control, c.treatment, c);
      // V7b's p-value is computed exactly here; GrowthBook bisects for it (see the next test).
      checkEstimate(c.id, result, c.expect, c.id === 'V7b' ? ['pValue'] : []);
      assert.deepEqual(result.warnings, []);
      assertAllFinite(result);
    });
  }

  it('V7b p-value: the exact root, 1.2e-4 from the bisection estimate GrowthBook publishes', () => {
    const c = vectors.sequential.cases.find((v) => v.id === 'V7b')!;
    const result = sequentialCompare(c.control, c.treatment, c);
    // The p-value is the alpha at which the one-sided bound touches 0 (rho stays at the configured alpha).
    const r = (c.control.n + c.treatment.n) * sequentialRho(2 * c.alpha, c.nStar) ** 2;
    const boundAt = (alpha: number) =>
      result.estimate! - sequentialHalfWidth(result.stdError!, r, alpha, 'greater');
    assert.ok(Math.abs(boundAt(result.pValue!)) < 1e-12, `bound at alpha = p is ${boundAt(result.pValue!)}`);
    // GrowthBook bisects on [1e-5, 0.4999], stops once the bound is within 1e-6 of 0 and returns the next
    // midpoint: published 0.46316491943359384, where the bound is still 1.6e-5 away from 0. The exact root is
    // 0.4630473577946…, 1.2e-4 lower.
    assert.ok(Math.abs(boundAt(c.expect.pValue as number)) > 1e-5);
    assert.ok(Math.abs(result.pValue! - (c.expect.pValue as number)) < 2e-4);
  });
});

describe('bayesian vectors', () => {
  for (const c of vectors.bayesian.cases) {
    it(c.id, () => {
      if (c.riskOf) {
        const risk = normalRisk(c.riskOf.mean, c.riskOf.stdDev);
        const [control, treatment] = c.expect.risk as number[];
        assertMatches(risk[0], control!, `${c.id} risk[0]`);
        assertMatches(risk[1], treatment!, `${c.id} risk[1]`);
        return;
      }
      const result = bayesianCompare(c.control!, c.treatment!, c.prior ? { prior: c.prior } : {});
      for (const [key, value] of Object.entries(c.expect)) {
        if (Array.isArray(value)) {
          const actual = result[key as 'ci' | 'risk'];
          assertMatches(actual[0], value[0]!, `${c.id} ${key}[0]`);
          assertMatches(actual[1], value[1]!, `${c.id} ${key}[1]`);
        } else {
          assertMatches(result[key as 'expected' | 'stdDev' | 'chanceToWin'], value, `${c.id} ${key}`);
        }
      }
      assert.deepEqual(result.warnings, []);
      assertAllFinite(result);
    });
  }
});

describe('srm vectors', () => {
  for (const c of vectors.srm.cases) {
    it(c.id, () => {
      const result = srmTest(c.observed, c.weights);
      assertMatches(result.chiSquare, c.expect.chiSquare!, `${c.id} chiSquare`);
      assertMatches(result.pValue, c.expect.pValue!, `${c.id} pValue`);
      assert.equal(result.mismatch, c.expect.pValue! < 0.001);
      assertAllFinite(result);
    });
  }
});
