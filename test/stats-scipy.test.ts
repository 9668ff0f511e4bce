// Cross-checks src/stats against scipy on seeded random inputs, computed in a single python3 subprocess.
//
// Tolerances (1e-9 throughout):
// - probabilities (p-values, cdf values, chance to win): relative, |a - b| <= 1e-9 |b|, so tail values such as
//   1e-150 must agree in their leading 9 digits, not merely both be "about 0";
// - estimates, interval bounds, risks and t statistics: |a - b| <= 1e-9 max(|b|, scale), where scale is the
//   standard error (bounds can sit near 0, where a relative comparison is meaningless);
// - quantiles and chi-square statistics: relative.
// python3 with scipy is required (CI has it): the test fails, loudly, without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import {
  adjustPValues,
  bayesianCompare,
  chiSquareSf,
  compareMeans,
  normalCdf,
  normalQuantile,
  type Sided,
  srmTest,
  studentTCdf,
  studentTQuantile,
} from '../src/stats/index.js';
import { seededRandom } from './helpers/random.js';

const TOLERANCE = 1e-9;

const random = seededRandom(20_240_611);
const uniform = (a: number, b: number) => a + (b - a) * random();
const logUniform = (a: number, b: number) => Math.exp(uniform(Math.log(a), Math.log(b)));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

type Arm = { n: number; sum: number; sumSquares: number } | { n: number; successes: number };
interface Case {
  control: Arm;
  treatment: Arm;
  alpha: number;
  sided: Sided;
  effect: 'absolute' | 'relative';
}

function randomArm(n: number, proportion: boolean, mean: number, sd: number): Arm {
  if (proportion) return { n, successes: Math.min(n - 1, Math.max(1, Math.round(n * mean))) };
  return { n, sum: n * mean, sumSquares: (n - 1) * sd * sd + n * mean * mean };
}

/** 50 comparisons: small to large arms, numeric and boolean metrics, t statistics from 0.05 to 35. */
const cases: Case[] = Array.from({ length: 50 }, () => {
  const proportion = random() < 0.3;
  const nC = Math.round(logUniform(2, 2e5));
  const nT = Math.round(logUniform(2, 2e5));
  const meanC = proportion ? uniform(0.05, 0.6) : pick([-1, 1]) * logUniform(0.1, 100);
  const sd = proportion ? Math.sqrt(meanC * (1 - meanC)) : logUniform(0.01, 100);
  const se = sd * Math.sqrt(1 / nC + 1 / nT);
  const meanT = meanC + pick([-1, 1]) * pick([0.05, 0.5, 1.5, 3, 8, 20, 35]) * se;
  return {
    control: randomArm(nC, proportion, meanC, sd),
    treatment: randomArm(nT, proportion, proportion ? Math.min(0.95, Math.max(0.05, meanT)) : meanT, sd),
    alpha: pick([0.01, 0.05, 0.1, 0.2]),
    sided: pick(['two', 'greater', 'less'] as const),
    effect: pick(['absolute', 'relative'] as const),
  };
});

const tGrid = Array.from({ length: 50 }, () => ({
  t: uniform(-40, 40),
  dof: logUniform(1, 1e8),
  p: random() < 0.5 ? logUniform(1e-14, 0.5) : 1 - logUniform(1e-10, 0.5),
}));

const srmCases = Array.from({ length: 20 }, () => {
  const k = 2 + Math.floor(random() * 5);
  const weights = Array.from({ length: k }, (_, i) => (i > 1 && random() < 0.2 ? 0 : pick([1, 2, 5, 0.25])));
  const total = Math.round(logUniform(50, 1e6));
  const skew = pick([0, 0.01, 0.05, 0.3]);
  const observed = weights.map((w) => (w === 0 ? 0 : Math.round(total * w * (1 + uniform(-skew, skew)))));
  return { observed, weights };
});

const pValueLists = Array.from({ length: 8 }, () =>
  Array.from({ length: 2 + Math.floor(random() * 15) }, () => (random() < 0.2 ? 0.04 : logUniform(1e-6, 1))),
);

