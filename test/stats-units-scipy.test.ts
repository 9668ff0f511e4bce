// Cross-checks ratio (per-unit) metrics against numpy and scipy: python3 draws seeded raw per-user data, computes
// each user's x (sum of values) and y (number of observations), the sums src/stats takes, and, from the raw
// per-user arrays, the delta-method variances (np.cov and the gradient of the ratio, the difference and the
// lift) and the Welch p-values (scipy). src/stats sees only the sums. Also checks unitsForPower (written out
// again in python: scipy.stats.norm, chi2.ppf, statsmodels' Wilson interval, a bounded search for the rate)
// and chiSquareQuantile against scipy. Tolerance: 1e-9 relative, as in test/stats-scipy.test.ts (estimates
// and bounds against max(|value|, standard error)). python3 with numpy, scipy and statsmodels is required:
// the test fails, loudly, without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import {
  bayesianCompare,
  chiSquareQuantile,
  compareMeans,
  type RatioMoments,
  type Sided,
  summarizeArm,
  unitsForPower,
} from '../src/stats/index.js';
import { seededRandom } from './helpers/random.js';

const TOLERANCE = 1e-9;

const random = seededRandom(20_250_115);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const logUniform = (a: number, b: number) => Math.exp(Math.log(a) + (Math.log(b) - Math.log(a)) * random());

/** How python draws one dataset: units per arm, observations per unit, values per observation. */
interface Dataset {
  seed: number;
  kind: 'boolean' | 'numeric';
  nControl: number;
  nTreatment: number;
  /** Observations per unit: 1 + Poisson(lambda). */
  lambda: number;
  /** Boolean: success probability per observation; numeric: lognormal location. */
  level: number;
  /** Treatment's level relative to the control's. */
  lift: number;
  sided: Sided;
  alpha: number;
}

const datasets: Dataset[] = Array.from({ length: 24 }, (_, i) => {
  const kind = i % 2 === 0 ? 'boolean' : 'numeric';
  return {
    seed: 1000 + i,
    kind,
    // Small boolean arms could have no success at all (a ratio of 0, no lift).
    nControl: Math.round(logUniform(kind === 'boolean' ? 60 : 3, 20_000)),
    nTreatment: Math.round(logUniform(kind === 'boolean' ? 60 : 3, 20_000)),
    lambda: pick([0, 0.5, 3, 20]),
    level: kind === 'boolean' ? pick([0.1, 0.3, 0.5]) : pick([-1, 0, 2]),
    lift: pick([1, 1.02, 0.9, 1.3]),
    sided: pick(['two', 'greater', 'less'] as const),
    alpha: pick([0.01, 0.05, 0.1]),
  };
});

// Half means, half proportions; relative and absolute; most measured on some units (the pilot bounds), some
// taken as known. Drawn after the datasets, so that these do not change.
const powerCases = Array.from({ length: 40 }, (_, i) => {
  const kind = i % 2 === 0 ? ('mean' as const) : ('proportion' as const);
  const rate = logUniform(0.005, 0.95);
  return {
    kind,
    variance: kind === 'mean' ? logUniform(1e-3, 1e4) : rate * (1 - rate) * pick([1, 1, 1.7]),
    controlMean: kind === 'mean' ? pick([-1, 1]) * logUniform(0.01, 100) : rate,
    effect: pick(['relative', 'relative', 'absolute'] as const),
    mde: logUniform(0.001, 0.5),
    alpha: pick([0.01, 0.05, 0.1, 0.2]),
    power: pick([0.5, 0.8, 0.9, 0.95]),
    sided: pick(['two', 'greater', 'less'] as const),
    units: pick([null, 30, 200, 5000, 1e6]),
    confidence: pick([0.6, 0.8, 0.9]),
  };
});
const chiSquarePoints = Array.from({ length: 20 }, () => ({
  p: pick([1e-12, 0.01, 0.2, 0.5, 0.8, 0.99]),
  dof: pick([1, 3.5, 29, 199, 4999]) * pick([1, 1, 200]),
}));

