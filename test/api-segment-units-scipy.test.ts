// Segments per user through the API (issue 33 item 3): in a sticky experiment GET analysis?segment=key reads
// each value of the key with the whole analysis' unit and estimator, per user, from users' sums kept per
// value at write time, and compares a quantile statistic from sketch bins kept per value. The test logs
// seeded raw data with strong user effects (several calls per user; a tenth of the users have calls in two
// plans, so they are a unit in each), late feedback on assignments, then numpy/scipy compute per segment
// value from those raw values: each user's sums within the value, the ratio, its delta-method variance
// (np.cov and the gradient, the cluster-level delta method), Welch's p-value with degrees of freedom over
// users, and, for the p95 metric, numpy's quantile and the rank-interval standard error with the effective
// users (Σy)²/Σy². It also computes what per-call reading (the analysis before this change) gives.
// python3 with numpy and scipy is required (CI has it): the test fails, loudly, without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  seededRandom,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const TOLERANCE = 1e-9;
const USERS = 600;
const PLANS = ['pro', 'free', 'team'] as const;

const random = seededRandom(20_261_133);
/** A standard normal draw (Box–Muller). */
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

const PYTHON = `
import json, sys, math
import numpy as np
from scipy import stats

data = json.load(sys.stdin)
Z = 1.959963984540054

def arm(units):
    # One unit per user with values in this segment value: x the sum of its values, y how many.
    x = np.array([sum(u) for u in units if len(u) > 0], dtype=float)
    y = np.array([len(u) for u in units if len(u) > 0], dtype=float)
    n = len(x)
    mx, my = x.mean(), y.mean()
    mean_cov = np.cov(np.vstack([x, y]), ddof=1) / n
    grad = np.array([1 / my, -mx / my ** 2])
    return n, float(x.sum() / y.sum()), float(grad @ mean_cov @ grad)

def per_call(units):
    v = np.array([x for u in units for x in u], dtype=float)
    return len(v), float(v.mean()), float(v.var(ddof=1) / len(v))

def metric(m):
    nc, rc, vc = arm(m['A'])
    nt, rt, vt = arm(m['B'])
    welch = stats.ttest_ind_from_stats(rt, math.sqrt(vt * nt), nt, rc, math.sqrt(vc * nc), nc, equal_var=False)
    dof = (vt + vc) ** 2 / (vt ** 2 / (nt - 1) + vc ** 2 / (nc - 1))
    lift = (rt - rc) / abs(rc)
    lift_se = math.sqrt(vt / rc ** 2 + vc * rt ** 2 / rc ** 4)
    kc, _, wc = per_call(m['A'])
    kt, _, wt = per_call(m['B'])
    calls = stats.ttest_ind_from_stats(rt, math.sqrt(wt * kt), kt, rc, math.sqrt(wc * kc), kc, equal_var=False)
    return {
        'A': {'n': nc, 'mean': rc, 'stdDev': math.sqrt(vc * nc)},
        'B': {'n': nt, 'mean': rt, 'stdDev': math.sqrt(vt * nt)},
        'absolute': {'estimate': rt - rc, 'stdError': math.sqrt(vt + vc), 'pValue': float(welch.pvalue)},
        'relative': {'estimate': lift, 'stdError': lift_se,
                     'pValue': float(2 * stats.t.sf(abs(lift / lift_se), dof))},
        'perCall': {'stdError': math.sqrt(wt + wc), 'pValue': float(calls.pvalue)},
    }

def quantile(m, q):
    out = {}
    for key in ('A', 'B'):
        units = [u for u in m[key] if len(u) > 0]
        v = np.array([x for u in units for x in u], dtype=float)
        y = np.array([len(u) for u in units], dtype=float)
        def se(n):
            h = Z * math.sqrt(q * (1 - q) / n)
            if q - h < 0 or q + h > 1:
                return None
            return float((np.quantile(v, q + h) - np.quantile(v, q - h)) / (2 * Z))
        out[key] = {'estimate': float(np.quantile(v, q)), 'users': se(y.sum() ** 2 / (y ** 2).sum()),
                    'calls': se(len(v))}
    return out

print(json.dumps({
    value: {name: (quantile(m, 0.95) if name == 'ttft' else metric(m)) for name, m in metrics.items()}
    for value, metrics in data.items()
}))
`;

interface Reading {
  n: number;
  mean: number;
  stdDev: number;
}
interface EffectReading {
  estimate: number;
  stdError: number;
  pValue: number;
}
interface MetricReference {
  A: Reading;
  B: Reading;
  absolute: EffectReading;
  relative: EffectReading;
  perCall: { stdError: number; pValue: number };
}
type QuantileReference = Record<'A' | 'B', { estimate: number; users: number | null; calls: number | null }>;
type Reference = Record<string, Record<string, MetricReference | QuantileReference>>;

