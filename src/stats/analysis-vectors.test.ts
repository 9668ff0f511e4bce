// The analysis vectors (test/fixtures/analysis-vectors.json): rollups in, the whole analysis out, verdict
// sentence included. A change to any rule shows here as a diff to review; scripts/analysis-vectors.ts
// regenerates the file when the change is intended.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type AnalysisInput, analyzeRollups } from './index.js';

const file = new URL('../../test/fixtures/analysis-vectors.json', import.meta.url);
const { vectors } = JSON.parse(readFileSync(file, 'utf8')) as {
  vectors: Array<{ name: string; input: AnalysisInput; expected: unknown }>;
};

/** Deep equality, numbers to 1e-12 relative (the same sums may round differently on another platform). */
function same(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const tolerance = 1e-12 * Math.max(1, Math.abs(expected));
    assert.ok(Math.abs(actual - expected) <= tolerance, `${path}: ${actual} vs ${expected}`);
    return;
  }
  if (expected === null || typeof expected !== 'object') {
    assert.equal(actual, expected, path);
    return;
  }
  assert.ok(actual !== null && typeof actual === 'object', `${path}: ${JSON.stringify(actual)}`);
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual as object)]);
  for (const key of keys) {
    same(
      (actual as Record<string, unknown>)[key],
      (expected as Record<string, unknown>)[key],
      `${path}.${key}`,
    );
  }
}

describe('analysis vectors', () => {
  assert.ok(vectors.length >= 6);
  for (const v of vectors) {
    it(v.name, () => same(JSON.parse(JSON.stringify(analyzeRollups(v.input))), v.expected, v.name));
  }
  it('cover every verdict status but not-enough-data, every method, both units and a quantile statistic', () => {
    const answers = vectors.map((v) => v.expected as ReturnType<typeof analyzeRollups>);
    const statuses = new Set(answers.map((a) => a.verdict.status));
    for (const s of ['winner', 'no-winner-yet', 'sample-ratio-mismatch'])
      assert.ok(statuses.has(s as never), s);
    assert.deepEqual(
      new Set(answers.map((a) => a.method)),
      new Set(['frequentist', 'bayesian', 'sequential']),
    );
    assert.deepEqual(new Set(answers.map((a) => a.srm.unit)), new Set(['user', 'call']));
    assert.ok(answers.some((a) => a.metrics.some((m) => m.statistic !== 'mean')));
    assert.ok(answers.some((a) => a.metrics.some((m) => m.noVariation)));
  });
});
