// Cross-checks regression adjustment (src/stats/cuped.ts) against numpy and statsmodels on seeded raw data that
// python draws; src/stats sees only the sums. Per call (y = 1): the difference of adjusted arms is the treatment
// coefficient of OLS `x ~ arm + z` (statsmodels, to 1e-9), its standard error is compared with OLS's classical
// and HC1 ones, and every per-arm number with numpy on the raw arrays. Per user (repeat calls, a user effect, a
// covariate that is the user's pre-period total, 0 for new users): against a delta-method computation on the
// raw per-user arrays (np.cov of (x, y, z) and the gradient of x̄/ȳ) with θ from statsmodels' OLS of the
// linearized unit u = (x − R y)/ȳ on z with arm dummies. python3 with numpy and statsmodels is required.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { adjustedArmData, type CovariateMoments, compareArms, cupedAdjust } from '../src/stats/index.js';
import { assertAllFinite } from '../src/stats/test-helpers.js';

const TOLERANCE = 1e-9;

interface PerCall {
  seed: number;
  sizes: number[];
  /** Within-arm squared correlation of x and z in the population. */
  rho2: number;
  covariate: 'normal' | 'lognormal';
  /** Noise standard deviation multiplier per arm (unequal variances when not all 1). */
  noise: number[];
  effects: number[];
}
interface PerUser {
  seed: number;
  sizes: number[];
  /** Calls per user: 1 + Poisson(lambda), in the experiment and, independently, before it. */
  lambda: number;
  /** Share of users without a pre-period (covariate 0). */
  newUsers: number;
  userEffect: number;
  effects: number[];
}

const perCall: PerCall[] = [
  { seed: 1, sizes: [50, 50], rho2: 0.45, covariate: 'normal', noise: [1, 1], effects: [0, 0] },
  { seed: 2, sizes: [200, 300], rho2: 0.3, covariate: 'lognormal', noise: [1, 1.5], effects: [0, 0.2] },
  { seed: 3, sizes: [1000, 1000], rho2: 0.6, covariate: 'normal', noise: [1, 1], effects: [0, 0.1] },
  { seed: 4, sizes: [5000, 3000], rho2: 0.45, covariate: 'lognormal', noise: [1, 1], effects: [0, -0.05] },
  { seed: 5, sizes: [20000, 20000], rho2: 0.6, covariate: 'lognormal', noise: [1, 1], effects: [0, 0] },
  {
    seed: 6,
    sizes: [400, 500, 450],
    rho2: 0.45,
    covariate: 'normal',
    noise: [1, 1, 1],
    effects: [0, 0.3, 0],
  },
  { seed: 7, sizes: [3000, 3000], rho2: 0, covariate: 'normal', noise: [1, 1], effects: [0, 0.1] },
  {
    seed: 8,
    sizes: [800, 1200, 1000],
    rho2: 0.3,
    covariate: 'lognormal',
    noise: [2, 1, 1],
    effects: [0, 0, 1],
  },
  { seed: 9, sizes: [150, 120], rho2: 0.9, covariate: 'normal', noise: [1, 1], effects: [0, 0.5] },
  { seed: 10, sizes: [10000, 10000], rho2: 0.3, covariate: 'normal', noise: [1, 1], effects: [0, 0.02] },
];
const perUser: PerUser[] = [
  { seed: 21, sizes: [100, 120], lambda: 1, newUsers: 0.2, userEffect: 1, effects: [0, 0] },
  { seed: 22, sizes: [1000, 1000], lambda: 3, newUsers: 0.1, userEffect: 0.8, effects: [0, 0.1] },
  { seed: 23, sizes: [5000, 4000], lambda: 0.5, newUsers: 0.3, userEffect: 1.5, effects: [0, -0.1] },
  { seed: 24, sizes: [20000, 20000], lambda: 2, newUsers: 0.2, userEffect: 1, effects: [0, 0] },
  { seed: 25, sizes: [700, 800, 900], lambda: 5, newUsers: 0, userEffect: 0.5, effects: [0, 0.05, 0.1] },
  { seed: 26, sizes: [3000, 3000], lambda: 0, newUsers: 0.2, userEffect: 1, effects: [0, 0.2] },
];
/** Equal arms, so that the pooled reduction is exactly the squared pooled within-arm correlation. */
const reduction: PerCall[] = [0.3, 0.45, 0.6].map((rho2, i) => ({
  seed: 40 + i,
  sizes: [20000, 20000],
  rho2,
  covariate: i === 1 ? 'lognormal' : 'normal',
  noise: [1, 1],
  effects: [0, 0],
}));

