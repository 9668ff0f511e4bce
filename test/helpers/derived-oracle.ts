// Seeded agent calls with the metrics a ratio, a cap and a covariate read, and the python oracle that
// analyses them from the raw calls (numpy, scipy, statsmodels), for test/api-derived-oracles.test.ts.
// The oracle groups the calls into units itself (a call, or a user in sticky experiments: x = the sum of
// its values, true = 1, y = their count, the covariate z = the mean of its values, 0 without any).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { normal } from './traffic.js';

export interface Call {
  arm: 0 | 1;
  user: string;
  metrics: Record<string, number | boolean>;
}

/**
 * `users` users calling 1–5 times, each with a level `e` shared by their calls; a metric is missing from a
 * call now and then. Sticky: users alternate between A and B; otherwise each call draws its arm. B's cost and
 * latency are those of A times `lift` (default 10% and 3% lower); the latency grows with input_tokens (the
 * covariate), the cost is lognormal (σ about 1.1 over users and calls).
 */
export function drawCalls(
  random: () => number,
  users: number,
  sticky: boolean,
  lift = { cost: 0.9, latency: 0.97 },
): Call[] {
  const calls: Call[] = [];
  for (let u = 0; u < users; u++) {
    const e = normal(random);
    const n = 1 + Math.floor(random() * 5);
    for (let c = 0; c < n; c++) {
      const arm = (sticky ? u % 2 : random() < 0.5 ? 1 : 0) as 0 | 1;
      const tokens = Math.round(Math.exp(5.5 + 0.4 * e + 0.5 * normal(random)));
      const m: Record<string, number | boolean> = {};
      if (random() < 0.9) m.input_tokens = tokens;
      const latency = (300 + 1.5 * tokens) * Math.exp(0.2 * e + 0.15 * normal(random));
      if (random() < 0.95) m.latency_ms = latency * (arm === 1 ? lift.latency : 1);
      const cost = Math.exp(-5 + 0.6 * e + 0.9 * normal(random));
      if (random() < 0.9) m.cost_usd = cost * (arm === 1 ? lift.cost : 1);
      if (random() < 0.9) m.success = random() < 1 / (1 + Math.exp(-(0.4 + 0.6 * e)));
      if (random() < 0.95)
        m.output_tokens = Math.round(40 * Math.exp(0.5 * e) * (1 - random()) ** (-1 / 1.6));
      calls.push({ arm, user: `u${u}`, metrics: m });
    }
  }
  return calls;
}

