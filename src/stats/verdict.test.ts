// Tests the verdict rule, status by status, on literal comparisons, and the exact sentence each one reads as.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EffectEstimate } from './types.js';
import {
  decideVerdict,
  MIN_UNITS_PER_VARIANT,
  type VerdictInput,
  type VerdictMetric,
  type VerdictVariant,
} from './verdict.js';
import { about, chance, pValue } from './wording.js';

const users = { one: 'user', other: 'users' };
const est = (
  estimate: number | null,
  ci: [number | null, number | null],
  pValue: number | null = null,
): EffectEstimate => ({
  estimate,
  ci,
  stdError: null,
  pValue,
});
const control = (n: number): VerdictVariant => ({ key: 'A', n });

/** Success rate A 30% vs B 38.1%: +8.1 points [+2.3, +13.9], lift +27%. */
const bBetter: VerdictVariant = {
  key: 'B',
  n: 1000,
  comparison: {
    absolute: est(0.081, [0.023, 0.139], 0.003),
    relative: est(0.27, [0.077, 0.463], 0.004),
    chanceToWin: null,
    better: true,
    worse: false,
  },
};
const bWorse: VerdictVariant = {
  key: 'B',
  n: 1000,
  comparison: {
    absolute: est(-0.081, [-0.139, -0.023], 0.003),
    relative: est(-0.27, [-0.463, -0.077], 0.004),
    chanceToWin: null,
    better: false,
    worse: true,
  },
};
const bFlat: VerdictVariant = {
  key: 'B',
  n: 1000,
  comparison: {
    absolute: est(0.012, [-0.008, 0.032], 0.24),
    relative: est(0.04, [-0.027, 0.107], 0.25),
    chanceToWin: null,
    better: false,
    worse: false,
  },
};
const successRate = (variants: VerdictVariant[], more: Partial<VerdictMetric> = {}): VerdictMetric => ({
  name: 'success rate',
  role: 'primary',
  direction: 'increase',
  kind: 'proportion',
  control: 'A',
  variants,
  ...more,
});
/**
 * Cost (a mean that should decrease), B 27% higher [+12%, +42%]: failed against a 5% threshold, passed against
 * 50%, inconclusive against 30%.
 */
const THRESHOLD = { failed: 0.05, passed: 0.5, inconclusive: 0.3 } as const;
const cost = (status: keyof typeof THRESHOLD, key = 'B'): VerdictMetric => ({
  name: 'cost',
  role: 'guardrail',
  direction: 'decrease',
  kind: 'mean',
  control: 'A',
  variants: [
    control(1000),
    {
      key,
      n: 1000,
      guardrail: {
        status,
        threshold: THRESHOLD[status],
        bound: 0.42,
        absolute: est(0.027, [0.012, 0.042], 0.001),
        relative: est(0.27, [0.12, 0.42], 0.001),
      },
    },
  ],
});
const input = (metrics: VerdictMetric[], more: Partial<VerdictInput> = {}): VerdictInput => ({
  metrics,
  srm: { mismatch: false, pValue: 0.4 },
  method: 'frequentist',
  unit: users,
  ...more,
});

