// Per-user units through the API (issue 15, ADR 0018): in a sticky experiment GET analysis reads each metric
// per user, as a ratio Σx / Σy analysed with the delta method, n counting users. The test logs seeded raw
// data (several calls per user, late feedback on results and on assignments, some of it corrected), then
// numpy/scipy compute from those raw values, with each corrected feedback at its final value, the per-user
// sums, the ratio, its delta-method variance (np.cov and the gradient), the difference's standard error and
// the Welch p-value with degrees of freedom over users and Fieller's interval of the lift (proportions: the
// score test and its intervals on Rao–Scott effective counts, statsmodels). The service sees only its write-time rollups; both
// must agree to 1e-9 relative, and again after the rollups are rebuilt from the raw rows.
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
const USERS = 300;

const random = seededRandom(20_261_123);
/** A standard normal draw (Box–Muller). */
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

const PYTHON = `
import json, sys, math
import numpy as np
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep

data = json.load(sys.stdin)

def arm(units):
    # One unit per user with values: x the sum of its values, y how many it has.
    x = np.array([sum(u) for u in units if len(u) > 0], dtype=float)
    y = np.array([len(u) for u in units if len(u) > 0], dtype=float)
    n = len(x)
    mx, my = x.mean(), y.mean()
    mean_cov = np.cov(np.vstack([x, y]), ddof=1) / n
    grad = np.array([1 / my, -mx / my ** 2])
    var_r = float(grad @ mean_cov @ grad)
    return n, float(x.sum() / y.sum()), var_r

def fieller(rc, vc, rt, vt, c):
    # {rho : (rt - rho rc)^2 <= c^2 (vt + rho^2 vc)}, solved as a quadratic in rho; the lift is rho - 1.
    a, b, k = rc * rc - c * c * vc, rt * rc, rt * rt - c * c * vt
    disc = math.sqrt(b * b - a * k)
    return [(b - disc) / a - 1, (b + disc) / a - 1]

def metric(m):
    nc, rc, vc = arm(m['A'])
    nt, rt, vt = arm(m['B'])
    dof = (vt + vc) ** 2 / (vt ** 2 / (nt - 1) + vc ** 2 / (nc - 1))
    welch = stats.ttest_ind_from_stats(rt, math.sqrt(vt * nt), nt, rc, math.sqrt(vc * nc), nc, equal_var=False)
    lift = (rt - rc) / abs(rc)
    lift_se = math.sqrt(vt / rc ** 2 + vc * rt ** 2 / rc ** 4)
    values = [v for arm_ in (m['A'], m['B']) for u in arm_ for v in u]
    if all(v in (0, 1) for v in values):
        # A proportion per user: Rao-Scott effective counts (the design effect, at least 1), then the
        # Miettinen-Nurminen score test and its intervals (statsmodels) on those counts.
        def effective(units, var_r):
            s = sum(sum(u) for u in units); n = sum(len(u) for u in units); p = s / n
            deff = max(1.0, var_r / (p * (1 - p) / n))
            return s / deff, n / deff
        sc, ncalls = effective(m['A'], vc)
        st, tcalls = effective(m['B'], vt)
        p = float(test_proportions_2indep(st, tcalls, sc, ncalls, method='score', compare='diff', correction=True).pvalue)
        diff_ci = [float(x) for x in confint_proportions_2indep(st, tcalls, sc, ncalls, method='score', compare='diff', correction=True)]
        ratio_ci = [float(x) - 1 for x in confint_proportions_2indep(st, tcalls, sc, ncalls, method='score', compare='ratio', correction=True)]
        absolute_ci, relative_ci = diff_ci, ratio_ci
    else:
        p = float(welch.pvalue)
        c = stats.t.ppf(0.975, dof)
        absolute_ci = [rt - rc - c * math.sqrt(vt + vc), rt - rc + c * math.sqrt(vt + vc)]
        relative_ci = fieller(rc, vc, rt, vt, c)
    return {
        'A': {'n': nc, 'mean': rc, 'stdDev': math.sqrt(vc * nc)},
        'B': {'n': nt, 'mean': rt, 'stdDev': math.sqrt(vt * nt)},
        # One test decides both scales: the lift's p-value is the difference's, its interval the same test's.
        'absolute': {'estimate': rt - rc, 'stdError': math.sqrt(vt + vc), 'pValue': p, 'ci': absolute_ci},
        'relative': {'estimate': lift, 'stdError': lift_se, 'pValue': p, 'ci': relative_ci},
    }

print(json.dumps({name: metric(m) for name, m in data.items()}))
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
  ci: [number, number];
}
type Reference = Record<string, { A: Reading; B: Reading; absolute: EffectReading; relative: EffectReading }>;

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

describe('per-user units agree with numpy/scipy on the raw data logged', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  let reference: Reference;
  /** Per metric, per variant, per user: each target's final value (a correction overwrites). */
  const raw = new Map<string, { A: Map<string, Map<string, number>>; B: Map<string, Map<string, number>> }>();

  const record = (metric: string, variant: 'A' | 'B', user: string, target: string, value: number) => {
    if (!raw.has(metric)) raw.set(metric, { A: new Map(), B: new Map() });
    const users = raw.get(metric)![variant];
    if (!users.has(user)) users.set(user, new Map());
    users.get(user)!.set(target, value);
  };

  // Uncorrected: the intervals compared are the test's own at 1 − alpha (BH would widen the undeclared ones).
  const analysis = async (s: string, query = '?correction=none') => {
    const res = await api.get(`/experiment/${s}/analysis${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  async function feedback(body: unknown): Promise<void> {
    const res = await api.post(`/experiment/${slug}/feedback`, body);
    assert.equal(res.statusCode, 200, res.body);
  }

  /** Sends bodies `concurrency` at a time (the order within a round does not matter). */
  async function sendAll(bodies: unknown[], concurrency = 8): Promise<void> {
    for (let i = 0; i < bodies.length; i += concurrency) {
      await Promise.all(bodies.slice(i, i + concurrency).map(feedback));
    }
  }

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'units-scipy');
    api = runtime.api;
    // A fixed slug (the sticky hash's seed): the same users land in the same variants on every run.
    slug = (await api.createExperiment({ slug: 'units-scipy', assignment: 'sticky' })).slug;

    // Calls: 1 to 6 per user; B is faster and succeeds more often. Each call is logged with its user.
    const results: Array<{ user: string; variant: 'A' | 'B'; body: Record<string, unknown> }> = [];
    const assignments: Array<{ user: string; variant: 'A' | 'B'; assignmentId: string }> = [];
    for (let i = 0; i < USERS; i++) {
      const user = `user-${i}`;
      const { variant, assignmentId } = await api.assign(slug, { userId: user });
      assert.ok(variant === 'A' || variant === 'B');
      assignments.push({ user, variant, assignmentId });
      const userSpeed = 0.4 * normal(); // calls of one user are correlated: that is why the unit matters
      const calls = 1 + Math.floor(random() * 6);
      for (let c = 0; c < calls; c++) {
        const latency = Math.round(Math.exp(6.5 - (variant === 'B' ? 0.4 : 0) + userSpeed + 0.5 * normal()));
        const success = random() < (variant === 'B' ? 0.72 : 0.6);
        // A fifth of the calls carry their rating inline; others may get one later, as feedback.
        const inline = random() < 0.2 ? { rating: 1 + Math.floor(random() * 5) } : {};
        results.push({
          user,
          variant,
          body: { variantKey: variant, userId: user, assignmentId, metrics: { latency, success, ...inline } },
        });
      }
    }
    const logIds: string[] = [];
    for (let i = 0; i < results.length; i += 1000) {
      logIds.push(
        ...(await api.logMany(
          slug,
          results.slice(i, i + 1000).map((r) => r.body),
        )),
      );
    }
    results.forEach((r, i) => {
      const m = r.body.metrics as { latency: number; success: boolean; rating?: number };
      record('latency', r.variant, r.user, logIds[i]!, m.latency);
      record('success', r.variant, r.user, logIds[i]!, m.success ? 1 : 0);
      if (m.rating !== undefined) record('rating', r.variant, r.user, logIds[i]!, m.rating);
    });

    // Late feedback: a rating on about half the results and a thumbs-up on about half the assignments,
    // then corrections of a third of each (which replace, so only the final values are in `raw`).
    const ratings = results.flatMap((r, i) =>
      !('rating' in (r.body.metrics as object)) && random() < 0.5
        ? [{ ...r, logId: logIds[i]!, rating: 1 + Math.floor(random() * 5) }]
        : [],
    );
    const thumbs = assignments.flatMap((a) => (random() < 0.5 ? [{ ...a, up: random() < 0.5 }] : []));
    await sendAll([
      ...ratings.map((r) => ({ logId: r.logId, metrics: { rating: r.rating } })),
      ...thumbs.map((t) => ({ assignmentId: t.assignmentId, metrics: { thumbs_up: t.up } })),
    ]);
    const corrected = ratings.filter(() => random() < 0.33);
    const flipped = thumbs.filter(() => random() < 0.33);
    for (const r of corrected) r.rating = r.rating === 5 ? 1 : r.rating + 1;
    for (const t of flipped) t.up = !t.up;
    await sendAll([
      ...corrected.map((r) => ({ logId: r.logId, metrics: { rating: r.rating } })),
      ...flipped.map((t) => ({ assignmentId: t.assignmentId, metrics: { thumbs_up: t.up } })),
    ]);
    for (const r of ratings) record('rating', r.variant, r.user, `l:${r.logId}`, r.rating);
    for (const t of thumbs) record('thumbs_up', t.variant, t.user, `a:${t.assignmentId}`, t.up ? 1 : 0);
    assert.ok(corrected.length > 50 && flipped.length > 10, 'enough corrections to matter');

    const input = Object.fromEntries(
      [...raw].map(([metric, arms]) => [
        metric,
        {
          A: [...arms.A.values()].map((u) => [...u.values()]),
          B: [...arms.B.values()].map((u) => [...u.values()]),
        },
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

  /** Checks every metric of an analysis against the numpy/scipy reference. */
  function assertMatchesReference(body: {
    metrics: Array<{ name: string; unit: string; kind: string; variants: Array<Record<string, unknown>> }>;
  }): void {
    assert.deepEqual(
      body.metrics.map((m) => m.name),
      ['latency', 'rating', 'success', 'thumbs_up'],
    );
    for (const m of body.metrics) {
      const ref = reference[m.name]!;
      assert.equal(m.unit, 'user', `${m.name} is analysed per user`);
      const [a, b] = m.variants as [Record<string, unknown>, Record<string, EffectReading>];
      for (const [key, got] of [
        ['A', a],
        ['B', b],
      ] as const) {
        const want = ref[key];
        assert.equal(got.n, want.n, `${m.name}/${key}: n counts users`);
        close(got.mean, want.mean, 0, `${m.name}/${key} mean Σx/Σy`);
        close(got.stdDev, want.stdDev, 0, `${m.name}/${key} stdDev = sqrt(n Var(R))`);
      }
      for (const effect of ['absolute', 'relative'] as const) {
        const want = ref[effect];
        const got = b[effect]!;
        close(got.estimate, want.estimate, want.stdError, `${m.name} ${effect} estimate`);
        close(got.stdError, want.stdError, 0, `${m.name} ${effect} stdError`);
        close(
          got.pValue,
          want.pValue,
          0,
          `${m.name} ${effect} p (Welch, dof over users; score for proportions)`,
        );
        // statsmodels' ratio bounds stop short by up to 1e-5 relative (its root search); the rest to 1e-9.
        const loose = effect === 'relative' && m.kind === 'proportion' ? 1e-5 : TOLERANCE;
        for (const j of [0, 1]) {
          const [x, y] = [got.ci[j]!, want.ci[j]!];
          assert.ok(
            Math.abs(x - y) <= loose * Math.max(Math.abs(y), 1e-3),
            `${m.name} ${effect} ci: ${got.ci} vs ${want.ci}`,
          );
        }
      }
    }
  }

  test('a sticky experiment is analysed per user: n = users, the ratio, the delta-method variance and Welch p match scipy', async () => {
    const body = await analysis(slug);
    assert.equal(body.unit, 'user');
    assert.deepEqual(body.warnings, []);
    assertMatchesReference(body);
    const users = body.metrics.find((m: { name: string }) => m.name === 'latency').variants;
    assert.equal(users[0].n + users[1].n, USERS, 'every user is one unit of latency');
    // The effect is large enough to be found per user, where the per-call variance would understate it.
    assert.equal(users[1].significant, true);
  });

  test('rebuilding the rollups from the raw rows gives the same answer', async () => {
    const live = await analysis(slug);
    const found = await runtime.store.findExperiment(slug);
    assert.ok(found);
    await runtime.store.rebuildRollups(found.id);
    const rebuilt = await analysis(slug);
    assertSameAnswer(rebuilt, live);
    assertMatchesReference(rebuilt);
  });

  test('values without a userId in a sticky experiment are analysed per call, with a warning', async () => {
    const mixed = (await api.createExperiment({ assignment: 'sticky' })).slug;
    const results = Array.from({ length: 40 }, (_, i) => ({
      variantKey: i % 2 === 0 ? 'A' : 'B',
      // latency: every fourth result has no user; tokens: only results with a user have it.
      userId: i % 4 === 3 ? undefined : `user-${i % 10}`,
      metrics: i % 4 === 3 ? { latency: 100 + i } : { latency: 100 + i, tokens: i },
    }));
    await api.logMany(mixed, results);
    const body = await analysis(mixed);
    const latency = body.metrics.find((m: { name: string }) => m.name === 'latency');
    const tokens = body.metrics.find((m: { name: string }) => m.name === 'tokens');
    assert.equal(latency.unit, 'call');
    assert.deepEqual(
      latency.variants.map((v: { n: number }) => v.n),
      [20, 20],
      'n counts calls',
    );
    const callsA = results.filter((r) => r.variantKey === 'A').map((r) => r.metrics.latency);
    close(latency.variants[0].mean, callsA.reduce((a, b) => a + b, 0) / callsA.length, 0, 'per-call mean');
    assert.ok(
      body.warnings.some((w: string) => /^latency: 10 of 40 values have no user's unit/.test(w)),
      JSON.stringify(body.warnings),
    );
    assert.equal(tokens.unit, 'user', 'a metric whose values all have a user stays per user');
    assert.deepEqual(
      tokens.variants.map((v: { n: number }) => v.n),
      [5, 5],
      'users 0, 2, 4, 6, 8 logged A; 1, 3, 5, 7, 9 logged B',
    );
    assert.equal(body.unit, 'call', 'the answer is per user only when every metric is');
  });

  test('a random experiment stays per call, even with userIds', async () => {
    const random = (await api.createExperiment({ assignment: 'random' })).slug;
    await api.logMany(
      random,
      Array.from({ length: 30 }, (_, i) => ({
        variantKey: i % 3 === 0 ? 'A' : 'B',
        userId: `user-${i % 4}`,
        metrics: { latency: i },
      })),
    );
    const body = await analysis(random);
    assert.equal(body.unit, 'call');
    assert.equal(body.metrics[0].unit, 'call');
    assert.deepEqual(
      body.metrics[0].variants.map((v: { n: number }) => v.n),
      [10, 20],
    );
    assert.deepEqual(body.warnings, []);
  });
});
