// Ratio metrics, caps and covariates (issue 33 items 9-11) through the HTTP API of a real server process:
// seeded calls (a sticky experiment, users as units; a random one, calls as units) are logged in batches,
// and GET analysis is compared with python on the RAW calls (test/helpers/derived-oracle.ts): the delta
// method written out in numpy, min(x, c) and min(x, c·y), statsmodels' OLS `x ~ arm + z` and HC1, numpy's
// percentile. Exact parts to 1e-9 relative; what the server reads from 2%-wide sketch bins within the bounds
// stated at each check. Also: refused combinations, and definitions PATCHed in after the data (the server
// rebuilds its sums) answering as if declared from the start. Runs on PostgreSQL too (npm test's second pass).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SKIP_BACKEND, seededRandom } from './helpers/app.js';
import {
  assertComparison,
  between,
  cappedWithin,
  close,
  type Metric,
  same,
  worst,
} from './helpers/derived-compare.js';
import { type Call, drawCalls, gapCap, oracle, type Reference } from './helpers/derived-oracle.js';
import { type ServerApi, startServerApi } from './helpers/server-api.js';

const GAMMA = 1.01 / 0.99;
const KINDS = ['sticky', 'random'] as const;
type Kind = (typeof KINDS)[number];

const definitions = (costCap: number) => [
  { name: 'cost_per_success', direction: 'decrease', numerator: 'cost_usd', denominator: 'success' },
  { name: 'cost_usd', direction: 'decrease', cap: { value: costCap } },
  { name: 'output_tokens', direction: 'decrease', cap: { percentile: 95 } },
  { name: 'latency_ms', direction: 'decrease', covariate: 'input_tokens' },
];
const VARIANTS = [
  { key: 'A', payload: {}, trafficPercent: 50 },
  { key: 'B', payload: {}, trafficPercent: 50 },
];

/** Per unit (a user when sticky, else a call), the mean of its cost values: where a value cap must not fall. */
function costMeans(calls: Call[], sticky: boolean): number[] {
  const units = new Map<string | number, number[]>();
  calls.forEach((c, i) => {
    if (typeof c.metrics.cost_usd !== 'number') return;
    const key = sticky ? c.user : i;
    units.set(key, [...(units.get(key) ?? []), c.metrics.cost_usd]);
  });
  return [...units.values()].map((v) => v.reduce((a, b) => a + b, 0) / v.length);
}

