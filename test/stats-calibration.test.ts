// Seeded simulations: A/A false "better" and false "worse" of compareArms' decisions, each at most alpha/2
// two-sided for every method (the sequential test under continuous peeking, 20 looks), and the absolute test's
// power at unitsForPower's n close to the 80% asked for.
// Slack: a rate estimated from m experiments has standard error sqrt(a (1 - a) / m); the assertions allow 3 of
// them (one test in about 700 would fail by chance at the boundary; the observed rates sit well inside).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AnalysisMethod,
  type ArmData,
  compareArms,
  type SidedOption,
  unitsForPower,
} from '../src/stats/index.js';
import { detectsIncrease } from './helpers/absolute-decision.js';
import { seededRandom } from './helpers/random.js';

const ALPHA = 0.05;
const PAIRS = 4000;
const slack = (a: number, m: number) => 3 * Math.sqrt((a * (1 - a)) / m);

function normals(seed: number): () => number {
  const u = seededRandom(seed);
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(1 - u()));
    const t = 2 * Math.PI * u();
    spare = r * Math.sin(t);
    return r * Math.cos(t);
  };
}

interface Kind {
  name: string;
  /** Cumulative arm after each look of `step` units. */
  looks: (draw: () => number, looks: number, step: number) => ArmData[];
}

const numeric = (mean: number, sd: number): Kind => ({
  name: `numeric N(${mean}, ${sd}²)`,
  looks: (draw, looks, step) => {
    let [n, sum, sumSquares] = [0, 0, 0];
    return Array.from({ length: looks }, () => {
      for (let i = 0; i < step; i++) {
        const x = mean + sd * draw();
        n++;
        sum += x;
        sumSquares += x * x;
      }
      return { n, sum, sumSquares };
    });
  },
});

const bernoulli = (p: number, uniform: () => number): Kind => ({
  name: `proportion p = ${p}`,
  looks: (_draw, looks, step) => {
    let [n, successes] = [0, 0];
    return Array.from({ length: looks }, () => {
      for (let i = 0; i < step; i++) {
        n++;
        if (uniform() < p) successes++;
      }
      return { n, successes };
    });
  },
});

const flags = (c: ArmData, t: ArmData, method: AnalysisMethod, sided: SidedOption, nStar?: number) => {
  const r = compareArms(c, t, { method, alpha: ALPHA, sided, direction: 'increase', nStar });
  return { better: r.better === true, worse: r.worse === true };
};
const winner = (c: ArmData, t: ArmData, method: AnalysisMethod, sided: SidedOption, nStar?: number) =>
  flags(c, t, method, sided, nStar).better;

// Two-sided, false "better" and false "worse" are each at most alpha/2 (one test decides, on the difference:
// the old intersection with the lift's test was lopsided, 4.7% worse against 0.7% better in sticky A/A);
// one-sided toward better, false "better" at most alpha.
describe('A/A: false better and false worse per side (seeded, 4,000 pairs per kind)', () => {
  const kinds = [
    numeric(10, 4),
    bernoulli(0.1, seededRandom(11)),
    bernoulli(0.02, seededRandom(12)),
    bernoulli(0.005, seededRandom(13)),
  ];
  const LOOKS = 20;
  const STEP = 20; // 400 units per arm at the last look
  for (const [k, kind] of kinds.entries()) {
    it(kind.name, (t) => {
      const draw = normals(1000 + k);
      const counts = new Map<string, { n: number; limit: number }>();
      const add = (key: string, hit: boolean, limit: number) => {
        const c = counts.get(key) ?? { n: 0, limit };
        c.n += hit ? 1 : 0;
        counts.set(key, c);
      };
      for (let pair = 0; pair < PAIRS; pair++) {
        const c = kind.looks(draw, LOOKS, STEP);
        const tr = kind.looks(draw, LOOKS, STEP);
        const [cEnd, tEnd] = [c[LOOKS - 1]!, tr[LOOKS - 1]!];
        for (const method of ['frequentist', 'bayesian'] as const) {
          const two = flags(cEnd, tEnd, method, 'two');
          add(`${method} two-sided, false better`, two.better, ALPHA / 2);
          add(`${method} two-sided, false worse`, two.worse, ALPHA / 2);
          add(`${method} sided better, false better`, winner(cEnd, tEnd, method, 'better'), ALPHA);
        }
        // Sequential: a call at any of the 20 looks counts (peeking after every batch).
        const nStar = 2 * LOOKS * STEP;
        const looks = c.map((arm, i) => flags(arm, tr[i]!, 'sequential', 'two', nStar));
        add(
          `sequential two-sided, any of ${LOOKS} looks, false better`,
          looks.some((f) => f.better),
          ALPHA / 2,
        );
        add(
          `sequential two-sided, any of ${LOOKS} looks, false worse`,
          looks.some((f) => f.worse),
          ALPHA / 2,
        );
        add(
          `sequential sided better, any of ${LOOKS} looks, false better`,
          c.some((arm, i) => winner(arm, tr[i]!, 'sequential', 'better', nStar)),
          ALPHA,
        );
      }
      for (const [key, { n, limit }] of counts) {
        const rate = n / PAIRS;
        t.diagnostic(`${kind.name}, ${key}: ${rate.toFixed(4)} (at most ${limit})`);
        assert.ok(rate <= limit + slack(limit, PAIRS), `${kind.name}, ${key}: ${rate}`);
      }
    });
  }
});

describe('power at unitsForPower with the inputs known: 0.80 ± 0.035 (seeded, 2,000 experiments per method)', () => {
  // Control N(10, 4²), treatment 10% higher with the same shape, N(11, 4.4²): the plan's scale model holds
  // exactly, so the absolute test (the decision rule) should have the 80% asked for. Planning from a pilot's
  // estimates instead: test/stats-power-pilot.test.ts.
  const EXPERIMENTS = 2000;
  const TOLERANCE = 0.035; // 4 binomial standard errors at 0.8, plus the z approximation (Welch uses t)
  for (const method of ['frequentist', 'bayesian', 'sequential'] as const) {
    for (const sided of ['two', 'greater'] as const) {
      it(`${method}, sided ${sided}`, (t) => {
        const nStar = 5000;
        const n = unitsForPower({
          variance: 16,
          controlMean: 10,
          mde: 0.1,
          alpha: ALPHA,
          sided,
          method,
          nStar,
        })!;
        const draw = normals(2000 + n);
        let wins = 0;
        for (let e = 0; e < EXPERIMENTS; e++) {
          const c = numeric(10, 4).looks(draw, 1, n)[0]!;
          const tr = numeric(11, 4.4).looks(draw, 1, n)[0]!;
          if (detectsIncrease(c, tr, { method, alpha: ALPHA, sided, nStar })) wins++;
        }
        const power = wins / EXPERIMENTS;
        t.diagnostic(`${method} ${sided}: n = ${n} per variant, simulated power ${power.toFixed(4)}`);
        assert.ok(Math.abs(power - 0.8) <= TOLERANCE, `${method} ${sided}: n ${n}, power ${power}`);
      });
    }
  }
});
