// Tests how a metric's direction (which way is better) and `sided` combine in compareArms, for every
// direction × method × sided, and the one-sided harm test of guardrails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bayesianCompare, normalRisk } from './bayesian.js';
import { type AnalysisMethod, BETTER_NEEDS_DIRECTION, compareArms, type SidedOption } from './compare.js';
import { normalPValue } from './decision.js';
import { normalCdf } from './distributions.js';
import { scoreZ } from './score.js';
import { sequentialPValue, sequentialR } from './sequential.js';
import type { Direction, Sided } from './types.js';

// Success rates 30% (control), 40% (up) and 22% (down) over 2,000 units each: |z| > 5, so every test that
// looks in the right direction is significant, for every method, and none that looks the other way is.
const control = { n: 2000, successes: 600 };
const up = { n: 2000, successes: 800 };
const down = { n: 2000, successes: 440 };
const ALPHA = 0.05;
const N_STAR = 4000;

type Flags = [significant: boolean, better: boolean | null, worse: boolean | null];
interface Row {
  direction: Direction | null;
  sided: SidedOption;
  /** The alternative tested, and the direction results read in. */
  tested: Sided;
  reads: Direction | null;
  warning: boolean;
  /** Expected with treatment up (40% vs 30%) and down (22% vs 30%). */
  up: Flags;
  down: Flags;
}

const T = true;
const F = false;
const rows: Row[] = [
  {
    direction: 'increase',
    sided: 'two',
    tested: 'two',
    reads: 'increase',
    warning: F,
    up: [T, T, F],
    down: [T, F, T],
  },
  {
    direction: 'increase',
    sided: 'greater',
    tested: 'greater',
    reads: 'increase',
    warning: F,
    up: [T, T, F],
    down: [F, F, F],
  },
  {
    direction: 'increase',
    sided: 'less',
    tested: 'less',
    reads: 'increase',
    warning: F,
    up: [F, F, F],
    down: [T, F, T],
  },
  {
    direction: 'increase',
    sided: 'better',
    tested: 'greater',
    reads: 'increase',
    warning: F,
    up: [T, T, F],
    down: [F, F, F],
  },
  {
    direction: 'decrease',
    sided: 'two',
    tested: 'two',
    reads: 'decrease',
    warning: F,
    up: [T, F, T],
    down: [T, T, F],
  },
  {
    direction: 'decrease',
    sided: 'greater',
    tested: 'greater',
    reads: 'decrease',
    warning: F,
    up: [T, F, T],
    down: [F, F, F],
  },
  {
    direction: 'decrease',
    sided: 'less',
    tested: 'less',
    reads: 'decrease',
    warning: F,
    up: [F, F, F],
    down: [T, T, F],
  },
  {
    direction: 'decrease',
    sided: 'better',
    tested: 'less',
    reads: 'decrease',
    warning: F,
    up: [F, F, F],
    down: [T, T, F],
  },
  {
    direction: null,
    sided: 'two',
    tested: 'two',
    reads: null,
    warning: F,
    up: [T, null, null],
    down: [T, null, null],
  },
  {
    direction: null,
    sided: 'greater',
    tested: 'greater',
    reads: 'increase',
    warning: F,
    up: [T, T, F],
    down: [F, F, F],
  },
  {
    direction: null,
    sided: 'less',
    tested: 'less',
    reads: 'decrease',
    warning: F,
    up: [F, F, F],
    down: [T, T, F],
  },
  {
    direction: null,
    sided: 'better',
    tested: 'two',
    reads: null,
    warning: T,
    up: [T, null, null],
    down: [T, null, null],
  },
];
const methods: AnalysisMethod[] = ['frequentist', 'sequential', 'bayesian'];