describe('ratio, cap and covariate through the API agree with numpy, scipy and statsmodels', {
  skip: SKIP_BACKEND,
}, () => {
  let api: ServerApi;
  const calls = {
    sticky: drawCalls(seededRandom(3301), 400, true),
    random: drawCalls(seededRandom(3302), 400, false),
  };
  // The value caps sit in the middle of the widest gap between the units' cost means from their 80th to 97th
  // percentile: per user then no user's mean shares c's 2% sketch bin, and the cap is exact (asserted below).
  const caps = Object.fromEntries(
    KINDS.map((k) => [k, gapCap(costMeans(calls[k], k === 'sticky'), 0.8, 0.97)]),
  );
  const answers = {} as Record<Kind, { metrics: Metric[]; warnings: string[] }>;
  let ref: Record<Kind, Reference>;
  const metric = (kind: Kind, name: string): Metric => answers[kind].metrics.find((m) => m.name === name);

  async function logAll(slug: string, list: Call[]): Promise<void> {
    for (let i = 0; i < list.length; i += 1000) {
      const results = list.slice(i, i + 1000).map((c) => ({
        variantKey: c.arm === 0 ? 'A' : 'B',
        userId: c.user,
        metrics: c.metrics,
      }));
      const res = await api.call('POST', `/experiment/${slug}/logs`, { results });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
  }
  async function create(slug: string, assignment: string, metrics: unknown[]): Promise<void> {
    const res = await api.call('POST', '/experiments', {
      slug,
      status: 'running',
      assignment,
      variants: VARIANTS,
      metrics,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  async function analysis(slug: string) {
    const res = await api.call('GET', `/experiment/${slug}/analysis?correction=none`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  before(async () => {
    api = await startServerApi('derived-oracles');
    for (const kind of KINDS) {
      await create(kind, kind, definitions(caps[kind]!.cap));
      await logAll(kind, calls[kind]);
      answers[kind] = await analysis(kind);
    }
    ref = oracle(
      Object.fromEntries(
        KINDS.map((k) => [
          k,
          {
            sticky: k === 'sticky',
            calls: calls[k],
            costCap: caps[k]!.cap,
            tokensCap: metric(k, 'output_tokens').cap.value,
          },
        ]),
      ),
    ) as Record<Kind, Reference>;
  });

  after(async () => {
    await api?.close();
    const seen = [...worst].map(([tol, e]) => `${e.toExponential(1)} (tolerance ${tol})`);
    console.log(`largest relative differences from python: ${seen.join(', ')}`);
  });

  test('ratio: Σx/Σy per user (sticky) and per call (random, a missing value = 0), delta-method SE, Welch p and CIs (1e-9)', () => {
    for (const kind of KINDS) {
      const m = metric(kind, 'cost_per_success');
      const unit = kind === 'sticky' ? 'users' : 'calls';
      assert.equal(m.label, `cost_usd per success, ${unit} as units`);
      assert.deepEqual(m.ratio, { numerator: 'cost_usd', denominator: 'success' });
      assertComparison(m, ref[kind].ratio, `${kind} ratio`);
    }
  });

  test('value cap per user: x′ = min(x, c·y) by the delta method (1e-9); capped users = numpy counts', (t) => {
    const [m, r] = [metric('sticky', 'cost_usd'), ref.sticky.cost];
    t.diagnostic(`cap ${m.cap.value} (in a gap of ×${caps.sticky!.gap.toFixed(3)}): capped ${r.units} users`);
    assert.ok(caps.sticky!.gap > GAMMA ** 2, `a gap of ${caps.sticky!.gap} leaves room for c's bin`);
    assert.deepEqual(r.near, [0, 0], "no user's mean within a bin of c: nothing is split");
    assert.equal(m.cap.value, caps.sticky!.cap);
    assert.equal(
      m.label,
      `mean per call, users as units, capped at ${Number(caps.sticky!.cap.toPrecision(4))}`,
    );
    assert.deepEqual(
      m.variants.map((v: Metric) => v.capped.units),
      r.units,
    );
    assert.equal(m.cap.units, r.units[0] + r.units[1]);
    close(m.cap.share, (r.units[0] + r.units[1]) / (r.exact.A.n + r.exact.B.n), 0, 'cap.share');
    assert.ok(m.cap.units > 10, `${m.cap.units} users capped: the cap matters`);
    assertComparison(m, r.exact, 'sticky cost capped');
  });

  // Per call the capped sums are read from the sketch: Σx minus the tail read from its bins, or the part
  // below c read from them, each value read within its bin (2.02%). The pure test (stats-capping-numpy)
  // observed 8.3e-4 on the mean and 4.9e-3 on the variance and asserts 0.2% and 1%: the same bounds here
  // (the SE, half the variance's relative error, at 1% too). The count is off by at most c's bin's values.
  function perCallCap(m: Metric, r: Reference['cost'], what: string): void {
    const [a, b] = m.variants;
    for (const [got, want] of [[a, r.exact.A] as const, [b, r.exact.B] as const]) {
      assert.equal(got.n, want.n, `${what}: n`);
      close(got.mean, want.mean, 0, `${what} mean`, 2e-3);
    }
    close(b.absolute.stdError, r.exact.absolute.stdError, 0, `${what} SE`, 1e-2);
    // The difference, from the two means: within the sum of their bounds.
    const diff = b.absolute.estimate - r.exact.absolute.estimate;
    assert.ok(
      Math.abs(diff) <= 2e-3 * (r.exact.A.mean + r.exact.B.mean),
      `${what} difference off by ${diff}`,
    );
    cappedWithin(m, r, what);
  }

  test('value cap per call: min(x, c) read from the sketches (mean 0.2%, SE 1%, count within c’s bin)', (t) => {
    const m = metric('random', 'cost_usd');
    const r = ref.random.cost;
    t.diagnostic(
      `cap ${m.cap.value}: capped ${m.variants.map((v: Metric) => v.capped.units)} vs numpy ${r.units} (in c's bin: ${r.near})`,
    );
    assert.equal(m.cap.value, caps.random!.cap);
    perCallCap(m, r, 'random cost capped');
  });

  test('percentile cap (95): within a bin of numpy.percentile of the units pooled, and the capped analysis', (t) => {
    for (const kind of KINDS) {
      const [m, r] = [metric(kind, 'output_tokens'), ref[kind].tokens];
      assert.equal(m.cap.percentile, 95);
      t.diagnostic(
        `${kind}: cap ${m.cap.value} vs np.percentile ${r.percentile} (${(100 * (m.cap.value / r.percentile - 1)).toFixed(2)}%), ` +
          `capped ${m.variants.map((v: Metric) => v.capped.units)} vs numpy ${r.units} (in c's bin: ${r.near})`,
      );
      // The sketch's order statistics lie in the true ones' bins, so the cap is within a bin width (2.02%).
      close(m.cap.value, r.percentile, 0, `${kind} cap vs np.percentile`, GAMMA - 1);
      if (kind === 'random') perCallCap(m, r, 'random tokens capped');
    }
    // Per user the sums are exact but c's bin is split in proportion: every number lies between numpy's with
    // that bin's users all kept and all capped, and the capped count within those users of numpy's.
    const [m, r] = [metric('sticky', 'output_tokens'), ref.sticky.tokens];
    const [a, b] = m.variants;
    for (const [got, low, high] of [[a, r.low.A, r.high.A] as const, [b, r.low.B, r.high.B] as const]) {
      between(got.mean, low.mean, high.mean, 'sticky tokens mean');
    }
    for (const scale of ['absolute', 'relative'] as const) {
      between(b[scale].estimate, r.low[scale].estimate, r.high[scale].estimate, `sticky tokens ${scale}`);
      between(b[scale].stdError, r.low[scale].stdError, r.high[scale].stdError, `sticky tokens ${scale} SE`);
    }
    cappedWithin(m, r, 'sticky tokens');
  });

  test('covariate per call: the difference = OLS `x ~ arm + z` coefficient (1e-9); SE = numpy (1e-9), near HC (0.5%, 5%)', (t) => {
    const [m, r] = [metric('random', 'latency_ms'), ref.random.latency];
    assert.equal(m.label, 'mean per call, adjusted on input_tokens');
    assert.equal(m.adjustment.adjusted, true);
    const b = m.variants[1];
    close(b.absolute.estimate, r.ols!.coef, r.ols!.hc1, 'adjusted difference vs OLS coefficient');
    assertComparison(m, r.adjusted, 'random latency adjusted');
    // Which HC: with the arm column centered (randomization makes arm ⟂ z) HC0's sandwich is Σ_k S_k / n_k²
    // over the arms' residual sums of squares, ours Σ_k S_k / (n_k (n_k − 1)): 1/n apart (0.5% allowed).
    // statsmodels' HC1 residualizes arm on z: the arm's sample correlation with z (O(1/√n)) times the
    // residuals' spread growing with z (multiplicative noise; calls without input_tokens have z = 0) moves
    // it by a few % at n = 1,200 (3.2% here, 0.87% in the pure test's homoskedastic data): 5% allowed.
    const se = b.absolute.stdError;
    const [centered, hc1] = [se / r.ols!.hc0Centered - 1, se / r.ols!.hc1 - 1];
    t.diagnostic(
      `SE ${se}: vs HC0 (arm centered) ${(100 * centered).toFixed(3)}%, vs HC1 ${(100 * hc1).toFixed(2)}%, ` +
        `vs classical ${(100 * (se / r.ols!.classical - 1)).toFixed(2)}%`,
    );
    assert.ok(Math.abs(centered) <= 0.005, `SE vs HC0 with arm centered: ${centered}`);
    assert.ok(Math.abs(hc1) <= 0.05, `SE vs HC1: ${hc1}`);
    checkAdjustment(m, r, 'random');
  });

  test('covariate per user (z = the user’s mean input_tokens): numpy delta method, θ from OLS of the linearized unit (1e-9)', () => {
    const m = metric('sticky', 'latency_ms');
    assert.equal(m.label, 'mean per call, users as units, adjusted on input_tokens');
    assertComparison(m, ref.sticky.latency.adjusted, 'sticky latency adjusted');
    checkAdjustment(m, ref.sticky.latency, 'sticky');
  });

  function checkAdjustment(m: Metric, r: Reference['latency'], what: string): void {
    close(m.adjustment.theta, r.theta, 0, `${what} theta`);
    close(m.adjustment.covariateMean, r.covariateMean, 0, `${what} covariateMean`);
    close(m.adjustment.varianceReduction, r.varianceReduction, 0, `${what} varianceReduction`);
    assert.ok(
      r.varianceReduction > 0.2,
      `${what}: the covariate explains part of the metric (${r.varianceReduction})`,
    );
    const [a, b] = m.variants;
    close(a.unadjusted.mean, r.unadjusted.A.mean, 0, `${what} unadjusted A`);
    close(b.unadjusted.mean, r.unadjusted.B.mean, 0, `${what} unadjusted B`);
    const u = r.unadjusted.absolute;
    close(b.unadjusted.absolute.estimate, u.estimate, u.stdError, `${what} unadjusted difference`);
    close(b.unadjusted.absolute.stdError, u.stdError, 0, `${what} unadjusted SE`);
    close(b.unadjusted.pValue, u.pValue, 0, `${what} unadjusted p`);
  }

  test('refused definitions: 400 with an {"error"} body, on create and on PATCH', async () => {
    const refused = [
      { name: 'r', direction: 'decrease', numerator: 'cost_usd', denominator: 'success', cap: { value: 1 } },
      { name: 'r', direction: 'decrease', numerator: 'cost_usd', denominator: 'success', covariate: 'z' },
      { name: 'cost_usd', direction: 'decrease', cap: { value: 1 }, covariate: 'input_tokens' },
      { name: 'cost_usd', direction: 'decrease', cap: { percentile: 100 } },
      { name: 'cost_usd', direction: 'decrease', cap: { percentile: 0 } },
      { name: 'r', direction: 'decrease', numerator: 'r', denominator: 'success' },
      { name: 'r', direction: 'decrease', kind: 'proportion', numerator: 'cost_usd', denominator: 'success' },
      { name: 'latency_ms', direction: 'decrease', covariate: 'latency_ms' },
    ];
    for (const d of refused) {
      for (const res of [
        await api.call('POST', '/experiments', {
          slug: 'refused',
          status: 'running',
          variants: VARIANTS,
          metrics: [d],
        }),
        await api.call('PATCH', '/experiment/sticky', { metrics: [d] }),
      ]) {
        assert.equal(res.status, 400, `${JSON.stringify(d)}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(Object.keys(res.body), ['error']);
        assert.ok(typeof res.body.error === 'string' && res.body.error.length > 0);
      }
    }
    assert.equal((await api.call('GET', '/experiment/refused')).status, 404);
    assert.deepEqual(
      (await analysis('sticky')).metrics,
      answers.sticky.metrics,
      'the refused PATCHes changed nothing',
    );
  });

  test('definitions PATCHed in after the data answer as if declared from the start (the server rebuilds)', async () => {
    for (const kind of KINDS) {
      const slug = `late-${kind}`;
      await create(slug, kind, []);
      await logAll(slug, calls[kind]);
      const res = await api.call('PATCH', `/experiment/${slug}`, { metrics: definitions(caps[kind]!.cap) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const late = await analysis(slug);
      assert.deepEqual(late.warnings, answers[kind].warnings);
      same(late.metrics, answers[kind].metrics, `${slug}.metrics`);
    }
  });
});