const PYTHON = `
import json, sys, math
from scipy import stats

data = json.load(sys.stdin)

def arm(a):
    n = a['n']
    if 'successes' in a:
        p = a['successes'] / n
        return n, p, p * (1 - p)
    m = a['sum'] / n
    return n, m, (a['sumSquares'] - a['sum'] * m) / (n - 1)

def compare(c):
    nc, mc, vc = arm(c['control'])
    nt, mt, vt = arm(c['treatment'])
    alternative = {'two': 'two-sided', 'greater': 'greater', 'less': 'less'}[c['sided']]
    welch = stats.ttest_ind_from_stats(mt, math.sqrt(vt), nt, mc, math.sqrt(vc), nc,
                                       equal_var=False, alternative=alternative)
    dof = (vt / nt + vc / nc) ** 2 / ((vt / nt) ** 2 / (nt - 1) + (vc / nc) ** 2 / (nc - 1))
    if c['effect'] == 'absolute':
        est, se = mt - mc, math.sqrt(vt / nt + vc / nc)
        p = float(welch.pvalue)
    else:
        est = (mt - mc) / abs(mc)
        se = math.sqrt(vt / (mc ** 2 * nt) + vc * mt ** 2 / (mc ** 4 * nc))
        tt = est / se
        p = {'two': 2 * stats.t.sf(abs(tt), dof), 'greater': stats.t.sf(tt, dof),
             'less': stats.t.cdf(tt, dof)}[c['sided']]
    a = c['alpha']
    q = stats.t.ppf(1 - a / 2 if c['sided'] == 'two' else 1 - a, dof)
    lower = None if c['sided'] == 'less' else est - q * se
    upper = None if c['sided'] == 'greater' else est + q * se
    z = est / se
    bayes = {
        'chanceToWin': float(stats.norm.sf(0, loc=est, scale=se)),
        'ci': [float(stats.norm.ppf(a / 2, est, se)), float(stats.norm.ppf(1 - a / 2, est, se))],
        # Closed form; accurate where |z| <= 5 (only there is it compared).
        'risk': [float(se * (stats.norm.pdf(z) + z * stats.norm.cdf(z))),
                 float(se * (stats.norm.pdf(z) - z * stats.norm.sf(z)))],
        'z': z,
    }
    return {'tStatistic': float(welch.statistic), 'dof': dof, 'estimate': est, 'stdError': se,
            'pValue': float(p), 'ci': [lower if lower is None else float(lower), upper if upper is None else float(upper)],
            'bayes': bayes}

def srm(s):
    active = [i for i, w in enumerate(s['weights']) if w > 0]
    obs = [s['observed'][i] for i in active]
    wsum = sum(s['weights'][i] for i in active)
    exp = [s['weights'][i] / wsum * sum(obs) for i in active]
    r = stats.chisquare(obs, f_exp=exp)
    return {'chiSquare': float(r.statistic), 'pValue': float(r.pvalue)}

print(json.dumps({
    'scipy': __import__('scipy').__version__,
    'cases': [compare(c) for c in data['cases']],
    'tGrid': [{'cdf': float(stats.t.cdf(g['t'], g['dof'])), 'ppf': float(stats.t.ppf(g['p'], g['dof'])),
               'normCdf': float(stats.norm.cdf(g['t'])), 'normPpf': float(stats.norm.ppf(g['p'])),
               'chi2Sf': float(stats.chi2.sf(abs(g['t']) * 3, 1 + g['dof'] % 9))} for g in data['tGrid']],
    'srm': [srm(s) for s in data['srm']],
    'bh': [[float(x) for x in stats.false_discovery_control(ps, method='bh')] for ps in data['pValueLists']],
}))
`;

interface ScipyResults {
  scipy: string;
  cases: Array<{
    tStatistic: number;
    dof: number;
    estimate: number;
    stdError: number;
    pValue: number;
    ci: [number | null, number | null];
    bayes: { chanceToWin: number; ci: [number, number]; risk: [number, number]; z: number };
  }>;
  tGrid: Array<{ cdf: number; ppf: number; normCdf: number; normPpf: number; chi2Sf: number }>;
  srm: Array<{ chiSquare: number; pValue: number }>;
  bh: number[][];
}

