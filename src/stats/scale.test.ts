// Property: a metric's unit does not change a decision. Values times 10^k for k from -100 to +100 (the API
// accepts values up to 1e100, so sums of squares reach 1e200): p-values, significance and chance to win are
// unchanged to 1e-9 relative, absolute estimates and bounds scale by 10^k and the lift's do not, for every
// method and sided, on mean and ratio (per-user) arms.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../test/helpers/random.js';
import { type ArmComparison, compareArms } from './compare.js';
import type { ArmData } from './types.js';

const random = seededRandom(99);
const values = (n: number, mean: number) => Array.from({ length: n }, () => mean + 4 * (random() - 0.5));
// Per unit: x_i (sum of its values) and y_i (its observation count, not scaled).
const units = (n: number, mean: number) =>
  values(n, mean).map((x) => [x, 1 + Math.floor(3 * random())] as const);
const raw = { mean: [values(60, 5), values(50, 5.9)], ratio: [units(60, 5), units(50, 5.9)] };

function arm(kind: 'mean' | 'ratio', i: number, s: number): ArmData {
  if (kind === 'mean') {
    const xs = raw.mean[i]!.map((x) => x * s);
    return {
      n: xs.length,
      sum: xs.reduce((a, x) => a + x, 0),
      sumSquares: xs.reduce((a, x) => a + x * x, 0),
    };
  }
  const us = raw.ratio[i]!.map(([x, y]) => [x * s, y] as const);
  const sum = (f: (u: readonly [number, number]) => number) => us.reduce((a, u) => a + f(u), 0);
  return {
    n: us.length,
    sumX: sum(([x]) => x),
    sumX2: sum(([x]) => x * x),
    sumY: sum(([, y]) => y),
    sumY2: sum(([, y]) => y * y),
    sumXY: sum(([x, y]) => x * y),
  };
}

function close(a: number | null, b: number | null, what: string): void {
  assert.ok(a !== null && b !== null, `${what}: ${a} vs ${b}`);
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.abs(b), `${what}: ${a} vs ${b}`);
}

function same(r: ArmComparison, base: ArmComparison, s: number, what: string): void {
  assert.equal(r.significant, base.significant, `${what} significant`);
  assert.deepEqual([r.better, r.worse], [base.better, base.worse], what);
  assert.deepEqual(r.warnings, base.warnings, what);
  for (const [x, y, name] of [
    [r.pValue, base.pValue, 'pValue'],
    [r.absolute.pValue, base.absolute.pValue, 'absolute p'],
    [r.relative.pValue, base.relative.pValue, 'relative p'],
    [r.chanceToWin, base.chanceToWin, 'chance to win'],
  ] as const) {
    if (y === null) assert.equal(x, null, `${what} ${name}`);
    else close(x, y, `${what} ${name}`);
  }
  const scaled = (x: number | null) => (x === null ? null : x * s);
  close(r.absolute.estimate, scaled(base.absolute.estimate), `${what} absolute estimate`);
  close(r.relative.estimate, base.relative.estimate, `${what} relative estimate`);
  for (const j of [0, 1] as const) {
    if (base.absolute.ci[j] === null) assert.equal(r.absolute.ci[j], null, what);
    else close(r.absolute.ci[j]!, scaled(base.absolute.ci[j]!), `${what} absolute bound ${j}`);
    if (base.relative.ci[j] === null) assert.equal(r.relative.ci[j], null, what);
    else close(r.relative.ci[j]!, base.relative.ci[j]!, `${what} relative bound ${j}`);
  }
}

describe('decisions do not depend on the unit: values × 10^k, k = -100 … 100', () => {
  for (const kind of ['mean', 'ratio'] as const) {
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      it(`${kind} arms, ${method}`, () => {
        for (const sided of ['two', 'greater', 'less'] as const) {
          const o = { method, alpha: 0.1, sided, direction: 'increase', nStar: 200 } as const;
          const base = compareArms(arm(kind, 0, 1), arm(kind, 1, 1), o);
          assert.ok(
            base.absolute.ci.some((b) => b !== null),
            'the base case has an interval',
          );
          for (let k = -100; k <= 100; k++) {
            const s = 10 ** k;
            same(
              compareArms(arm(kind, 0, s), arm(kind, 1, s), o),
              base,
              s,
              `${kind} ${method} ${sided} k=${k}`,
            );
          }
        }
      });
    }
  }
});