const PYTHON = `
import json, sys, math
import numpy as np
import statsmodels.api as sm

data = json.load(sys.stdin)

def sums(x, y, z):
    return {'n': len(x), 'sumX': float(x.sum()), 'sumX2': float((x * x).sum()), 'sumY': float(y.sum()),
            'sumY2': float((y * y).sum()), 'sumXY': float((x * y).sum()), 'sumZ': float(z.sum()),
            'sumZ2': float((z * z).sum()), 'sumXZ': float((x * z).sum()), 'sumYZ': float((y * z).sum())}

def dummies(sizes):
    labels = np.concatenate([np.full(n, k) for k, n in enumerate(sizes)])
    return np.column_stack([(labels == k).astype(float) for k in range(1, len(sizes))])

def per_call(d):
    rng = np.random.default_rng(d['seed'])
    xs, zs = [], []
    for k, n in enumerate(d['sizes']):
        if d['covariate'] == 'normal':
            z, sd_z = rng.normal(5, 2, size=n), 2.0
        else:
            z = rng.lognormal(1.0, 0.6, size=n)
            sd_z = math.sqrt((math.exp(0.36) - 1) * math.exp(2 + 0.36))
        rho2 = d['rho2']
        beta = 1.0 if rho2 > 0 else 0.0
        sd_e = 1.0 if rho2 == 0 else beta * sd_z * math.sqrt((1 - rho2) / rho2)
        x = 10 + d['effects'][k] + beta * z + sd_e * d['noise'][k] * rng.normal(size=n)
        xs.append(x); zs.append(z)
    x, z = np.concatenate(xs), np.concatenate(zs)
    design = sm.add_constant(np.column_stack([dummies(d['sizes']), z]))
    ols = sm.OLS(x, design).fit()
    hc1 = sm.OLS(x, design).fit(cov_type='HC1')
    t = len(d['sizes']) - 1
    # numpy on the raw arrays: the pooled within-arm slope, adjusted means and variances (theta fixed).
    theta = sum(((a - a.mean()) * (b - b.mean())).sum() for a, b in zip(xs, zs)) / \\
        sum(((b - b.mean()) ** 2).sum() for b in zs)
    pooled_z = z.mean()
    arms = []
    for a, b in zip(xs, zs):
        n = len(a)
        arms.append({'estimate': float(a.mean() - theta * (b.mean() - pooled_z)),
                     'unadjusted': float(a.mean()),
                     'unadjustedVariance': float(a.var(ddof=1) / n),
                     'adjustedVariance': float((a - theta * b).var(ddof=1) / n)})
    sxz = sum(((a - a.mean()) * (b - b.mean())).sum() for a, b in zip(xs, zs))
    sxx = sum(((a - a.mean()) ** 2).sum() for a in xs)
    szz = sum(((b - b.mean()) ** 2).sum() for b in zs)
    return {'sums': [sums(a, np.ones(len(a)), b) for a, b in zip(xs, zs)], 'theta': float(theta),
            'covariateMean': float(pooled_z), 'arms': arms,
            'coef': [float(v) for v in ols.params[1:1 + t]], 'seClassical': [float(v) for v in ols.bse[1:1 + t]],
            'seHC1': [float(v) for v in hc1.bse[1:1 + t]], 'rho2Within': float(sxz ** 2 / (sxx * szz))}

def per_user(d):
    rng = np.random.default_rng(d['seed'])
    xs, ys, zs = [], [], []
    for k, n in enumerate(d['sizes']):
        level = rng.normal(0, d['userEffect'], size=n)
        y = 1 + rng.poisson(d['lambda'], size=n)
        pre = np.where(rng.random(n) < d['newUsers'], 0, 1 + rng.poisson(d['lambda'], size=n))
        value = lambda m, u: np.exp(1 + u + 0.5 * rng.normal(size=m)).sum()
        x = np.array([value(m, u) for m, u in zip(y, level)]) * (1 + d['effects'][k])
        z = np.array([value(m, u) if m > 0 else 0.0 for m, u in zip(pre, level)])
        xs.append(x); ys.append(y.astype(float)); zs.append(z)
    # theta: OLS of the linearized unit on the covariate with arm dummies (the pooled within-arm slope).
    us, stats_ = [], []
    for x, y, z in zip(xs, ys, zs):
        n = len(x)
        r = x.mean() / y.mean()
        us.append((x - r * y) / y.mean())
        cov = np.cov(np.vstack([x, y, z]), ddof=1) / n
        g = np.array([1 / y.mean(), -x.mean() / y.mean() ** 2, 0.0])
        stats_.append((r, float(g @ cov @ g), float(g @ cov[:, 2]), float(cov[2, 2]), z.mean()))
    design = sm.add_constant(np.column_stack([dummies(d['sizes']), np.concatenate(zs)]))
    theta = float(sm.OLS(np.concatenate(us), design).fit().params[-1])
    pooled_z = np.concatenate(zs).mean()
    arms = [{'estimate': float(r - theta * (mz - pooled_z)), 'unadjusted': float(r), 'unadjustedVariance': v,
             'adjustedVariance': v - 2 * theta * c + theta ** 2 * vz} for r, v, c, vz, mz in stats_]
    return {'sums': [sums(x, y, z) for x, y, z in zip(xs, ys, zs)], 'theta': theta,
            'covariateMean': float(pooled_z), 'arms': arms}

print(json.dumps({'perCall': [per_call(d) for d in data['perCall']],
                  'perUser': [per_user(d) for d in data['perUser']],
                  'reduction': [per_call(d) for d in data['reduction']]}))
`;

