import assert from 'node:assert/strict';
import { test } from 'node:test';
import { overCapWarning, unanalysedValueWarnings } from './metric-warnings.js';

test('each metric that will not be analysed is named once with what it is; numbers and booleans are not', () => {
  assert.deepEqual(unanalysedValueWarnings([{ a: 1, b: true }, undefined, null]), []);
  assert.deepEqual(
    unanalysedValueWarnings([
      { latency_ms: '812', ok: 1 },
      { latency_ms: '790', deep: { x: 1 } },
    ]),
    [
      "metric 'latency_ms' is a string, not a number or true/false: stored, not analysed",
      "metric 'deep' is an object, not a number or true/false: stored, not analysed",
    ],
  );
});

test('past five names the rest are counted in one warning', () => {
  const metrics = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`s${i}`, 'x']));
  const warnings = unanalysedValueWarnings([metrics]);
  assert.equal(warnings.length, 6);
  assert.equal(warnings[5], 'and 7 more metrics that are not numbers or true/false: stored, not analysed');
});

test('the cap warning names at most three names and the cap', () => {
  assert.equal(overCapWarning([], 'x', 200), undefined);
  assert.equal(
    overCapWarning(['late'], 'exp', 200),
    "metric 'late' is stored, not analysed: an experiment analyses at most 200 distinct metric names, and 'exp' has them already",
  );
  assert.match(
    overCapWarning(['a', 'b', 'c', 'd', 'e'], 'exp', 200)!,
    /^metrics 'a', 'b', 'c' and 2 more are stored, not analysed/,
  );
});
