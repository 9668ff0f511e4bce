// Seeded A/A simulations of the decision on adjusted (CUPED; 4,000 pairs) and capped (2,000 pairs) arms: false
// "better" and false "worse" of compareArms (frequentist, two-sided, alpha 0.05) each at most alpha/2 plus 3
// binomial standard errors, as in test/stats-calibration.test.ts. Also reported: the same rates without the adjustment or the cap, the
// variance reduction, and the power at a known effect with and without (asserted higher with).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ArmData,
  adjustedArmData,
  type CappingArm,
  type CovariateMoments,
  capArms,
  compareArms,
  cupedAdjust,
} from '../src/stats/index.js';
import { type SketchBin, sketchBin } from '../src/stats/sketch.js';
import { seededRandom } from './helpers/random.js';

const ALPHA = 0.05;
const PAIRS = 4000;
/** Fewer for capping: reading 1,500 sketch bins per pair costs about 7 ms (sketch-layout.ts). */
const CAP_PAIRS = 2000;
const slack = (a: number, m: number) => 3 * Math.sqrt((a * (1 - a)) / m);

function normals(seed: number): () => number {
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

function poisson(u: () => number, lambda: number): number {
  let [k, p] = [0, Math.exp(-lambda)];
  let cdf = p;
  const r = u();
  while (r > cdf) {
    k++;
    p *= lambda / k;
    cdf += p;
  }
  return k;
}

const decide = (c: ArmData, t: ArmData) => {
  const r = compareArms(c, t, { method: 'frequentist', alpha: ALPHA, sided: 'two', direction: 'increase' });
  return { better: r.better === true, worse: r.worse === true };
};

/** Counts of false better / worse (or, with an effect, of better) over the pairs, per label. */
class Tally {
  constructor(private readonly pairs = PAIRS) {}
  private counts = new Map<string, number>();
  add(label: string, hit: boolean): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + (hit ? 1 : 0));
  }
  rate(label: string): number {
    return (this.counts.get(label) ?? 0) / this.pairs;
  }
}

class CovariateArm {
  sums: CovariateMoments = {
    n: 0,
    sumX: 0,
    sumX2: 0,
    sumY: 0,
    sumY2: 0,
    sumXY: 0,
    sumZ: 0,
    sumZ2: 0,
    sumXZ: 0,
    sumYZ: 0,
  };
  add(x: number, y: number, z: number): void {
    const s = this.sums;
    s.n++;
    s.sumX += x;
    s.sumX2 += x * x;
    s.sumY += y;
    s.sumY2 += y * y;
    s.sumXY += x * y;
    s.sumZ += z;
    s.sumZ2 += z * z;
    s.sumXZ += x * z;
    s.sumYZ += y * z;
  }
}

interface CupedKind {
  name: string;
  /** One arm of n units; lift multiplies the in-experiment values. */
  arm: (n: number, lift: number) => CovariateMoments;
}

const perCall = (seed: number): CupedKind => {
  const draw = normals(seed);
  // x = 10 + z + e with z ~ N(5, 2²) and e ~ N(0, 2²): ρ² = 0.5 within an arm.
  return {
    name: 'per call, normal, ρ² = 0.5, 200 calls per arm',
    arm: (n, lift) => {
      const a = new CovariateArm();
      for (let i = 0; i < n; i++) {
        const z = 5 + 2 * draw();
        a.add((10 + z + 2 * draw()) * lift, 1, z);
      }
      return a.sums;
    },
  };
};

const perUser = (seed: number): CupedKind => {
  const draw = normals(seed);
  const u = seededRandom(seed + 1);
  // A user level (lognormal), 1 + Poisson(2) calls now and, for 80% of the users, 1 + Poisson(2) calls before
  // the experiment (the covariate: their total; 0 for new users).
  const calls = (level: number, m: number) => {
    let total = 0;
    for (let j = 0; j < m; j++) total += Math.exp(level + 0.5 * draw());
    return total;
  };
  return {
    name: 'per user, 1 + Poisson(2) calls, a user effect, 20% new users (z = 0), 300 users per arm',
    arm: (n, lift) => {
      const a = new CovariateArm();
      for (let i = 0; i < n; i++) {
        const level = 1 + 0.8 * draw();
        const y = 1 + poisson(u, 2);
        const z = u() < 0.2 ? 0 : calls(level, 1 + poisson(u, 2));
        a.add(calls(level, y) * lift, y, z);
      }
      return a.sums;
    },
  };
};