interface ArmReference {
  estimate: number;
  unadjusted: number;
  unadjustedVariance: number;
  adjustedVariance: number;
}
interface Reference {
  sums: CovariateMoments[];
  theta: number;
  covariateMean: number;
  arms: ArmReference[];
}
interface CallReference extends Reference {
  coef: number[];
  seClassical: number[];
  seHC1: number[];
  rho2Within: number;
}

/** The largest difference seen, relative to what each tolerance is relative to (reported at the end). */
let worst = 0;

function close(actual: number | null | undefined, expected: number, scale: number, what: string): void {
  assert.ok(typeof actual === 'number', `${what}: got ${actual}, python ${expected}`);
  const tolerance = TOLERANCE * Math.max(Math.abs(expected), scale);
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: got ${actual}, python ${expected}`);
  worst = Math.max(worst, Math.abs(actual - expected) / Math.max(Math.abs(expected), scale));
}

/** Every number of cupedAdjust against the raw-data reference. */
function matches(ref: Reference, what: string): ReturnType<typeof cupedAdjust> {
  const r = cupedAdjust(ref.sums);
  assert.deepEqual(r.warnings, [], what);
  assertAllFinite(r, what);
  assert.equal(r.adjusted, true, what);
  close(r.theta, ref.theta, 0, `${what} theta`);
  close(r.covariateMean, ref.covariateMean, 0, `${what} covariate mean`);
  let [unadjusted, adjusted] = [0, 0];
  ref.arms.forEach((e, i) => {
    const a = r.arms[i]!;
    const se = Math.sqrt(e.adjustedVariance);
    close(a.estimate, e.estimate, se, `${what} arm ${i} estimate`);
    close(a.unadjusted, e.unadjusted, se, `${what} arm ${i} unadjusted`);
    close(a.unadjustedVariance, e.unadjustedVariance, 0, `${what} arm ${i} unadjusted variance`);
    close(a.adjustedVariance, e.adjustedVariance, 0, `${what} arm ${i} adjusted variance`);
    close(a.stdError, se, 0, `${what} arm ${i} stdError`);
    close(
      a.varianceReduction,
      1 - e.adjustedVariance / e.unadjustedVariance,
      0,
      `${what} arm ${i} reduction`,
    );
    unadjusted += e.unadjustedVariance;
    adjusted += e.adjustedVariance;
  });
  close(r.varianceReduction, 1 - adjusted / unadjusted, 0, `${what} pooled reduction`);
  return r;
}

describe('regression adjustment (CUPED) agrees with statsmodels and numpy on raw data', () => {
  let ref: { perCall: CallReference[]; perUser: Reference[]; reduction: CallReference[] };

  before(() => {
    const run = spawnSync('python3', ['-c', PYTHON], {
      input: JSON.stringify({ perCall, perUser, reduction }),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error || run.status !== 0) {
      assert.fail(`python3 with numpy and statsmodels is required: ${run.error?.message ?? run.stderr}`);
    }
    ref = JSON.parse(run.stdout);
  });

  it('per call: θ, adjusted means and variances as numpy computes them on the raw arrays (1e-9)', () => {
    for (const [i, d] of perCall.entries()) matches(ref.perCall[i]!, `per-call dataset ${i} (${d.sizes})`);
  });

  it('per call: adjusted differences = the OLS `x ~ arm + z` treatment coefficients (1e-9); SE near OLS', (t) => {
    let worst = { classical: 0, hc1: 0 };
    perCall.forEach((d, i) => {
      const e = ref.perCall[i]!;
      const r = cupedAdjust(e.sums);
      const control = adjustedArmData(r.arms[0]!)!;
      for (let k = 1; k < d.sizes.length; k++) {
        const what = `dataset ${i} arm ${k}`;
        const c = compareArms(control, adjustedArmData(r.arms[k]!)!, {
          method: 'frequentist',
          alpha: 0.05,
          sided: 'two',
        });
        const se = c.absolute.stdError!;
        close(c.absolute.estimate, e.coef[k - 1]!, se, `${what} coefficient`);
        const [classical, hc1] = [se / e.seClassical[k - 1]! - 1, se / e.seHC1[k - 1]! - 1];
        t.diagnostic(
          `${what} (n ${d.sizes}, ρ² ${d.rho2}, noise ${d.noise}): SE ${se.toPrecision(4)}, ` +
            `vs classical ${(100 * classical).toFixed(2)}%, vs HC1 ${(100 * hc1).toFixed(2)}%`,
        );
        worst = {
          classical: Math.max(worst.classical, Math.abs(classical)),
          hc1: Math.max(worst.hc1, Math.abs(hc1)),
        };
        // Equal noise: the three agree up to n − 3 vs n − 1 and θ's own uncertainty, O(1/n). Unequal noise
        // per arm: the classical SE pools the variances (wrong), HC1 and ours do not.
        const equalNoise = d.noise.every((v) => v === d.noise[0]);
        if (equalNoise) assert.ok(Math.abs(classical) <= 0.03, `${what}: vs classical ${classical}`);
        assert.ok(Math.abs(hc1) <= 0.03, `${what}: vs HC1 ${hc1}`);
      }
    });
    t.diagnostic(
      `largest SE difference: classical ${(100 * worst.classical).toFixed(2)}%, HC1 ${(100 * worst.hc1).toFixed(2)}%`,
    );
  });

  it('per user: θ, adjusted ratios and delta-method variances as numpy/statsmodels compute them (1e-9)', (t) => {
    perUser.forEach((d, i) => {
      const r = matches(ref.perUser[i]!, `per-user dataset ${i} (${d.sizes})`);
      t.diagnostic(`per-user dataset ${i}: variance reduction ${(100 * r.varianceReduction!).toFixed(1)}%`);
    });
  });

  it('variance reduction = the squared within-arm correlation (equal arms; 1e-9) ≈ ρ² of the population', (t) => {
    reduction.forEach((d, i) => {
      const e = ref.reduction[i]!;
      const r = cupedAdjust(e.sums);
      close(r.varianceReduction, e.rho2Within, 0, `ρ² ${d.rho2}`);
      t.diagnostic(`population ρ² ${d.rho2} (${d.covariate}): reduction ${r.varianceReduction!.toFixed(4)}`);
      // n = 40,000: the sample ρ² has a standard error of about 2ρ(1 − ρ²)/√n < 0.005.
      assert.ok(Math.abs(r.varianceReduction! - d.rho2) <= 0.02, `ρ² ${d.rho2}: ${r.varianceReduction}`);
    });
    t.diagnostic(`largest relative difference from python over all checks: ${worst.toExponential(1)}`);
  });
});
