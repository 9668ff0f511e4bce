// Guardrails against their threshold: where the lift's interval (1 − 2·alpha, each end a one-sided test at
// alpha) lies decides passed, failed or inconclusive, read in the metric's direction.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareMeans } from './frequentist.js';
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
    const reference = compareMeans(control, lower, { alpha: 0.1, effect: 'relative' });
    assert.deepEqual(g.relative.ci, reference.ci);
    assert.equal(g.bound, reference.ci[0]);
  });

  it('"cheaper, and at most 5% worse": a 3.6% drop passes a 5% threshold and fails a 0% one', () => {
    const within = guardrailCheck(control, lower, { ...o, direction: 'increase', threshold: 0.05 });
    assert.equal(within.status, 'passed');
    const strict = guardrailCheck(control, lower, { ...o, direction: 'increase', threshold: 0 });
    assert.equal(strict.status, 'failed');
    assert.equal(strict.threshold, 0);
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