describe('A/A with regression adjustment: false better and false worse each ≤ alpha/2 (4,000 pairs)', () => {
  for (const [kind, n, lift] of [
    [perCall(301), 200, 1.04],
    [perUser(302), 300, 1.1],
  ] as const) {
    it(kind.name, (t) => {
      const tally = new Tally();
      let reduction = 0;
      for (let pair = 0; pair < PAIRS; pair++) {
        for (const effect of [1, lift]) {
          const arms = [kind.arm(n, 1), kind.arm(n, effect)];
          const r = cupedAdjust(arms);
          assert.equal(r.adjusted, true);
          const [c, tr] = r.arms.map((a) => adjustedArmData(a)!) as [ArmData, ArmData];
          const adjusted = decide(c, tr);
          const plain = decide(toRatio(arms[0]!), toRatio(arms[1]!));
          if (effect === 1) {
            reduction += r.varianceReduction! / PAIRS;
            tally.add('adjusted, false better', adjusted.better);
            tally.add('adjusted, false worse', adjusted.worse);
            tally.add('unadjusted, false better', plain.better);
            tally.add('unadjusted, false worse', plain.worse);
          } else {
            tally.add('adjusted, power', adjusted.better);
            tally.add('unadjusted, power', plain.better);
          }
        }
      }
      for (const label of ['adjusted', 'unadjusted']) {
        const [better, worse] = [tally.rate(`${label}, false better`), tally.rate(`${label}, false worse`)];
        t.diagnostic(`${label}: false better ${better.toFixed(4)}, false worse ${worse.toFixed(4)}`);
        assert.ok(better <= ALPHA / 2 + slack(ALPHA / 2, PAIRS), `${label} false better ${better}`);
        assert.ok(worse <= ALPHA / 2 + slack(ALPHA / 2, PAIRS), `${label} false worse ${worse}`);
      }
      const [withIt, without] = [tally.rate('adjusted, power'), tally.rate('unadjusted, power')];
      t.diagnostic(
        `mean variance reduction ${(100 * reduction).toFixed(1)}%; power at ×${lift}: ` +
          `adjusted ${withIt.toFixed(4)}, unadjusted ${without.toFixed(4)}`,
      );
      assert.ok(withIt > without, `power ${withIt} vs ${without}`);
    });
  }
});

function toRatio(a: CovariateMoments): ArmData {
  const { n, sumX, sumX2, sumY, sumY2, sumXY } = a;
  return { n, sumX, sumX2, sumY, sumY2, sumXY };
}

function armOf(values: number[]): CappingArm {
  const bins = new Map<string, SketchBin>();
  let [sum, sumSquares, min, max] = [0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const x of values) {
    const b = sketchBin(x);
    const id = `${b.side}:${b.key}`;
    const bin = bins.get(id) ?? { ...b, count: 0 };
    bin.count++;
    bins.set(id, bin);
    sum += x;
    sumSquares += x * x;
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  return { n: values.length, sum, sumSquares, min, max, bins: [...bins.values()] };
}

describe('A/A with a cap at the pooled 99th percentile: false better and worse each ≤ alpha/2 (2,000 pairs)', () => {
  const u = seededRandom(401);
  const draw = normals(402);
  for (const [name, value] of [
    ['lognormal(0, 1.5²)', () => Math.exp(1.5 * draw())],
    ['Pareto(1.5)', () => (1 - u()) ** (-1 / 1.5)],
  ] as const) {
    it(`${name}, 400 calls per arm`, (t) => {
      const tally = new Tally(CAP_PAIRS);
      let ratio = 0;
      for (let pair = 0; pair < CAP_PAIRS; pair++) {
        for (const lift of [1, 1.15]) {
          const arms = [0, 1].map((k) =>
            armOf(Array.from({ length: 400 }, () => value() * (k === 1 ? lift : 1))),
          );
          const r = capArms(arms, { percentile: 99 });
          assert.deepEqual(r.warnings, []);
          const [c, tr] = r.arms.map((a) => a.moments!) as [ArmData, ArmData];
          const capped = decide(c, tr);
          const plain = decide(arms[0]!, arms[1]!);
          if (lift === 1) {
            const variance = (m: { n: number; sum: number; sumSquares: number }) =>
              (m.sumSquares - (m.sum * m.sum) / m.n) / (m.n - 1);
            ratio += variance(r.arms[0]!.moments!) / variance(arms[0]!) / CAP_PAIRS;
            tally.add('capped, false better', capped.better);
            tally.add('capped, false worse', capped.worse);
            tally.add('uncapped, false better', plain.better);
            tally.add('uncapped, false worse', plain.worse);
          } else {
            tally.add('capped, power', capped.better);
            tally.add('uncapped, power', plain.better);
          }
        }
      }
      for (const label of ['capped', 'uncapped']) {
        const [better, worse] = [tally.rate(`${label}, false better`), tally.rate(`${label}, false worse`)];
        t.diagnostic(`${label}: false better ${better.toFixed(4)}, false worse ${worse.toFixed(4)}`);
        if (label === 'capped') {
          assert.ok(better <= ALPHA / 2 + slack(ALPHA / 2, CAP_PAIRS), `${label} false better ${better}`);
          assert.ok(worse <= ALPHA / 2 + slack(ALPHA / 2, CAP_PAIRS), `${label} false worse ${worse}`);
        }
      }
      const [withIt, without] = [tally.rate('capped, power'), tally.rate('uncapped, power')];
      t.diagnostic(
        `mean capped / uncapped variance ${ratio.toFixed(3)}; power at ×1.15: capped ${withIt.toFixed(4)}, ` +
          `uncapped ${without.toFixed(4)}`,
      );
      assert.ok(withIt > without, `power ${withIt} vs ${without}`);
    });
  }
});
