// A/A calibration of ratio metrics, caps and covariates (issue 33 items 9-11) through the HTTP API of a
// real server process: 200 sticky experiments with no true difference, 80-100 users each calling 1-5 times
// (a user effect shared by their calls, a lognormal cost), and three derived metrics: latency adjusted on
// input_tokens (the user's mean, correlated with it), cost capped at the users' pooled 99th percentile, and
// cost per success (a ratio). For each method a false "better" or "worse" should each happen alpha/2 of
// the time; each is asserted at most the count a method at exactly that rate exceeds by chance less than
// 1 time in 1,000 (binomial tail), uncorrected (?correction=none: each metric's own test at alpha; the
// default correction over the experiment's metrics would hide a miscalibrated one). The rates and the
// mean variance reduction are printed, and the latency's unadjusted frequentist test for comparison.
// SQLite only: the statistics do not depend on the backend, and one run is enough.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SKIP_BACKEND, SQLITE_ONLY, seededRandom } from './helpers/app.js';
import { drawCalls } from './helpers/derived-oracle.js';
import { type ServerApi, startServerApi } from './helpers/server-api.js';
import { binomialUpper } from './helpers/traffic.js';

const ALPHA = 0.05;
const EXPERIMENTS = 200;
const METHODS = ['frequentist', 'sequential', 'bayesian'] as const;
const METRICS = ['latency_ms', 'cost_usd', 'cost_per_success'] as const;
const DEFINITIONS = [
  { name: 'latency_ms', direction: 'decrease', covariate: 'input_tokens' },
  { name: 'cost_usd', direction: 'decrease', cap: { percentile: 99 } },
  { name: 'cost_per_success', direction: 'decrease', numerator: 'cost_usd', denominator: 'success' },
];
const VARIANTS = [
  { key: 'A', payload: {}, trafficPercent: 50 },
  { key: 'B', payload: {}, trafficPercent: 50 },
];
const NO_LIFT = { cost: 1, latency: 1 };

type Method = (typeof METHODS)[number];
type Name = (typeof METRICS)[number];
/** Per method and metric: false better, false worse. */
type Counts = Record<Method, Record<Name, { better: number; worse: number }>>;

describe('A/A: derived metrics keep each side of their false positives at alpha/2', {
  skip: SKIP_BACKEND || SQLITE_ONLY,
}, () => {
  let api: ServerApi;

  before(async () => {
    api = await startServerApi('derived-calibration');
  });

  after(async () => {
    await api?.close();
  });

  /** Runs `work` on every item, `width` at a time. */
  async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
    const queue = [...items];
    const worker = async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    };
    await Promise.all(Array.from({ length: width }, worker));
  }

  test(`${EXPERIMENTS} sticky A/A experiments, three methods: false better and worse per side`, async (t) => {
    const started = Date.now();
    const random = seededRandom(3310);
    // Drawn up front, in order, so the traffic is the same however the sending interleaves.
    const plans = Array.from({ length: EXPERIMENTS }, (_, i) => ({
      slug: `aa-${i}`,
      calls: drawCalls(random, 80 + Math.floor(random() * 21), true, NO_LIFT),
    }));
    await pool(plans, 4, async ({ slug, calls }) => {
      const body = {
        slug,
        status: 'running',
        assignment: 'sticky',
        variants: VARIANTS,
        metrics: DEFINITIONS,
      };
      const created = await api.call('POST', '/experiments', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const results = calls.map((c) => ({
        variantKey: c.arm === 0 ? 'A' : 'B',
        userId: `${slug}-${c.user}`,
        metrics: c.metrics,
      }));
      const logged = await api.call('POST', `/experiment/${slug}/logs`, { results });
      assert.equal(logged.status, 200, JSON.stringify(logged.body));
    });
    const logging = Date.now() - started;

    const counts = Object.fromEntries(
      METHODS.map((m) => [m, Object.fromEntries(METRICS.map((n) => [n, { better: 0, worse: 0 }]))]),
    ) as Counts;
    const reductions: number[] = [];
    const unadjusted = { better: 0, worse: 0 };
    const capped: number[] = [];
    const requests = plans.flatMap(({ slug }) => METHODS.map((method) => ({ slug, method })));
    await pool(requests, 4, async ({ slug, method }) => {
      const res = await api.call('GET', `/experiment/${slug}/analysis?method=${method}&correction=none`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const name of METRICS) {
        const m = res.body.metrics.find((x: { name: string }) => x.name === name);
        assert.equal(m.unit, 'user', `${slug} ${name}`);
        const b = m.variants[1];
        assert.ok(b.better !== null && b.worse !== null, `${slug} ${name}: a direction is declared`);
        if (b.better) counts[method][name].better += 1;
        if (b.worse) counts[method][name].worse += 1;
      }
      if (method !== 'frequentist') return;
      const latency = res.body.metrics.find((x: { name: string }) => x.name === 'latency_ms');
      assert.equal(latency.adjustment.adjusted, true, `${slug}: ${JSON.stringify(latency.adjustment)}`);
      reductions.push(latency.adjustment.varianceReduction);
      // Before the adjustment: two-sided at alpha, so each side at alpha/2 (the direction is 'decrease').
      const before = latency.variants[1].unadjusted;
      if (before.pValue < ALPHA) unadjusted[before.absolute.estimate < 0 ? 'better' : 'worse'] += 1;
      capped.push(res.body.metrics.find((x: { name: string }) => x.name === 'cost_usd').cap.share);
    });

    const n = EXPERIMENTS;
    const limit = binomialUpper(n, ALPHA / 2, 0.001);
    const pct = (k: number) => `${k}/${n} ${((100 * k) / n).toFixed(1).padStart(4)}%`;
    const rows: string[] = METHODS.flatMap((method) =>
      METRICS.map(
        (name) =>
          `${method.padEnd(12)}${name.padEnd(18)}better ${pct(counts[method][name].better)}   worse ${pct(counts[method][name].worse)}`,
      ),
    );
    rows.push(
      `${'(unadjusted)'.padEnd(12)}${'latency_ms'.padEnd(18)}better ${pct(unadjusted.better)}   worse ${pct(unadjusted.worse)}`,
    );
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      [
        `A/A false positives per side (nominal ${ALPHA / 2}, limit ${limit}/${n}):`,
        ...rows,
        `latency_ms adjusted on input_tokens: mean varianceReduction ${mean(reductions).toFixed(3)} ` +
          `(min ${Math.min(...reductions).toFixed(3)}, max ${Math.max(...reductions).toFixed(3)})`,
        `cost_usd capped at the 99th percentile: mean share of users capped ${mean(capped).toFixed(4)}`,
        `sent in ${(logging / 1000).toFixed(1)} s, analysed in ${((Date.now() - started - logging) / 1000).toFixed(1)} s`,
      ].join('\n'),
    );
    t.diagnostic(`limit per side ${limit}/${n}`);
    for (const method of METHODS) {
      for (const name of METRICS) {
        for (const side of ['better', 'worse'] as const) {
          const k = counts[method][name][side];
          assert.ok(k <= limit, `${method} ${name}: false ${side} ${k}/${n}; at most ${limit} expected`);
        }
      }
    }
    // The covariate explains part of the latency in every experiment (population ρ² about 0.5).
    assert.ok(mean(reductions) > 0.2, `mean variance reduction ${mean(reductions)}`);
  });
});
