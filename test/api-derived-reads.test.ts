// A ratio metric (issue 33 item 9) in the reads beside the analysis: its time series (cumulative per hour,
// per user, the last period the analysis' own reading) and its segments (per value, the users' calls in that
// value), against sums computed here from the raw values; a cap is not applied within a segment or in the
// time series, and both say so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { declaredSums } from '../src/core/declared.js';
import type { NewResult } from '../src/core/writes.js';
import {
  type Api,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  seededRandom,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const HOURS = ['2026-03-02T09:15:00.000Z', '2026-03-02T10:45:30.000Z', '2026-03-02T12:05:00.000Z'];
const hourOf = (iso: string) => `${iso.slice(0, 13)}:00:00.000Z`;

interface Call {
  user: string;
  variant: 'A' | 'B';
  plan: 'pro' | 'free';
  at: string;
  cost: number;
  ok: boolean;
}

/** Σcost / Σok over users (each user's calls summed), and the users counted, of `calls`. */
function ratioOf(calls: Call[]): { n: number; mean: number } {
  const users = new Set(calls.map((c) => c.user));
  const cost = calls.reduce((a, c) => a + c.cost, 0);
  const ok = calls.reduce((a, c) => a + (c.ok ? 1 : 0), 0);
  return { n: users.size, mean: cost / ok };
}

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} ≠ ${b}`);

describe('a ratio metric in the time series and the segments', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  const calls: Call[] = [];

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'derived-reads');
    api = runtime.api;
    slug = (
      await api.createExperiment({
        assignment: 'sticky',
        segments: ['plan'],
        metrics: [
          {
            name: 'cost_per_ok',
            direction: 'decrease',
            role: 'primary',
            numerator: 'cost',
            denominator: 'ok',
          },
          { name: 'cost', direction: 'decrease', cap: { percentile: 90 } },
        ],
      })
    ).slug;
    const found = await runtime.store.findExperiment(slug);
    assert.ok(found);
    const declared = declaredSums(found.experiment.metrics);
    const random = seededRandom(17);
    const results: NewResult[] = [];
    for (let i = 0; i < 240; i++) {
      const u = Math.floor(random() * 60);
      const call: Call = {
        user: `u${u}`,
        variant: u % 2 ? 'B' : 'A',
        plan: random() < 0.4 ? 'pro' : 'free',
        at: HOURS[Math.floor((i / 240) * HOURS.length)]!,
        cost: Math.round(random() * 100) / 1000,
        ok: random() < 0.6,
      };
      calls.push(call);
      results.push({
        logId: `dr-${i}`,
        experimentId: found.id,
        version: 1,
        variantKey: call.variant,
        knownVariant: true,
        userId: call.user,
        assignmentId: null,
        input: null,
        output: null,
        metrics: JSON.stringify({ cost: call.cost, ok: call.ok }),
        context: JSON.stringify({ plan: call.plan }),
        timestamp: null,
        createdAt: call.at,
        unit: true,
        declared,
        segments: { values: { plan: call.plan }, lookup: [], wait: false },
      });
    }
    await runtime.store.appendBatch({ results, exposures: [] });
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  test('the time series cumulates the ratio per user hour by hour; its last period is the analysis', async () => {
    const res = await api.get(`/experiment/${slug}/analysis/timeseries?metric=cost_per_ok&interval=hour`);
    assert.equal(res.statusCode, 200, res.body);
    const series = res.json();
    assert.equal(series.unit, 'user');
    assert.deepEqual(
      series.periods.map((p: { start: string }) => p.start),
      HOURS.map(hourOf),
    );
    for (const period of series.periods) {
      const end = new Date(Date.parse(period.start) + 3_600_000).toISOString();
      for (const v of period.variants) {
        const expected = ratioOf(calls.filter((c) => c.variant === v.key && c.at < end));
        assert.equal(v.n, expected.n, `${period.start} ${v.key} n`);
        close(v.mean, expected.mean, `${period.start} ${v.key} mean`);
      }
    }
    const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
    const metric = analysis.metrics.find((m: { name: string }) => m.name === 'cost_per_ok');
    assert.deepEqual(metric.ratio, { numerator: 'cost', denominator: 'ok' });
    const last = series.periods.at(-1);
    for (const [i, v] of metric.variants.entries()) {
      assert.equal(last.variants[i].n, v.n);
      close(last.variants[i].mean, v.mean, `last period ${v.key}`);
    }
    close(last.variants[1].absolute.estimate, metric.variants[1].absolute.estimate, 'the effect');
    close(last.variants[1].absolute.stdError, metric.variants[1].absolute.stdError, 'its standard error');
    // The capped metric's series is of the values as logged, and says so.
    const capped = (await api.get(`/experiment/${slug}/analysis/timeseries?metric=cost`)).json();
    assert.ok(
      capped.warnings.some((w: string) => /cap applies in the analysis only/.test(w)),
      capped.warnings,
    );
  });

  test('each segment value reads the ratio over its users’ calls in that value; caps are not applied there', async () => {
    const res = await api.get(`/experiment/${slug}/analysis?segment=plan`);
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json();
    for (const s of answer.segments) {
      const metric = s.metrics.find((m: { name: string }) => m.name === 'cost_per_ok');
      assert.equal(s.unit, 'user');
      for (const v of metric.variants) {
        const expected = ratioOf(calls.filter((c) => c.plan === s.value && c.variant === v.key));
        assert.equal(v.n, expected.n, `${s.value} ${v.key} n`);
        close(v.mean, expected.mean, `${s.value} ${v.key} mean`);
      }
      assert.ok(
        s.warnings.some((w: string) => /cost: not capped within a segment/.test(w)),
        JSON.stringify(s.warnings),
      );
    }
    // The whole analysis is capped (per user, at the users' pooled 90th percentile).
    const whole = answer.metrics.find((m: { name: string }) => m.name === 'cost');
    assert.equal(whole.cap.percentile, 90);
    assert.ok(whole.cap.value > 0 && whole.cap.units > 0, JSON.stringify(whole.cap));
  });
});
