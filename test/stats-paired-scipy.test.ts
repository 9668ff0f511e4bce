// The paired comparison (src/stats/paired.ts, issue 40) against independent oracles in one python3
// subprocess: scipy ttest_rel (p-value, confidence interval) and wilcoxon (exact, permutation and normal
// branches, with ties and zeros), statsmodels mcnemar (exact), and a numpy two-stage bootstrap (items, then
// trials within items) whose percentile interval must agree within Monte Carlo error.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { comparePaired } from '../src/stats/paired.js';
import { signedRank } from '../src/stats/signed-rank.js';
import { seededRandom } from './helpers/random.js';

const random = seededRandom(40);
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

function python(script: string, input: unknown): unknown {
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(input), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const close = (a: number, b: number, what: string, tol = 1e-9) =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

/** Items × trials of a metric: item level + shift + trial noise. */
function dataset(items: number, trials: number, shift: number, round = false) {
  const a = new Map<string, number[]>();
  const b = new Map<string, number[]>();
  for (let i = 0; i < items; i++) {
    const level = normal() * 2;
    const draw = (s: number) => {
      const x = level + s + normal() * 0.5;
      return round ? Math.round(x) : x;
    };
    a.set(
      `item-${i}`,
      Array.from({ length: trials }, () => draw(0)),
    );
    b.set(
      `item-${i}`,
      Array.from({ length: trials }, () => draw(shift)),
    );
  }
  return { a, b };
}

describe('paired comparison against scipy, statsmodels and numpy', () => {
  test('paired t and Wilcoxon on item means: 24 datasets (1–3 trials, ties, zeros, 5 to 200 items)', () => {
    const cases: Array<{ a: number[][]; b: number[][] }> = [];
    const ours: ReturnType<typeof comparePaired>[] = [];
    for (const items of [5, 9, 13, 30, 50, 51, 120, 200]) {
      for (const [trials, round] of [
        [1, false],
        [3, false],
        [1, true],
      ] as const) {
        const { a, b } = dataset(items, trials, 0.2, round);
        cases.push({ a: [...a.values()], b: [...b.values()] });
        ours.push(comparePaired(a, b));
      }
    }
    const want = python(
      `
import json, sys, numpy as np
from scipy.stats import ttest_rel, wilcoxon
out = []
for c in json.load(sys.stdin):
    ma = np.array([np.mean(t) for t in c['a']]); mb = np.array([np.mean(t) for t in c['b']])
    t = ttest_rel(mb, ma); ci = t.confidence_interval()
    d = mb - ma
    w = wilcoxon(d) if np.any(d != 0) else None
    out.append({'p': t.pvalue, 'ci': [ci.low, ci.high], 'est': float(np.mean(d)),
                'w': None if w is None else [float(w.statistic), float(w.pvalue)]})
print(json.dumps(out))`,
      cases,
    ) as Array<{ p: number; ci: [number, number]; est: number; w: [number, number] | null }>;
    const methods = new Set<string>();
    ours.forEach((r, i) => {
      const w = want[i]!;
      close(r.difference.estimate, w.est, `case ${i} estimate`);
      close(r.difference.pValue!, w.p, `case ${i} t p-value`);
      close(r.difference.ci![0], w.ci[0], `case ${i} ci low`);
      close(r.difference.ci![1], w.ci[1], `case ${i} ci high`);
      assert.equal(r.wilcoxon?.statistic, w.w?.[0], `case ${i} W`);
      close(r.wilcoxon!.pValue, w.w![1], `case ${i} Wilcoxon p`);
      methods.add(r.wilcoxon!.method);
    });
    assert.deepEqual([...methods].sort(), ['exact', 'normal', 'permutation'], 'every branch was checked');
  });

  test('Wilcoxon with zeros among the differences (dropped, as zero_method="wilcox")', () => {
    const ds = [
      [0, 0, 1, -2, 3, 4, -1, 5],
      [0, 2, 2, 2, -2, 1, 0, 3, 4, 4, -1, 6, 7, 8, 0, 9, 1, 2, 3],
      Array.from({ length: 60 }, (_, i) => (i % 7) - 2),
    ];
    const want = python(
      `
import json, sys
from scipy.stats import wilcoxon
print(json.dumps([[float(r.statistic), float(r.pvalue)] for r in (wilcoxon(d) for d in json.load(sys.stdin))]))`,
      ds,
    ) as Array<[number, number]>;
    ds.forEach((d, i) => {
      const r = signedRank(d)!;
      assert.equal(r.statistic, want[i]![0]);
      close(r.pValue, want[i]![1], `zeros case ${i}`);
    });
  });

  test("McNemar's exact test on pass/fail items (statsmodels mcnemar, exact=True)", () => {
    const tables: Array<[number, number, number, number]> = [
      [40, 5, 12, 43],
      [10, 0, 3, 7],
      [100, 30, 31, 39],
      [3, 1, 1, 2],
      [0, 0, 0, 9],
    ];
    const want = python(
      `
import json, sys
from statsmodels.stats.contingency_tables import mcnemar
print(json.dumps([mcnemar([[t[0], t[1]], [t[2], t[3]]], exact=True).pvalue for t in json.load(sys.stdin)]))`,
      tables,
    ) as number[];
    tables.forEach(([both, onlyA, onlyB, neither], i) => {
      const a = new Map<string, number[]>();
      const b = new Map<string, number[]>();
      let k = 0;
      const add = (count: number, x: number, y: number) => {
        for (let j = 0; j < count; j++, k++) {
          a.set(`i${k}`, [x]);
          b.set(`i${k}`, [y]);
        }
      };
      add(both, 1, 1);
      add(onlyA, 1, 0);
      add(onlyB, 0, 1);
      add(neither, 0, 0);
      const r = comparePaired(a, b, { proportion: true });
      assert.deepEqual([r.mcnemar!.b, r.mcnemar!.c], [onlyA, onlyB]);
      close(r.mcnemar!.pValue, want[i]!, `table ${i}`);
      assert.deepEqual([r.wins, r.losses, r.ties], [onlyB, onlyA, both + neither]);
    });
  });

  test('the two-stage bootstrap interval agrees with numpy within Monte Carlo error', () => {
    const { a, b } = dataset(80, 3, 0.3);
    const r = comparePaired(a, b, { resamples: 20_000, seed: 7 });
    const want = python(
      `
import json, sys, numpy as np
d = json.load(sys.stdin); a = np.array(d['a']); b = np.array(d['b'])
rng = np.random.default_rng(7); R = 20000; n, t = a.shape; res = np.empty(R)
for r in range(R):
    k = rng.integers(0, n, n)
    ia = rng.integers(0, t, (n, t)); ib = rng.integers(0, t, (n, t))
    res[r] = (np.take_along_axis(b[k], ib, 1).mean(1) - np.take_along_axis(a[k], ia, 1).mean(1)).mean()
print(json.dumps({'ci': list(np.percentile(res, [2.5, 97.5])), 'sd': float(res.std())}))`,
      { a: [...a.values()], b: [...b.values()] },
    ) as { ci: [number, number]; sd: number };
    // Each endpoint of 20,000 resamples varies by about 0.02 of the bootstrap SD between seeds.
    for (const k of [0, 1] as const) {
      assert.ok(
        Math.abs(r.bootstrap!.ci[k] - want.ci[k]) < 0.05 * want.sd,
        `endpoint ${k}: ${r.bootstrap!.ci[k]} vs ${want.ci[k]} (sd ${want.sd})`,
      );
    }
    // Trials vary little within items here (0.5 against 2 between): most variance is between items.
    assert.ok(r.variance!.items > 0.85, JSON.stringify(r.variance));
  });
});