describe('compareArms: direction × method × sided', () => {
  for (const row of rows) {
    for (const method of methods) {
      for (const [name, treatment, flags] of [
        ['up', up, row.up],
        ['down', down, row.down],
      ] as const) {
        const label = `direction ${row.direction}, ${method}, sided ${row.sided}, treatment ${name}`;
        it(label, () => {
          const r = compareArms(control, treatment, {
            method,
            alpha: ALPHA,
            sided: row.sided,
            direction: row.direction,
            nStar: N_STAR,
          });
          assert.equal(r.sided, row.tested);
          assert.equal(r.significant, r.pValue !== null && r.pValue < ALPHA);
          assert.equal(r.direction, row.reads);
          assert.deepEqual([r.significant, r.better, r.worse], flags);
          assert.equal(r.warnings.includes(BETTER_NEEDS_DIRECTION), row.warning, r.warnings.join(' | '));

          // The literal alternative is what ran underneath: the score test of the difference (proportions),
          // with the sequence's critical value under sequential.
          const z = scoreZ(
            { successes: control.successes, trials: control.n },
            { successes: treatment.successes, trials: treatment.n },
            0,
            'diff',
          );
          assert.equal(r.test.method, method === 'sequential' ? 'score-sequence' : 'score');
          if (method === 'sequential') {
            const rr = sequentialR(control.n + treatment.n, ALPHA, row.tested, N_STAR);
            assert.equal(r.absolute.pValue, sequentialPValue(z, rr, row.tested));
          } else assert.equal(r.absolute.pValue, normalPValue(z, row.tested));
          if (method !== 'bayesian' || row.reads === null) {
            assert.equal(r.chanceToWin, null);
            assert.deepEqual(r.risk, [null, null]);
            return;
          }
          // chanceToWin is P(better) from the deciding statistic; risk is the lift's posterior expected loss in
          // units of "better": for 'decrease' both read negated.
          const post = bayesianCompare(control, treatment, { alpha: ALPHA, effect: 'relative' });
          const sign = row.reads === 'increase' ? 1 : -1;
          assert.equal(r.chanceToWin, normalCdf(sign * z));
          const risk = normalRisk(sign * post.expected!, post.stdDev!);
          for (const i of [0, 1]) {
            assert.ok(Math.abs(r.risk[i]! - risk[i]!) <= 1e-9 * Math.abs(risk[i]!), `risk ${i}`);
          }
          // A significant effect in the better direction is almost surely better, and the reverse.
          assert.ok(r.better ? r.chanceToWin! > 0.999 : true);
          assert.ok(r.worse ? r.chanceToWin! < 0.001 : true);
        });
      }
    }
  }

  it('an effect that is not significant is neither better nor worse', () => {
    const close = { n: 2000, successes: 610 };
    for (const method of methods) {
      for (const sided of ['two', 'greater', 'less', 'better'] as const) {
        const r = compareArms(control, close, { method, alpha: ALPHA, sided, direction: 'increase' });
        assert.deepEqual([r.significant, r.better, r.worse], [false, false, false], `${method} ${sided}`);
      }
    }
  });

  it('bayesian: P >= 1 - alpha/2 on a side two-sided, P >= 1 - alpha on the tested side one-sided', () => {
    // Control mean 0 (so the absolute effect decides), both variances 1, n 100: SE sqrt(0.02). A treatment mean
    // of z SE gives P(treatment > control) = Φ(z): Φ(2.1) = 0.982 >= 0.975; Φ(1.8) = 0.964 is >= 0.95 but
    // < 0.975 (GrowthBook's two-sided rule would call it significant); Φ(1.5) = 0.933 < 0.95.
    const c = { n: 100, sum: 0, sumSquares: 99 };
    const at = (z: number) => {
      const sum = 100 * z * Math.sqrt(0.02);
      return { n: 100, sum, sumSquares: sum ** 2 / 100 + 99 };
    };
    const o = { method: 'bayesian', alpha: ALPHA, direction: 'increase' } as const;
    const significant = (z: number, sided: SidedOption) => compareArms(c, at(z), { ...o, sided }).significant;
    assert.ok(
      Math.abs(compareArms(c, at(1.8), { ...o, sided: 'two' }).chanceToWin! - normalCdf(1.8)) < 1e-12,
    );
    for (const [z, expected] of [
      [2.1, { two: T, greater: T, less: F, better: T }],
      [-2.1, { two: T, greater: F, less: T, better: F }],
      [1.8, { two: F, greater: T, less: F, better: T }],
      [-1.8, { two: F, greater: F, less: T, better: F }],
      [1.5, { two: F, greater: F, less: F, better: F }],
    ] as const) {
      for (const sided of ['two', 'greater', 'less', 'better'] as const) {
        const r = compareArms(c, at(z), { ...o, sided });
        assert.equal(r.significant, expected[sided], `z ${z}, ${sided}`);
        // The printed interval agrees: it excludes 0 exactly when the effect is significant.
        const [lo, hi] = r.absolute.ci;
        assert.equal((lo !== null && lo > 0) || (hi !== null && hi < 0), r.significant, `z ${z}, ${sided}`);
      }
    }
    assert.equal(significant(1.8, 'better'), true);
  });

  it('ignores an unknown direction, with a warning', () => {
    const r = compareArms(control, up, {
      method: 'frequentist',
      alpha: ALPHA,
      sided: 'two',
      direction: 'up' as never,
    });
    assert.equal(r.direction, null);
    assert.match(r.warnings.join(), /direction must be/);
  });
});