function close(actual: number | null | undefined, expected: number, scale: number, what: string): void {
  assert.ok(typeof actual === 'number', `${what}: got ${actual}, scipy ${expected}`);
  const tolerance = TOLERANCE * Math.max(Math.abs(expected), scale);
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: got ${actual}, scipy ${expected}`);
}
const relative = (actual: number | null | undefined, expected: number, what: string) =>
  close(actual, expected, 0, what);

describe('statistics agree with scipy to 1e-9', () => {
  let scipy: ScipyResults;

  before(() => {
    const run = spawnSync('python3', ['-c', PYTHON], {
      input: JSON.stringify({ cases, tGrid, srm: srmCases, pValueLists }),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.error || run.status !== 0) {
      assert.fail(`python3 with scipy is required for this test: ${run.error?.message ?? run.stderr}`);
    }
    scipy = JSON.parse(run.stdout) as ScipyResults;
  });

  it('Welch t-tests: estimate, standard error, p-value, interval (50 random comparisons)', () => {
    cases.forEach((c, i) => {
      const ours = compareMeans(c.control, c.treatment, c);
      const ref = scipy.cases[i]!;
      const what = `case ${i} (${c.effect}, ${c.sided})`;
      assert.deepEqual(ours.warnings, [], what);
      close(ours.estimate, ref.estimate, ref.stdError, `${what} estimate`);
      relative(ours.stdError, ref.stdError, `${what} stdError`);
      relative(ours.dof, ref.dof, `${what} dof`);
      relative(ours.pValue, ref.pValue, `${what} pValue`);
      for (const side of [0, 1] as const) {
        if (ref.ci[side] === null) assert.equal(ours.ci[side], null, `${what} ci[${side}]`);
        else close(ours.ci[side], ref.ci[side]!, ref.stdError, `${what} ci[${side}]`);
      }
      if (c.effect === 'absolute') close(ours.estimate! / ours.stdError!, ref.tStatistic, 1, `${what} t`);
    });
  });

  it('Bayesian posterior (flat prior): chance to win, credible interval, risk', () => {
    cases.forEach((c, i) => {
      const ours = bayesianCompare(c.control, c.treatment, { alpha: c.alpha, effect: c.effect });
      const ref = scipy.cases[i]!;
      relative(ours.chanceToWin, ref.bayes.chanceToWin, `case ${i} chanceToWin`);
      close(ours.ci[0], ref.bayes.ci[0], ref.stdError, `case ${i} ci[0]`);
      close(ours.ci[1], ref.bayes.ci[1], ref.stdError, `case ${i} ci[1]`);
      if (Math.abs(ref.bayes.z) <= 5) {
        close(ours.risk[0], ref.bayes.risk[0], 0, `case ${i} risk[0]`);
        close(ours.risk[1], ref.bayes.risk[1], 0, `case ${i} risk[1]`);
      }
    });
  });

  it('distributions: Student t cdf and quantile (dof 1 to 1e8), normal, chi-square', () => {
    tGrid.forEach((g, i) => {
      const ref = scipy.tGrid[i]!;
      relative(studentTCdf(g.t, g.dof), ref.cdf, `t cdf(${g.t}, ${g.dof})`);
      relative(studentTQuantile(g.p, g.dof), ref.ppf, `t ppf(${g.p}, ${g.dof})`);
      relative(normalCdf(g.t), ref.normCdf, `normal cdf(${g.t})`);
      relative(normalQuantile(g.p), ref.normPpf, `normal ppf(${g.p})`);
      relative(chiSquareSf(Math.abs(g.t) * 3, 1 + (g.dof % 9)), ref.chi2Sf, `chi2 sf(${Math.abs(g.t) * 3})`);
    });
  });

  it('sample-ratio mismatch: scipy.stats.chisquare on the arms with a positive weight', () => {
    srmCases.forEach((s, i) => {
      const ours = srmTest(s.observed, s.weights);
      relative(ours.chiSquare, scipy.srm[i]!.chiSquare, `srm ${i} chiSquare`);
      relative(ours.pValue, scipy.srm[i]!.pValue, `srm ${i} pValue`);
    });
  });

  it('Benjamini–Hochberg: scipy.stats.false_discovery_control', () => {
    pValueLists.forEach((ps, i) => {
      const ours = adjustPValues(ps, 'bh').adjusted;
      for (const [j, expected] of scipy.bh[i]!.entries()) relative(ours[j], expected, `list ${i} index ${j}`);
    });
  });
});