interface VariantReading {
  key: string;
  n: number;
  mean: number;
  stdDev: number;
  quantiles?: Record<'p50' | 'p90' | 'p95' | 'p99', number | null>;
  absolute?: EffectReading;
  relative?: EffectReading;
}
interface MetricReading {
  name: string;
  unit: string;
  statistic: string;
  label: string;
  variants: VariantReading[];
}
interface SegmentReading {
  value: string;
  unit: string;
  results: Record<string, number>;
  metrics: MetricReading[];
  warnings: string[];
}

function close(actual: unknown, expected: number, scale: number, what: string): void {
  assert.ok(typeof actual === 'number', `${what}: got ${actual}, python ${expected}`);
  const tolerance = TOLERANCE * Math.max(Math.abs(expected), scale);
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: got ${actual}, python ${expected}`);
}

/** Every number of two answers agrees to 1e-9 relative, and everything else exactly. */
function assertSameAnswer(actual: unknown, expected: unknown, at = 'analysis'): void {
  if (typeof expected === 'number') {
    close(actual, expected, 0, at);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${at}: ${JSON.stringify(actual)}`);
    for (const [i, e] of expected.entries()) assertSameAnswer(actual[i], e, `${at}[${i}]`);
  } else if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${at}: ${JSON.stringify(actual)}`);
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), at);
    for (const [k, e] of Object.entries(expected)) {
      assertSameAnswer((actual as Record<string, unknown>)[k], e, `${at}.${k}`);
    }
  } else {
    assert.equal(actual, expected, at);
  }
}

describe('segments of a sticky experiment are analysed per user, as numpy/scipy read the raw data', {
  skip: SKIP_BACKEND,
}, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  let reference: Reference;
  /** Per plan, metric, variant and user: the user's values in that plan. */
  const raw = new Map<string, Map<string, { A: Map<string, number[]>; B: Map<string, number[]> }>>();

  const record = (plan: string, metric: string, variant: 'A' | 'B', user: string, value: number) => {
    const byMetric = raw.get(plan) ?? new Map();
    raw.set(plan, byMetric);
    if (!byMetric.has(metric)) byMetric.set(metric, { A: new Map(), B: new Map() });
    const users = byMetric.get(metric)![variant];
    users.set(user, [...(users.get(user) ?? []), value]);
  };

  const analysis = async (s: string, query: string) => {
    const res = await api.get(`/experiment/${s}/analysis?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { unit: string; metrics: MetricReading[]; segments: SegmentReading[] };
  };

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'segment-units-scipy');
    api = runtime.api;
    // A fixed slug (the sticky hash's seed): the same users land in the same variants on every run.
    slug = (
      await api.createExperiment({
        slug: 'segment-units-scipy',
        assignment: 'sticky',
        segments: ['plan'],
        metrics: [
          { name: 'latency', direction: 'decrease' },
          { name: 'ttft', direction: 'decrease', statistic: 'p95' },
          { name: 'success', direction: 'increase' },
          { name: 'thumbs', direction: 'increase' },
        ],
      })
    ).slug;

    // No effect of the variant; a strong user effect (each user's calls are alike), 2 to 9 calls a user.
    const results: Array<Record<string, unknown>> = [];
    const thumbs: Array<{ assignmentId: string; up: boolean }> = [];
    for (let i = 0; i < USERS; i++) {
      const user = `user-${i}`;
      const u = random();
      const plan = u < 0.4 ? 'pro' : u < 0.8 ? 'free' : 'team';
      const { variant, assignmentId } = await api.assign(slug, { userId: user, context: { plan } });
      assert.ok(variant === 'A' || variant === 'B');
      const level = 0.8 * normal();
      const rate = 0.2 + 0.6 * random();
      // A tenth of the users also call from another plan (their own context says so): a unit in each.
      const other = random() < 0.1 ? PLANS[(PLANS.indexOf(plan) + 1) % 3]! : null;
      const calls = 2 + Math.floor(random() * 8);
      for (let c = 0; c < calls; c++) {
        const inOther = other !== null && c % 2 === 1;
        const at = inOther ? other : plan;
        const latency = Math.round(Math.exp(6 + level + 0.3 * normal()));
        const ttft = Math.exp(4 + level + 0.5 * normal());
        const success = random() < rate;
        results.push({
          variantKey: variant,
          userId: user,
          assignmentId,
          ...(inOther ? { context: { plan: other } } : {}),
          metrics: { latency, ttft, success },
        });
        record(at, 'latency', variant, user, latency);
        record(at, 'ttft', variant, user, ttft);
        record(at, 'success', variant, user, success ? 1 : 0);
      }
      // Feedback on the assignment: counted in the assign's plan, in the user's unit there.
      if (random() < 0.7) {
        const up = random() < 0.3 + 0.4 * rate;
        thumbs.push({ assignmentId, up });
        record(plan, 'thumbs', variant, user, up ? 1 : 0);
      }
    }
    for (let i = 0; i < results.length; i += 1000) await api.logMany(slug, results.slice(i, i + 1000));
    for (let i = 0; i < thumbs.length; i += 100) {
      const res = await api.post('/feedback', {
        feedback: thumbs
          .slice(i, i + 100)
          .map((t) => ({ experiment: slug, assignmentId: t.assignmentId, metrics: { thumbs: t.up } })),
      });
      assert.equal(res.statusCode, 200, res.body);
    }

    const input = Object.fromEntries(
      [...raw].map(([plan, metrics]) => [
        plan,
        Object.fromEntries(
          [...metrics].map(([metric, arms]) => [
            metric,
            { A: [...arms.A.values()], B: [...arms.B.values()] },
          ]),
        ),
      ]),
    );
    const run = spawnSync('python3', ['-c', PYTHON], {
      input: JSON.stringify(input),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error || run.status !== 0) {
      assert.fail(
        `python3 with numpy and scipy is required for this test: ${run.error?.message ?? run.stderr}`,
      );
    }
    reference = JSON.parse(run.stdout) as Reference;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  /** Every plan's mean and proportion metrics against numpy/scipy's per-user reading. */
  function assertMatchesReference(segments: SegmentReading[]): void {
    assert.deepEqual(segments.map((s) => s.value).sort(), [...PLANS].sort());
    for (const s of segments) {
      assert.equal(s.unit, 'user', `${s.value} is read per user`);
      for (const name of ['latency', 'success', 'thumbs']) {
        const m = s.metrics.find((x) => x.name === name)!;
        const ref = reference[s.value]![name] as MetricReference;
        assert.equal(m.unit, 'user', `${s.value}/${name} per user`);
        const [a, b] = m.variants as [VariantReading, VariantReading];
        for (const [key, got] of [
          ['A', a],
          ['B', b],
        ] as const) {
          assert.equal(got.n, ref[key].n, `${s.value}/${name}/${key}: n counts the users with values in it`);
          close(got.mean, ref[key].mean, 0, `${s.value}/${name}/${key} mean Σx/Σy`);
          close(got.stdDev, ref[key].stdDev, 0, `${s.value}/${name}/${key} stdDev = sqrt(n Var(R))`);
        }
        for (const effect of ['absolute', 'relative'] as const) {
          const want = ref[effect];
          const got = b[effect]!;
          close(got.estimate, want.estimate, want.stdError, `${s.value}/${name} ${effect} estimate`);
          close(got.stdError, want.stdError, 0, `${s.value}/${name} ${effect} stdError`);
        }
        // The p-value of a mean: Welch's, with degrees of freedom over users. (Which test a proportion's
        // p-value comes from, and the lift's, is the comparison's business, src/stats/compare.ts: the unit
        // reaches it through the arms' n and variances checked above.)
        if (name === 'latency') {
          close(b.absolute!.pValue, ref.absolute.pValue, 0, `${s.value}/${name} Welch p (dof over users)`);
        }
      }
    }
  }

  test("each plan's n, mean, standard error and p-value are numpy's per-user delta method and scipy's Welch", async () => {
    const body = await analysis(slug, 'segment=plan&correction=none');
    assert.equal(body.unit, 'user');
    assertMatchesReference(body.segments);
    for (const s of body.segments) {
      // team has too few effective users for a p95 interval (the p95 test below); nothing else is said.
      const said = s.value === 'team' ? s.warnings.filter((w) => !w.startsWith('ttft/')) : s.warnings;
      assert.deepEqual(said, [], s.value);
    }
  });

  test('with user effects the per-call reading understated the standard error; the segment reads it per user', async (t) => {
    const body = await analysis(slug, 'segment=plan&correction=none');
    const pro = body.segments.find((s) => s.value === 'pro')!;
    const latency = pro.metrics.find((m) => m.name === 'latency')!.variants[1]!;
    const ref = reference.pro!.latency as MetricReference;
    const ratio = latency.absolute!.stdError / ref.perCall.stdError;
    t.diagnostic(
      `pro/latency: SE per user ${latency.absolute!.stdError.toFixed(2)} vs per call ${ref.perCall.stdError.toFixed(2)} (${ratio.toFixed(2)}×); p ${latency.absolute!.pValue.toFixed(3)} vs per call ${ref.perCall.pValue.toFixed(3)}`,
    );
    // About 2× here, as in issue 33's report (2.0–2.2×); the per-call p-value was the smaller one.
    assert.ok(ratio > 1.7, `per-user SE / per-call SE = ${ratio}`);
    close(latency.absolute!.stdError, ref.absolute.stdError, 0, 'pro/latency SE per user');
    assert.ok(
      ref.perCall.pValue < latency.absolute!.pValue,
      `${ref.perCall.pValue} < ${latency.absolute!.pValue}`,
    );
  });

  test('a p95 metric has its values, and its comparison, in every segment (effective users as units)', async (t) => {
    const body = await analysis(slug, 'segment=plan&correction=none');
    for (const s of body.segments) {
      const ttft = s.metrics.find((m) => m.name === 'ttft')!;
      assert.equal(ttft.statistic, 'p95');
      assert.equal(ttft.label, 'p95 of calls, users as units');
      const ref = reference[s.value]!.ttft as QuantileReference;
      for (const v of ttft.variants) {
        const want = ref[v.key as 'A' | 'B'];
        for (const q of ['p50', 'p90', 'p95', 'p99'] as const) {
          assert.ok(typeof v.quantiles?.[q] === 'number', `${s.value}/${v.key} ${q}: ${v.quantiles?.[q]}`);
        }
        // The sketch reads within one bin width (2%) of numpy's quantile.
        const p95 = v.quantiles!.p95!;
        assert.ok(
          Math.abs(p95 / want.estimate - 1) < 0.021,
          `${s.value}/${v.key} p95 ${p95} vs ${want.estimate}`,
        );
      }
      const b = ttft.variants[1]!;
      const [wantA, wantB] = [ref.A, ref.B];
      if (wantA.users === null || wantB.users === null) {
        // Too few effective users for a p95 interval (team): the estimate is given, the SE is not.
        assert.equal(b.absolute!.stdError, null, s.value);
        assert.ok(
          s.warnings.some((w) => /too few units/.test(w)),
          JSON.stringify(s.warnings),
        );
        continue;
      }
      const users = Math.hypot(wantA.users, wantB.users);
      const calls = Math.hypot(wantA.calls!, wantB.calls!);
      const se = b.absolute!.stdError;
      t.diagnostic(
        `${s.value}/ttft p95 SE ${se.toFixed(3)}: numpy with effective users ${users.toFixed(3)} (${(se / users).toFixed(3)}×), per call ${calls.toFixed(3)} (${(se / calls).toFixed(2)}×)`,
      );
      // The in-bin reading of the sketch against the rank interval on raw values: within 15%; and far from
      // the per-call units' interval, which is narrower by about √(values / effective users).
      assert.ok(
        Math.abs(se / users - 1) < 0.15,
        `${s.value} p95 SE ${se} vs numpy ${users} (effective users)`,
      );
      assert.ok(se / calls > 1.5, `${s.value} p95 SE ${se} vs numpy per call ${calls}`);
    }
  });

  test('rebuilding the rollups from the raw rows gives the same segments', async () => {
    const live = await analysis(slug, 'segment=plan&correction=none');
    const found = await runtime.store.findExperiment(slug);
    assert.ok(found);
    await runtime.store.rebuildRollups(found.id);
    const rebuilt = await analysis(slug, 'segment=plan&correction=none');
    assertSameAnswer(rebuilt, live);
    assertMatchesReference(rebuilt.segments);
  });

  test('a random experiment stays per call in its segments, quantiles included', async () => {
    const s = (
      await api.createExperiment({
        assignment: 'random',
        segments: ['plan'],
        metrics: [{ name: 'ttft', direction: 'decrease', statistic: 'p95' }],
      })
    ).slug;
    await api.logMany(
      s,
      Array.from({ length: 900 }, (_, i) => ({
        variantKey: i % 2 ? 'B' : 'A',
        userId: `user-${i % 7}`,
        context: { plan: i % 3 ? 'pro' : 'free' },
        metrics: { ttft: 100 + ((i * 37) % 200) + i / 1000 },
      })),
    );
    const body = await analysis(s, 'segment=plan');
    for (const seg of body.segments) {
      assert.equal(seg.unit, 'call');
      const ttft = seg.metrics[0]!;
      assert.equal(ttft.unit, 'call');
      assert.equal(ttft.label, 'p95 of calls');
      assert.deepEqual(
        ttft.variants.map((v) => v.n),
        [seg.results.A, seg.results.B],
        'n counts calls',
      );
      assert.ok(ttft.variants.every((v) => typeof v.quantiles?.p95 === 'number'));
      assert.ok(typeof ttft.variants[1]!.absolute?.stdError === 'number', seg.value);
    }
  });
});