const PYTHON = `
import json, sys, math
import numpy as np
from scipy import stats
import statsmodels.api as sm

GAMMA = 1.01 / 0.99  # a DDSketch bin's width: its values lie within this factor of each other

def units(calls, sticky, arm):
    # Per user (sticky) or per call: name -> the unit's values (true = 1).
    by = {}
    for i, (a, user, metrics) in enumerate(calls):
        if a != arm: continue
        u = by.setdefault(user if sticky else i, {})
        for k, v in metrics.items(): u.setdefault(k, []).append(float(v))
    return list(by.values())

def arrays(us, name, den=None, cov=None):
    # Ratio (den): units with either, x = Σ name, y = Σ den. Otherwise units with name, x = Σ, y = count,
    # z = the unit's mean of cov (0 without one).
    if den is not None: us = [u for u in us if name in u or den in u]
    else: us = [u for u in us if name in u]
    x = np.array([sum(u.get(name, [])) for u in us])
    y = np.array([sum(u.get(den, [])) if den else len(u[name]) for u in us], dtype=float)
    z = np.array([np.mean(u[cov]) if cov and cov in u else 0.0 for u in us])
    return x, y, z

def delta(x, y):
    # R = Σx/Σy, Var(R) = (s_xx − 2R s_xy + R² s_yy) / (n ȳ²) with sample (co)variances (n − 1).
    n = len(x); r = x.sum() / y.sum(); xb, yb = x.mean(), y.mean()
    sxx = ((x - xb) ** 2).sum() / (n - 1); syy = ((y - yb) ** 2).sum() / (n - 1)
    sxy = ((x - xb) * (y - yb)).sum() / (n - 1)
    return n, float(r), float((sxx - 2 * r * sxy + r * r * syy) / (n * yb * yb))

def fieller(rc, vc, rt, vt, c):
    a, b, k = rc * rc - c * c * vc, rt * rc, rt * rt - c * c * vt
    d = math.sqrt(b * b - a * k)
    return [(b - d) / a - 1, (b + d) / a - 1]

def compare(arms):
    # Welch's t with Welch-Satterthwaite dof over units; the lift's interval by Fieller at the same t.
    (nc, rc, vc), (nt, rt, vt) = arms
    dof = (vt + vc) ** 2 / (vt ** 2 / (nt - 1) + vc ** 2 / (nc - 1))
    se = math.sqrt(vt + vc); t = (rt - rc) / se
    p = float(2 * stats.t.sf(abs(t), dof)); c = float(stats.t.ppf(0.975, dof))
    return {'A': {'n': nc, 'mean': rc}, 'B': {'n': nt, 'mean': rt},
            'absolute': {'estimate': rt - rc, 'stdError': se, 'pValue': p, 'ci': [rt - rc - c * se, rt - rc + c * se]},
            'relative': {'estimate': (rt - rc) / abs(rc), 'stdError': math.sqrt(vt / rc ** 2 + vc * rt ** 2 / rc ** 4),
                         'pValue': p, 'ci': fieller(rc, vc, rt, vt, c)}}

def capped(arms, c, near):
    # x' = min(x, c y); a unit whose mean lies within a bin of c is capped when near is True, kept if False.
    out = []
    for x, y in arms:
        m = x / y
        cap = (m > c) if near is None else np.where(np.abs(np.log(m / c)) <= math.log(GAMMA), near, m > c)
        out.append(delta(np.where(cap, c * y, x), y))
    return out

def cap_report(arms, c):
    count = lambda f: [int(f(x / y).sum()) for x, y in arms]
    return {'units': count(lambda m: m > c), 'near': count(lambda m: np.abs(np.log(m / c)) <= math.log(GAMMA)),
            'exact': compare(capped(arms, c, None)), 'low': compare(capped(arms, c, False)),
            'high': compare(capped(arms, c, True))}

def cuped(xs, ys, zs):
    # theta: OLS of the linearized unit u = (x − R y)/ȳ on z with an arm dummy (the pooled within-arm slope);
    # each arm R − θ (z̄_arm − z̄), variance (θ fixed) Var(R) − 2θ Cov(R, z̄) + θ² Var(z̄).
    us = [(x - x.sum() / y.sum() * y) / y.mean() for x, y in zip(xs, ys)]
    arm = np.concatenate([np.full(len(x), k) for k, x in enumerate(xs)])
    z = np.concatenate(zs)
    theta = float(sm.OLS(np.concatenate(us), sm.add_constant(np.column_stack([arm, z]))).fit().params[-1])
    pooled = float(z.mean()); adjusted, plain = [], []
    for x, y, zz, u in zip(xs, ys, zs, us):
        n, r, v = delta(x, y)
        c = float(np.cov(u, zz, ddof=1)[0, 1] / n); vz = float(zz.var(ddof=1) / n)
        adjusted.append((n, r - theta * (zz.mean() - pooled), v - 2 * theta * c + theta ** 2 * vz)); plain.append((n, r, v))
    out = {'adjusted': compare(adjusted), 'unadjusted': compare(plain), 'theta': theta, 'covariateMean': pooled,
           'varianceReduction': 1 - sum(a[2] for a in adjusted) / sum(p[2] for p in plain)}
    if all((y == 1).all() for y in ys):
        # Per call: the treatment coefficient of OLS x ~ arm + z, its classical and HC1 standard errors, and
        # HC0's sandwich with the arm column centered instead of residualized on z (randomization: arm ⟂ z).
        design = sm.add_constant(np.column_stack([arm, z])); x = np.concatenate(xs)
        fit = sm.OLS(x, design).fit(); d = arm - arm.mean()
        out['ols'] = {'coef': float(fit.params[1]), 'classical': float(fit.bse[1]),
                      'hc1': float(sm.OLS(x, design).fit(cov_type='HC1').bse[1]),
                      'hc0Centered': float(math.sqrt((d * d * fit.resid ** 2).sum()) / (d * d).sum())}
    return out

def experiment(d):
    sticky = d['sticky']; arms = [units(d['calls'], sticky, k) for k in (0, 1)]
    ratio = [arrays(u, 'cost_usd', den='success') for u in arms]
    cost = [arrays(u, 'cost_usd')[:2] for u in arms]
    tokens = [arrays(u, 'output_tokens')[:2] for u in arms]
    latency = [arrays(u, 'latency_ms', cov='input_tokens') for u in arms]
    means = np.concatenate([x / y for x, y in tokens])
    return {'ratio': compare([delta(x, y) for x, y, _ in ratio]),
            'cost': cap_report(cost, d['costCap']),
            'tokens': {'percentile': float(np.percentile(means, 95)), **cap_report(tokens, d['tokensCap'])},
            'latency': cuped(*zip(*latency))}

print(json.dumps({k: experiment(d) for k, d in json.load(sys.stdin).items()}))
`;

