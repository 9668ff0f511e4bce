// Regression adjustment's rules on data whose answer is known without numpy: what is not adjusted and why, the
// shape compareArms takes, invariance to the covariate's origin and unit, and values up to 1e100 (the
// agreement with statsmodels and numpy: test/stats-cuped-statsmodels.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../test/helpers/random.js';
import { compareArms } from './compare.js';
import { adjustedArmData, type CovariateMoments, cupedAdjust } from './cuped.js';
import { summarizeArm } from './moments.js';
import { assertAllFinite } from './test-helpers.js';

type Unit = readonly [x: number, y: number, z: number];

function sumsOf(units: Unit[]): CovariateMoments {
  const sum = (f: (u: Unit) => number) => units.reduce((a, u) => a + f(u), 0);
  return {
    n: units.length,
    sumX: sum(([x]) => x),
    sumX2: sum(([x]) => x * x),
    sumY: sum(([, y]) => y),
    sumY2: sum(([, y]) => y * y),
    sumXY: sum(([x, y]) => x * y),
    sumZ: sum(([, , z]) => z),
    sumZ2: sum(([, , z]) => z * z),
    sumXZ: sum(([x, , z]) => x * z),
    sumYZ: sum(([, y, z]) => y * z),
  };
}

const random = seededRandom(33);
/** Per-user units: y calls, x their total around a user level that the covariate z also follows. */
const users = (n: number, shift: number): Unit[] =>
  Array.from({ length: n }, () => {
    const level = 5 + 4 * random();
    const y = 1 + Math.floor(3 * random());
    return [y * (level + shift) + 2 * (random() - 0.5), y, level + 2 * (random() - 0.5)] as const;
  });
const data = [users(80, 0), users(70, 0.4)];

function close(a: number | null, b: number | null, what: string, tolerance = 1e-9): void {
  assert.ok(a !== null && b !== null, `${what}: ${a} vs ${b}`);
  assert.ok(Math.abs(a - b) <= tolerance * Math.max(Math.abs(b), Number.MIN_VALUE), `${what}: ${a} vs ${b}`);
}

/** The arm exactly as it is without a covariate: summarizeArm of its ratio sums. */
function unadjustedAs(
  arm: ReturnType<typeof cupedAdjust>['arms'][number],
  units: Unit[],
  what: string,
): void {
  const s = summarizeArm(sumsOf(units));
  close(arm.estimate, s.mean, `${what} estimate`);
  close(arm.stdError! ** 2 * units.length, s.variance, `${what} variance`);
  assert.equal(arm.varianceReduction, 0, what);
}

describe('cupedAdjust: what is not adjusted, and why', () => {
  it('a covariate without variance within the arms (even if it differs between them): unadjusted', () => {
    for (const z of [(_: number) => 3, (k: number) => k]) {
      const arms = data.map((units, k) => units.map(([x, y]) => [x, y, z(k)] as const));
      const r = cupedAdjust(arms.map(sumsOf));
      assert.equal(r.adjusted, false);
      assert.equal(r.theta, null);
      assert.deepEqual(r.warnings, [
        'not adjusted: the covariate does not vary within the arms: nothing to adjust on',
      ]);
      for (const [k, a] of r.arms.entries()) unadjustedAs(a, arms[k]!, `arm ${k}`);
      assert.equal(r.varianceReduction, 0);
    }
  });

  it('an arm with fewer than 3 units: every arm unadjusted', () => {
    const arms = [data[0]!, data[1]!.slice(0, 2)];
    const r = cupedAdjust(arms.map(sumsOf));
    assert.equal(r.adjusted, false);
    assert.match(r.warnings.join(), /arm 1 has n < 3/);
    for (const [k, a] of r.arms.entries()) unadjustedAs(a, arms[k]!, `arm ${k}`);
  });

  it('inconsistent sums: a warning naming the arm, nothing adjusted, nothing NaN', () => {
    const good = sumsOf(data[0]!);
    const cases: Array<[Partial<CovariateMoments>, RegExp]> = [
      [{ sumZ2: good.sumZ ** 2 / good.n / 2 }, /arm 1: a sum of squares below its sum² \/ n/],
      [{ sumXZ: good.sumXZ * 3 }, /arm 1: sumXZ or sumYZ is inconsistent/],
      [{ sumXY: good.sumXY * 3 }, /arm 1: sumXY is inconsistent/],
      [{ sumY: 0, sumX: 0 }, /arm 1: sumY = 0/],
      [{ sumZ: Number.NaN }, /arm 1: n must be a finite number >= 0 and every sum a finite number/],
      [{ n: -1 }, /arm 1: n must be/],
      [{ n: 0 }, /arm 1: no units/],
      [{ n: 1 }, /arm 1: n < 2/],
    ];
    for (const [change, warning] of cases) {
      const r = cupedAdjust([good, { ...good, ...change }]);
      const what = JSON.stringify(change);
      assertAllFinite(r, what);
      assert.equal(r.adjusted, false, what);
      assert.match(r.warnings.join('; '), warning, what);
      assert.match(r.warnings.join('; '), /not adjusted/, what);
      unadjustedAs(r.arms[0]!, data[0]!, `${what}: arm 0`);
      assert.equal(r.arms[1]!.stdError, null, what);
      assert.equal(adjustedArmData(r.arms[1]!), null, what);
      assert.equal(r.varianceReduction, null, what);
    }
    assert.deepEqual(cupedAdjust([]).warnings, ['not adjusted: no arms']);
  });
});

