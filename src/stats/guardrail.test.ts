// Guardrails against their threshold: where the lift's interval (1 − 2·alpha, each end a one-sided test at
// alpha) lies decides passed, failed or inconclusive, read in the metric's direction.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareArms } from './compare.js';
import { guardrailCheck } from './guardrail.js';
import type { Moments } from './types.js';

/** n values with this mean and standard deviation (exact sufficient statistics). */
function arm(n: number, mean: number, sd: number): Moments {
  return { n, sum: n * mean, sumSquares: (n - 1) * sd * sd + n * mean * mean };
}
const o = { method: 'frequentist', alpha: 0.05 } as const;

describe('guardrailCheck', () => {
  // rating 3.6% lower, tightly measured: [−4.8%, −2.4%] or so.
  const control = arm(20000, 4.0, 0.9);
  const lower = arm(20000, 4.0 * (1 - 0.036), 0.9);

  it('uses the lift interval at 1 − 2·alpha, and its worse end as the bound', () => {
    const g = guardrailCheck(control, lower, { ...o, direction: 'increase', threshold: 0.05 });
    // The comparison's own test at level 2·alpha (Welch, its lift's interval by Fieller), named in `test`.
    const reference = compareArms(control, lower, { method: 'frequentist', alpha: 0.1, sided: 'two' });
    assert.deepEqual(g.relative.ci, reference.relative.ci);
    assert.equal(g.bound, reference.relative.ci[0]);
    assert.deepEqual(g.test, { method: 'welch', level: 0.9 });
  });

  it('"cheaper, and at most 5% worse": a 3.6% drop passes a 5% threshold and fails a 0% one', () => {
    const within = guardrailCheck(control, lower, { ...o, direction: 'increase', threshold: 0.05 });
    assert.equal(within.status, 'passed');
    const strict = guardrailCheck(control, lower, { ...o, direction: 'increase', threshold: 0 });
    assert.equal(strict.status, 'failed');
    assert.equal(strict.threshold, 0);
  });

  it('a fixed price is judged exactly: 0.003 → 0.001 passes a 0% threshold, 0.001 → 0.003 fails 50%', () => {
    const price = (n: number, p: number) => ({ n, sum: n * p, sumSquares: n * p * p });
    const cheaper = guardrailCheck(price(400, 0.003), price(380, 0.001), {
      ...o,
      direction: 'decrease',
      threshold: 0,
    });
    assert.equal(cheaper.status, 'passed');
    assert.equal(cheaper.test.method, 'known');
    const dearer = guardrailCheck(price(400, 0.001), price(380, 0.003), {
      ...o,
      direction: 'decrease',
      threshold: 0.5,
    });
    assert.equal(dearer.status, 'failed');
    assert.ok(Math.abs(dearer.bound! - 2) < 1e-12);
    // Exactly at the threshold: a known loss of 100% is within a 100% threshold.
    const at = guardrailCheck(price(400, 0.001), price(380, 0.002), {
      ...o,
      direction: 'decrease',
      threshold: 1,
    });
    assert.equal(at.status, 'passed');
  });

  it('a noisy 20% regression is inconclusive, not "within limit"', () => {
    const noisy = guardrailCheck(arm(40, 4, 3), arm(40, 3.2, 3), {
      ...o,
      direction: 'increase',
      threshold: 0.05,
    });
    assert.equal(noisy.status, 'inconclusive');
    assert.ok(noisy.bound! < -0.2, `the bound shows how bad it could be: ${noisy.bound}`);
  });

  it('a metric that should decrease: a rise is the loss', () => {
    const cost = arm(5000, 1.0, 0.2);
    const dearer = guardrailCheck(cost, arm(5000, 1.3, 0.2), { ...o, direction: 'decrease', threshold: 0.1 });
    assert.equal(dearer.status, 'failed');
    assert.equal(dearer.bound, dearer.relative.ci[1]);
    const cheaper = guardrailCheck(cost, arm(5000, 0.7, 0.2), { ...o, direction: 'decrease', threshold: 0 });
    assert.equal(cheaper.status, 'passed');
  });

  it('without a direction or a lift: inconclusive, with a reason', () => {
    const none = guardrailCheck(control, lower, { ...o, direction: null, threshold: 0 });
    assert.equal(none.status, 'inconclusive');
    assert.equal(none.bound, null);
    assert.ok(none.warnings.some((w) => w.includes('direction')));
    const zero = guardrailCheck(arm(100, 0, 1), arm(100, 0.1, 1), {
      ...o,
      direction: 'increase',
      threshold: 0,
    });
    assert.equal(zero.status, 'inconclusive');
    assert.equal(zero.bound, null);
  });
});