export interface Effect {
  estimate: number;
  stdError: number;
  pValue: number;
  ci: [number, number];
}
export interface Comparison {
  A: { n: number; mean: number };
  B: { n: number; mean: number };
  absolute: Effect;
  relative: Effect;
}
export interface CapReference {
  /** Per arm: units whose mean is above the cap, and units within a bin (a factor 1.0202) of it. */
  units: [number, number];
  near: [number, number];
  /** Capped at c; with the units near c all kept (low) or all capped (high). */
  exact: Comparison;
  low: Comparison;
  high: Comparison;
}
export interface Reference {
  ratio: Comparison;
  cost: CapReference;
  tokens: CapReference & { percentile: number };
  latency: {
    adjusted: Comparison;
    unadjusted: Comparison;
    theta: number;
    covariateMean: number;
    varianceReduction: number;
    ols?: { coef: number; classical: number; hc1: number; hc0Centered: number };
  };
}

export interface OracleInput {
  sticky: boolean;
  calls: Call[];
  costCap: number;
  tokensCap: number;
}

/** Per experiment, what python computes from the raw calls (fails loudly without python3 and its libraries). */
export function oracle(input: Record<string, OracleInput>): Record<string, Reference> {
  const data = Object.fromEntries(
    Object.entries(input).map(([k, d]) => [
      k,
      { ...d, calls: d.calls.map((c) => [c.arm, c.user, c.metrics]) },
    ]),
  );
  const run = spawnSync('python3', ['-c', PYTHON], {
    input: JSON.stringify(data),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error || run.status !== 0) {
    assert.fail(`python3 with numpy, scipy and statsmodels is required: ${run.error?.message ?? run.stderr}`);
  }
  return JSON.parse(run.stdout);
}

/** The geometric middle of the widest gap between sorted positive values from quantile lo to hi. */
export function gapCap(values: number[], lo: number, hi: number): { cap: number; gap: number } {
  const sorted = values.filter((v) => v > 0).sort((a, b) => a - b);
  let best = { cap: Number.NaN, gap: 0 };
  for (let i = Math.floor(lo * sorted.length); i < Math.floor(hi * sorted.length); i++) {
    const gap = sorted[i + 1]! / sorted[i]!;
    if (gap > best.gap) best = { cap: Math.sqrt(sorted[i]! * sorted[i + 1]!), gap };
  }
  return best;
}
