// Cross-checks the test that decides proportions with python3: the Miettinen–Nurminen score test and its
// intervals for the difference and the ratio against statsmodels (test_proportions_2indep and
// confint_proportions_2indep, method 'score', correction=True), Fisher's exact p (reported beside it) against
// scipy.stats.fisher_exact, and the issue-33 reproductions (rare events the old intersection rule lost).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { compareArms, fisherExact, normalQuantile, scoreInterval, scoreZ } from '../src/stats/index.js';
import { seededRandom } from './helpers/random.js';

const random = seededRandom(7);
const int = (a: number, b: number) => a + Math.floor(random() * (b - a + 1));
const drawn = Array.from({ length: 40 }, () => {
  const nC = int(1, 2000);
  const nT = int(1, 2000);
  const few = (n: number) => (random() < 0.5 ? int(0, Math.min(n, 12)) : n - int(0, Math.min(n, 12)));
  return { c: [few(nC), nC], t: [few(nT), nT], alpha: [0.01, 0.05, 0.1][int(0, 2)]! };
});
const many = Array.from({ length: 20 }, () => {
  const nC = int(50, 5000);
  const nT = int(50, 5000);
  return { c: [int(0, nC), nC], t: [int(0, nT), nT], alpha: [0.01, 0.05, 0.1][int(0, 2)]! };
});
// The reproductions: [control successes, n], [treatment successes, n].
const reproductions = [
  { c: [2, 40], t: [9, 40], alpha: 0.05 },
  { c: [1, 1000], t: [8, 1000], alpha: 0.05 },
  { c: [9, 100], t: [20, 100], alpha: 0.05 },
  { c: [1, 50], t: [0, 50], alpha: 0.05 },
];
const cases = [...drawn, ...many, ...reproductions];

const PYTHON = `
import json, sys, warnings
warnings.simplefilter('ignore')
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep
data = json.load(sys.stdin)
out = []
for c in data:
    (sc, nc), (st, nt) = c['c'], c['t']
    table = [[st, nt - st], [sc, nc - sc]]
    fisher = {a: float(stats.fisher_exact(table, alternative=a)[1]) for a in ['two-sided', 'greater', 'less']}
    score = {}
    for ours, theirs in [('two', 'two-sided'), ('greater', 'larger'), ('less', 'smaller')]:
        r = test_proportions_2indep(st, nt, sc, nc, method='score', compare='diff', correction=True, alternative=theirs)
        score[ours] = [float(r.statistic), float(r.pvalue)]
    def ci(compare):
        try:
            lo, hi = confint_proportions_2indep(st, nt, sc, nc, method='score', compare=compare, alpha=c['alpha'], correction=True)
            return [float(lo), float(hi)]
        except Exception:
            return None
    out.append({'fisher': fisher, 'score': score, 'diff': ci('diff'), 'ratio': ci('ratio') if 0 < sc < nc and 0 < st < nt else None})
print(json.dumps(out))
`;

interface Ref {
  fisher: Record<string, number>;
  score: Record<'two' | 'greater' | 'less', [number, number]>;
  diff: [number, number] | null;
  ratio: [number, number] | null;
}

const close = (a: number, b: number, rel: number, abs = 0) => Math.abs(a - b) <= rel * Math.abs(b) + abs;