const PYTHON = `
import json, sys, math
import numpy as np
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

data = json.load(sys.stdin)

def draw(rng, n, d, level):
    # Per unit: y observations, x the sum of their values.
    y = 1 + rng.poisson(d['lambda'], size=n)
    if d['kind'] == 'boolean':
        x = rng.binomial(y, min(level, 0.95))
    else:
        x = np.array([rng.lognormal(level, 1.0, size=k).sum() for k in y])
    return x.astype(float), y.astype(float)

def ratio(x, y):
    n = len(x)
    mx, my = x.mean(), y.mean()
    mean_cov = np.cov(np.vstack([x, y]), ddof=1) / n      # covariance of (mean x, mean y)
    grad = np.array([1 / my, -mx / my ** 2])            # gradient of mx / my
    var_r = float(grad @ mean_cov @ grad)
    sums = {'n': n, 'sumX': float(x.sum()), 'sumX2': float((x * x).sum()), 'sumY': float(y.sum()),
            'sumY2': float((y * y).sum()), 'sumXY': float((x * y).sum())}
    return sums, float(mx / my), var_r

def dataset(d):
    rng = np.random.default_rng(d['seed'])
    base = d['level']
    treated = d['level'] * d['lift'] if d['kind'] == 'boolean' else d['level'] + math.log(d['lift'])
    xc, yc = draw(rng, d['nControl'], d, base)
    xt, yt = draw(rng, d['nTreatment'], d, treated)
    sc, rc, vc = ratio(xc, yc)
    st, rt, vt = ratio(xt, yt)
    nc, nt = len(xc), len(xt)
    dof = (vt + vc) ** 2 / (vt ** 2 / (nt - 1) + vc ** 2 / (nc - 1))
    alternative = {'two': 'two-sided', 'greater': 'greater', 'less': 'less'}[d['sided']]
    # Welch on the ratios, with each arm's per-unit standard deviation sqrt(n Var(R)).
    welch = stats.ttest_ind_from_stats(rt, math.sqrt(vt * nt), nt, rc, math.sqrt(vc * nc), nc,
                                       equal_var=False, alternative=alternative)
    # Lift (rt - rc) / |rc|: gradient with respect to (rt, rc), the arms independent.
    lift = (rt - rc) / abs(rc)
    g = np.array([1 / abs(rc), -rt / (rc * abs(rc))])
    lift_var = float(g[0] ** 2 * vt + g[1] ** 2 * vc)
    tt = lift / math.sqrt(lift_var)
    lift_p = {'two': 2 * stats.t.sf(abs(tt), dof), 'greater': stats.t.sf(tt, dof),
              'less': stats.t.cdf(tt, dof)}[d['sided']]
    q = stats.t.ppf(1 - d['alpha'] / 2 if d['sided'] == 'two' else 1 - d['alpha'], dof)
    return {'control': sc, 'treatment': st, 'ratio': [rc, rt], 'varRatio': [vc, vt], 'dof': dof,
            'absolute': {'estimate': rt - rc, 'stdError': math.sqrt(vt + vc), 'pValue': float(welch.pvalue),
                         'halfWidth': float(q * math.sqrt(vt + vc))},
            'relative': {'estimate': lift, 'stdError': math.sqrt(lift_var), 'pValue': float(lift_p),
                         'halfWidth': float(q * math.sqrt(lift_var))},
            'chanceToWin': float(stats.norm.sf(0, loc=lift, scale=math.sqrt(lift_var)))}

def power(c):
    # Written from docs/statistics.md, not from src/stats/power.ts: the difference's variance v_C + v_T, read
    # at the pilot's one-sided bounds when units are given.
    a = c['alpha'] / 2 if c['sided'] == 'two' else c['alpha']
    z = stats.norm.isf(a) + stats.norm.ppf(c['power'])
    units, gamma, mde, v, m = c['units'], c['confidence'], c['mde'], c['variance'], c['controlMean']
    zg = stats.norm.ppf(gamma)
    if c['kind'] == 'mean':
        vu = v if units is None else v * (units - 1) / stats.chi2.ppf(1 - gamma, units - 1)
        if c['effect'] == 'absolute':
            return z ** 2 * 2 * vu / mde ** 2
        size = abs(m) - (0 if units is None else zg * math.sqrt(v / units))
        if size <= 0:
            return None
        away = c['sided'] == 'two' or (c['sided'] == 'greater') == (m > 0)
        return z ** 2 * (1 + ((1 + mde) ** 2 if away else 1)) * vu / (mde * size) ** 2
    design = v / (m * (1 - m))
    if units is None:
        lo = hi = m
    else:
        n_eff = units / design
        lo, hi = proportion_confint(m * n_eff, n_eff, alpha=2 * (1 - gamma), method='wilson')
    signs = {'two': [1, -1], 'greater': [1], 'less': [-1]}[c['sided']]
    best = None
    for sign in signs:
        def need(q):
            delta = mde * q if c['effect'] == 'relative' else mde
            shifted = q + sign * delta
            if not (0 <= shifted <= 1):
                return None
            return z ** 2 * design * (q * (1 - q) + shifted * (1 - shifted)) / delta ** 2
        points = [lo, hi]
        if hi > lo:
            opt = optimize.minimize_scalar(lambda q: -(need(q) or 0), bounds=(lo, hi), method='bounded',
                                           options={'xatol': 1e-13})
            points.append(float(opt.x))
        for q in points:
            n = need(q)
            if n is not None and (best is None or n > best):
                best = n
    return best

print(json.dumps({'datasets': [dataset(d) for d in data['datasets']],
                  'power': [power(c) for c in data['power']],
                  'chiSquare': [float(stats.chi2.ppf(c['p'], c['dof'])) for c in data['chiSquare']]}))
`;