describe('decideVerdict', () => {
  it('a. sample-ratio mismatch comes first, whatever the effects', () => {
    const v = decideVerdict(
      input([successRate([control(1000), bBetter])], { srm: { mismatch: true, pValue: 0.00012 } }),
    );
    assert.deepEqual(v, {
      status: 'sample-ratio-mismatch',
      summary:
        'Traffic does not match the configured split (p = 0.00012): do not trust any effect until assignment is fixed.',
    });
  });

  it('b. no primary metric: declare one, with a direction', () => {
    const v = decideVerdict(
      input([successRate([control(1000), bBetter], { role: 'secondary' }), cost('passed')]),
    );
    assert.equal(v.status, 'no-winner-yet');
    assert.equal(v.metric, undefined);
    assert.equal(
      v.summary,
      'No primary metric is declared: declare one primary metric with a direction (which way is better) to get a verdict.',
    );
  });

  it('b. a primary metric without a direction cannot pick a winner', () => {
    const v = decideVerdict(input([successRate([control(1000), bBetter], { direction: null })]));
    assert.deepEqual(v, {
      status: 'no-winner-yet',
      metric: 'success rate',
      summary:
        'success rate has no direction: declare whether it should increase or decrease to get a verdict.',
    });
  });

  it('b. not enough data: the control below the minimum', () => {
    const c: VerdictVariant = { ...bBetter, key: 'C', n: 3 };
    const v = decideVerdict(input([successRate([control(12), { ...bBetter, n: 1040 }, c])]));
    assert.equal(MIN_UNITS_PER_VARIANT, 30);
    assert.deepEqual(v, {
      status: 'not-enough-data',
      metric: 'success rate',
      summary:
        'Not enough data on success rate yet: A has 12 users, B has 1,040 users, and C has 3 users; each variant needs at least 30 users.',
    });
  });

  it('b. not enough data: every treatment below the minimum (calls as the unit)', () => {
    const v = decideVerdict(
      input([successRate([control(500), { ...bBetter, n: 1 }])], { unit: { one: 'call', other: 'calls' } }),
    );
    assert.equal(v.status, 'not-enough-data');
    assert.equal(
      v.summary,
      'Not enough data on success rate yet: A has 500 calls and B has 1 call; each variant needs at least 30 calls.',
    );
  });

  it('b. not enough data: no comparison could be computed', () => {
    const none: VerdictVariant = {
      ...bFlat,
      comparison: { ...bFlat.comparison!, absolute: est(0, [null, null]) },
    };
    const v = decideVerdict(input([successRate([control(500), none])]));
    assert.equal(v.status, 'not-enough-data');
    assert.equal(
      v.summary,
      'Not enough data on success rate yet: A has 500 users and B has 1,000 users, but no comparison with A could be computed.',
    );
  });

  it('c. winner (bayesian): points for a proportion, chance to be better, guardrails within limit', () => {
    const b: VerdictVariant = { ...bBetter, comparison: { ...bBetter.comparison!, chanceToWin: 0.99 } };
    const v = decideVerdict(input([successRate([control(1000), b]), cost('passed')], { method: 'bayesian' }));
    assert.deepEqual(v, {
      status: 'winner',
      variant: 'B',
      metric: 'success rate',
      summary:
        'B beats A on success rate: +8.1 points [+2.3, +13.9], 99% chance to be better; cost is 27% higher (guardrail, within its 50% limit).',
    });
  });

  it('c. winner: the best lift in the better direction (latency should decrease), percent for a mean', () => {
    const latency = (key: string, lift: number, ci: [number, number], adjusted: number): VerdictVariant => ({
      key,
      n: 400,
      comparison: {
        absolute: est(200 * lift, [200 * ci[0], 200 * ci[1]], 0.001),
        relative: est(lift, ci, 0.001),
        chanceToWin: null,
        better: true,
        worse: false,
        pValue: adjusted,
        rawPValue: 0.001,
        corrected: true,
      },
    });
    const metric: VerdictMetric = {
      name: 'latency',
      role: 'primary',
      direction: 'decrease',
      kind: 'mean',
      control: 'A',
      variants: [
        control(400),
        latency('B', -0.123, [-0.2, -0.046], 0.002),
        latency('C', -0.201, [-0.28, -0.122], 0.004),
      ],
    };
    const v = decideVerdict(input([metric]));
    assert.deepEqual(v, {
      status: 'winner',
      variant: 'C',
      metric: 'latency',
      summary: 'C beats A on latency: -20.1% [-28%, -12.2%], p = 0.004 after correction.',
    });
  });

  it('c. winner: a guardrail that could not be compared is named, not called within its limit', () => {
    const unknown = cost('passed');
    unknown.variants[1]!.guardrail = {
      ...unknown.variants[1]!.guardrail!,
      status: 'inconclusive',
      bound: null,
      absolute: est(null, [null, null]),
      relative: est(null, [null, null]),
    };
    const v = decideVerdict(input([successRate([control(1000), bBetter]), unknown]));
    assert.equal(
      v.summary,
      'B beats A on success rate: +8.1 points [+2.3, +13.9], p = 0.003; cost could not be compared (guardrail, inconclusive).',
    );
  });

  it('c. winner: an inconclusive guardrail says how bad it could still be, never "within limit"', () => {
    const v = decideVerdict(input([successRate([control(1000), bBetter]), cost('inconclusive')]));
    assert.equal(v.status, 'winner');
    assert.equal(
      v.summary,
      'B beats A on success rate: +8.1 points [+2.3, +13.9], p = 0.003; cost could still be 42% higher; threshold 30%.',
    );
  });

  it('c. the first declared primary is the primary', () => {
    const second = successRate([control(1000), bBetter], { name: 'retention' });
    const v = decideVerdict(input([successRate([control(1000), bFlat]), second]));
    assert.equal(v.status, 'no-winner-yet');
    assert.equal(v.metric, 'success rate');
  });

  it('c. the control wins when every treatment is significantly worse', () => {
    const v = decideVerdict(input([successRate([control(1000), bWorse])]));
    assert.deepEqual(v, {
      status: 'winner',
      variant: 'A',
      metric: 'success rate',
      summary: 'A (control) beats B on success rate: B -8.1 points [-13.9, -2.3], p = 0.003.',
    });
    const c: VerdictVariant = {
      ...bWorse,
      key: 'C',
      comparison: {
        ...bWorse.comparison!,
        absolute: est(-0.05, [-0.09, -0.01], 0.02),
        relative: est(-0.17, [-0.3, -0.03]),
      },
    };
    const two = decideVerdict(input([successRate([control(1000), bWorse, c])]));
    assert.equal(two.variant, 'A');
    assert.equal(
      two.summary,
      'A (control) beats B and C on success rate: closest is C, -5 points [-9, -1], p = 0.02.',
    );
    // One treatment worse and one not significant: no winner.
    assert.equal(
      decideVerdict(input([successRate([control(1000), bWorse, { ...bFlat, key: 'C' }])])).status,
      'no-winner-yet',
    );
  });

  it('c. a treatment below the minimum units does not win, even when flagged better', () => {
    const v = decideVerdict(
      input([successRate([control(1000), { ...bBetter, n: 20 }, { ...bFlat, key: 'C' }])]),
    );
    assert.equal(v.status, 'no-winner-yet');
    assert.match(v.summary, /^No variant beats A on success rate yet \(C, /);
  });

  it('c/d. a candidate that fails a guardrail is dropped; a safe one still wins', () => {
    const c: VerdictVariant = {
      ...bBetter,
      key: 'C',
      comparison: { ...bBetter.comparison!, relative: est(0.1, [0.01, 0.19]) },
    };
    const v = decideVerdict(input([successRate([control(1000), bBetter, c]), cost('failed', 'B')]));
    assert.equal(v.status, 'winner');
    assert.equal(v.variant, 'C');
  });

  it('d. guardrail failed: the only candidate is harmful', () => {
    const v = decideVerdict(input([successRate([control(1000), bBetter]), cost('failed')]));
    assert.deepEqual(v, {
      status: 'guardrail-failed',
      variant: 'B',
      metric: 'cost',
      summary:
        'B beats A on success rate (+8.1 points [+2.3, +13.9], p = 0.003) but fails the cost guardrail: cost is 27% higher [+12%, +42%], worse than its 5% threshold; do not ship it.',
    });
  });

  it('d. guardrail failed: no candidate, and a treatment is harmful (bayesian)', () => {
    const harmful = cost('failed');
    const b: VerdictVariant = { ...bFlat, comparison: { ...bFlat.comparison!, chanceToWin: 0.8 } };
    const v = decideVerdict(input([successRate([control(1000), b]), harmful], { method: 'bayesian' }));
    assert.deepEqual(v, {
      status: 'guardrail-failed',
      variant: 'B',
      metric: 'cost',
      summary:
        'B fails the cost guardrail: cost is 27% higher [+12%, +42%], worse than its 5% threshold; no variant beats A on success rate yet.',
    });
  });

  it('e. no winner yet: how many more units the minimum detectable effect needs', () => {
    const withMore = (v: VerdictVariant, moreUnits: number | null) => ({ ...v, moreUnits });
    const metric = successRate([withMore(control(1000), 1187), withMore(bFlat, 1150)], { mde: 0.05 });
    const v = decideVerdict(input([metric, cost('passed')]));
    assert.deepEqual(v, {
      status: 'no-winner-yet',
      metric: 'success rate',
      summary:
        'No variant beats A on success rate yet (B, +1.2 points [-0.8, +3.2], p = 0.24); about 1,200 more users per variant to detect a 5% change in success rate.',
    });
    const enough = successRate([withMore(control(1000), 0), withMore(bFlat, 0)], { mde: 0.05 });
    assert.equal(
      decideVerdict(input([enough])).summary,
      'No variant beats A on success rate yet (B, +1.2 points [-0.8, +3.2], p = 0.24); there are enough users to detect a 5% change in success rate, so any effect is likely smaller.',
    );
    const c: VerdictVariant = {
      ...bFlat,
      key: 'C',
      comparison: { ...bFlat.comparison!, relative: est(0.01, [-0.05, 0.07]) },
    };
    assert.equal(
      decideVerdict(input([successRate([control(1000), bFlat, c])])).summary,
      'No variant beats A on success rate yet (best: B, +1.2 points [-0.8, +3.2], p = 0.24); keep collecting data, and declare a minimum detectable effect to know for how long.',
    );
  });
});

describe('verdict wording', () => {
  it('rounds "about" counts up to two significant figures', () => {
    assert.deepEqual(
      [about(87), about(1187), about(1200), about(12_345), about(99.2)],
      ['87', '1,200', '1,200', '13,000', '100'],
    );
  });

  it('p-values to two significant figures, chances without a false 100%', () => {
    assert.deepEqual(
      [pValue(0.0031), pValue(0.24), pValue(0.00012), pValue(0.00001)],
      ['p = 0.0031', 'p = 0.24', 'p = 0.00012', 'p < 0.0001'],
    );
    assert.deepEqual(
      [chance(0.99), chance(0.994), chance(0.9996), chance(0.5), chance(0.0001)],
      ['99%', '99.4%', '>99.9%', '50%', '<0.1%'],
    );
  });
});