describe('proportions: the score test agrees with statsmodels, Fisher with scipy', () => {
  let ref: Ref[];
  before(() => {
    const run = spawnSync('python3', ['-c', PYTHON], { input: JSON.stringify(cases), encoding: 'utf8' });
    if (run.error || run.status !== 0)
      assert.fail(`python3 with scipy and statsmodels is required: ${run.stderr}`);
    ref = JSON.parse(run.stdout);
  });
  const arms = (k: (typeof cases)[number]) =>
    [
      { successes: k.c[0]!, trials: k.c[1]! },
      { successes: k.t[0]!, trials: k.t[1]! },
    ] as const;

  it('Fisher exact p, two-sided, greater, less (tables with few successes or failures)', () => {
    cases.forEach((k, i) => {
      const [c, t] = arms(k);
      for (const [ours, theirs] of [
        ['two', 'two-sided'],
        ['greater', 'greater'],
        ['less', 'less'],
      ] as const) {
        const p = fisherExact(c, t, ours)!;
        const expected = ref[i]!.fisher[theirs]!;
        assert.ok(close(p, expected, 1e-9), `case ${i} ${ours}: ${p} vs scipy ${expected}`);
      }
    });
  });

  it('the score statistic and the decision p-value of compareArms, each alternative', () => {
    cases.forEach((k, i) => {
      const [c, t] = arms(k);
      const z = scoreZ(c, t, 0, 'diff');
      const [zRef] = ref[i]!.score.two;
      if (Number.isFinite(zRef)) assert.ok(close(z, zRef, 1e-10, 1e-12), `case ${i}: z ${z} vs ${zRef}`);
      for (const sided of ['two', 'greater', 'less'] as const) {
        const r = compareArms(
          { n: c.trials, successes: c.successes },
          { n: t.trials, successes: t.successes },
          { method: 'frequentist', alpha: k.alpha, sided },
        );
        assert.equal(r.test.method, 'score');
        const expected = ref[i]!.score[sided][1];
        if (!Number.isFinite(expected)) continue; // statsmodels gives nan for 0/n vs 0/n; ours p = 1
        assert.ok(close(r.pValue!, expected, 1e-9, 1e-15), `case ${i} ${sided}: ${r.pValue} vs ${expected}`);
        assert.equal(r.significant, r.pValue! < k.alpha);
      }
    });
  });

  it('the Miettinen–Nurminen intervals of the difference and the ratio (the lift + 1)', () => {
    let compared = 0;
    cases.forEach((k, i) => {
      const [c, t] = arms(k);
      const z = -normalQuantile(k.alpha / 2);
      const { diff, ratio } = ref[i]!;
      if (diff) {
        const ours = scoreInterval(c, t, z, 'two', 'diff');
        for (const j of [0, 1])
          assert.ok(close(ours[j]!, diff[j]!, 1e-7, 1e-9), `case ${i}: ${ours} vs ${diff}`);
        compared++;
      }
      if (ratio) {
        const ours = scoreInterval(c, t, z, 'two', 'ratio');
        // statsmodels' root search stops early on extreme tables (case 17: its bound's z is 1.95990, ours
        // 1.959964 = z_0.975): agree to 1e-4 and check that our bounds solve |z| = z_{1-α/2} to 1e-9.
        for (const j of [0, 1])
          assert.ok(close(ours[j]!, ratio[j]!, 1e-4, 1e-9), `case ${i}: ${ours} vs ${ratio}`);
        assert.ok(
          close(scoreZ(c, t, ours[0]!, 'ratio'), z, 1e-9) && close(scoreZ(c, t, ours[1]!, 'ratio'), -z, 1e-9),
        );
        const r = compareArms(
          { n: c.trials, successes: c.successes },
          { n: t.trials, successes: t.successes },
          { method: 'frequentist', alpha: k.alpha, sided: 'two' },
        );
        for (const j of [0, 1])
          assert.ok(close(r.relative.ci[j]! + 1, ours[j]!, 1e-12, 1e-15), `case ${i} lift`);
        compared++;
      }
    });
    assert.ok(compared >= 100, `${compared} intervals compared`);
  });

  it('issue 33: rare events are decided by the score test; nothing overrules it, both intervals agree', () => {
    const expected = [
      // 2/40 vs 9/40 (Fisher 0.048): was p = 0.3, "no variant beats A yet"
      { significant: true },
      // 1/1000 vs 8/1000 (Fisher 0.039): was p = 0.41
      { significant: true },
      // 9/100 vs 20/100 (Fisher 0.043): was p = 0.145
      { significant: true },
      // 1/50 vs 0/50: the decision p-value was null
      { significant: false },
    ];
    reproductions.forEach((k, j) => {
      const i = drawn.length + many.length + j;
      const r = compareArms(
        { n: k.c[1]!, successes: k.c[0]! },
        { n: k.t[1]!, successes: k.t[0]! },
        { method: 'frequentist', alpha: 0.05, sided: 'two', direction: 'increase' },
      );
      assert.equal(r.significant, expected[j]!.significant, `${k.c} vs ${k.t}: p ${r.pValue}`);
      assert.ok(r.pValue !== null && close(r.pValue, ref[i]!.score.two[1], 1e-9));
      assert.ok(r.exact !== null && close(r.exact.fisherPValue, ref[i]!.fisher['two-sided']!, 1e-9));
      const excludes = (ci: (number | null)[]) => ci[0]! > 0 || ci[1]! < 0;
      assert.equal(excludes(r.absolute.ci), r.significant, `absolute ${r.absolute.ci}`);
      if (r.relative.estimate !== null)
        assert.equal(excludes(r.relative.ci), r.significant, `${r.relative.ci}`);
    });
  });
});