interface Effect {
  estimate: number;
  stdError: number;
  pValue: number;
  halfWidth: number;
}
interface Reference {
  datasets: Array<{
    control: RatioMoments;
    treatment: RatioMoments;
    ratio: [number, number];
    varRatio: [number, number];
    dof: number;
    absolute: Effect;
    relative: Effect;
    chanceToWin: number;
  }>;
  power: Array<number | null>;
  chiSquare: number[];
}

function close(actual: number | null | undefined, expected: number, scale: number, what: string): void {
  assert.ok(typeof actual === 'number', `${what}: got ${actual}, python ${expected}`);
  const tolerance = TOLERANCE * Math.max(Math.abs(expected), scale);
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: got ${actual}, python ${expected}`);
}
const relative = (actual: number | null | undefined, expected: number, what: string) =>
  close(actual, expected, 0, what);

describe('ratio metrics and power agree with numpy/scipy to 1e-9', () => {
  let ref: Reference;

  before(() => {
    const run = spawnSync('python3', ['-c', PYTHON], {
      input: JSON.stringify({ datasets, power: powerCases, chiSquare: chiSquarePoints }),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error || run.status !== 0) {
      assert.fail(
        `python3 with numpy and scipy is required for this test: ${run.error?.message ?? run.stderr}`,
      );
    }
    ref = JSON.parse(run.stdout) as Reference;
  });

  it('per arm: R = sumX / sumY and variance / n = the delta-method Var(R) from the raw per-user data', () => {
    datasets.forEach((d, i) => {
      const r = ref.datasets[i]!;
      for (const [side, arm] of [r.control, r.treatment].entries()) {
        const what = `dataset ${i} (${d.kind}, n ${arm.n}) arm ${side}`;
        const s = summarizeArm(arm);
        assert.deepEqual(s.warnings, [], what);
        assert.equal(s.n, arm.n, `${what}: n counts units`);
        relative(s.mean, r.ratio[side]!, `${what} mean`);
        relative(s.variance! / arm.n, r.varRatio[side]!, `${what} Var(R)`);
      }
    });
  });

  it('Welch on ratios: estimate, standard error, dof over units, p-value, interval (difference and lift)', () => {
    datasets.forEach((d, i) => {
      const r = ref.datasets[i]!;
      for (const effect of ['absolute', 'relative'] as const) {
        const what = `dataset ${i} (${d.kind}, ${effect}, ${d.sided})`;
        const ours = compareMeans(r.control, r.treatment, { alpha: d.alpha, sided: d.sided, effect });
        const e = r[effect];
        assert.deepEqual(ours.warnings, [], what);
        close(ours.estimate, e.estimate, e.stdError, `${what} estimate`);
        relative(ours.stdError, e.stdError, `${what} stdError`);
        relative(ours.dof, r.dof, `${what} dof`);
        relative(ours.pValue, e.pValue, `${what} pValue`);
        const [lower, upper] = ours.ci;
        if (d.sided !== 'less') close(lower, e.estimate - e.halfWidth, e.stdError, `${what} lower`);
        if (d.sided !== 'greater') close(upper, e.estimate + e.halfWidth, e.stdError, `${what} upper`);
      }
    });
  });

  it('Bayesian on ratios: the lift posterior’s chance to win', () => {
    datasets.forEach((d, i) => {
      const r = ref.datasets[i]!;
      const ours = bayesianCompare(r.control, r.treatment, { alpha: d.alpha });
      relative(ours.chanceToWin, r.chanceToWin, `dataset ${i} chanceToWin`);
    });
  });

  it('chiSquareQuantile (the variance bound): scipy.stats.chi2.ppf', () => {
    chiSquarePoints.forEach((c, i) => {
      relative(chiSquareQuantile(c.p, c.dof), ref.chiSquare[i]!, `point ${i} (p ${c.p}, dof ${c.dof})`);
    });
  });

  it('unitsForPower: (z_{1-a} + z_power)^2 (v_C + v_T) / delta^2 at the pilot bounds, rounded up', (t) => {
    let planned = 0;
    powerCases.forEach((c, i) => {
      const exact = ref.power[i]!;
      const ours = unitsForPower(c);
      if (exact === null) {
        assert.equal(ours, null, `case ${i}: no plan in python`);
        return;
      }
      planned++;
      // The ceiling of a value within 1e-9 relative of scipy's (either integer when that is one).
      assert.ok(
        ours !== null &&
          Number.isInteger(ours) &&
          ours >= exact * (1 - TOLERANCE) &&
          ours - 1 < exact * (1 + TOLERANCE),
        `case ${i} (${JSON.stringify(c)}): got ${ours}, python ${exact}`,
      );
    });
    t.diagnostic(`${planned} of ${powerCases.length} cases planned; the others have no plan in either`);
    assert.ok(planned >= 30, `${planned} of ${powerCases.length} cases planned`);
  });
});