describe('cupedAdjust: the adjustment itself', () => {
  const r = cupedAdjust(data.map(sumsOf));

  it('adjusts, reduces the variance on a correlated covariate, and compareArms takes the arms unchanged', () => {
    assert.equal(r.adjusted, true);
    assert.deepEqual(r.warnings, []);
    assert.ok(r.varianceReduction! > 0.3, `reduction ${r.varianceReduction}`);
    const [c, t] = r.arms.map((a) => adjustedArmData(a)!) as [
      ReturnType<typeof adjustedArmData> & object,
      ReturnType<typeof adjustedArmData> & object,
    ];
    const comparison = compareArms(c, t, { method: 'frequentist', alpha: 0.05, sided: 'two' });
    close(comparison.absolute.estimate, t.estimate - c.estimate, 'difference');
    close(comparison.absolute.stdError, Math.hypot(c.stdError, t.stdError), 'its standard error');
  });

  it('does not depend on the covariate’s origin or unit (z → a z + b: θ → θ / a, the rest unchanged)', () => {
    for (const [a, b] of [
      [1, 1000],
      [-3, 7],
      [1e-6, 3e-6],
    ] as const) {
      const moved = cupedAdjust(
        data.map((units) => sumsOf(units.map(([x, y, z]) => [x, y, a * z + b] as const))),
      );
      close(moved.theta, r.theta! / a, `θ at a=${a}, b=${b}`, 1e-7);
      moved.arms.forEach((arm, k) => {
        close(arm.estimate, r.arms[k]!.estimate, `arm ${k} estimate at a=${a}, b=${b}`, 1e-7);
        close(arm.stdError, r.arms[k]!.stdError, `arm ${k} SE at a=${a}, b=${b}`, 1e-7);
      });
    }
  });

  it('values up to 1e100: x × 10^k and z × 10^-k (k = -100 … 100) scale the answers, never overflow', () => {
    for (let k = -100; k <= 100; k++) {
      const [sx, sz] = [10 ** k, 10 ** -k];
      const scaled = cupedAdjust(
        data.map((units) => sumsOf(units.map(([x, y, z]) => [x * sx, y, z * sz] as const))),
      );
      const what = `k=${k}`;
      assert.deepEqual(scaled.warnings, [], what);
      assertAllFinite(scaled, what);
      close(scaled.theta, (r.theta! * sx) / sz, `${what} θ`);
      close(scaled.covariateMean, r.covariateMean! * sz, `${what} covariate mean`);
      close(scaled.varianceReduction, r.varianceReduction, `${what} reduction`);
      scaled.arms.forEach((arm, i) => {
        close(arm.estimate, r.arms[i]!.estimate! * sx, `${what} arm ${i} estimate`);
        close(arm.stdError, r.arms[i]!.stdError! * sx, `${what} arm ${i} SE`);
        close(arm.adjustedVariance, r.arms[i]!.adjustedVariance! * sx * sx, `${what} arm ${i} variance`);
      });
    }
  });

  it('variances beyond the largest double (a ratio of 1e210) are null with a warning; the SEs survive', () => {
    const huge = cupedAdjust(
      data.map((units) => sumsOf(units.map(([x, y, z]) => [x * 1e110, y * 1e-100, z] as const))),
    );
    assertAllFinite(huge);
    assert.equal(huge.adjusted, true);
    close(huge.arms[0]!.estimate, r.arms[0]!.estimate! * 1e210, 'estimate at 1e210');
    close(huge.arms[0]!.stdError, r.arms[0]!.stdError! * 1e210, 'SE at 1e210');
    assert.equal(huge.arms[0]!.adjustedVariance, null);
    assert.match(huge.warnings.join(), /arm 0 adjusted variance could not be computed/);
  });
});
