// Cross-checks the small-count tests with python3: Fisher's exact p against scipy.stats.fisher_exact (all
// three alternatives) and Newcombe's hybrid score interval (Newcombe 1998, method 10) computed in numpy from
// Wilson intervals (statsmodels is not installed here). 1e-9 relative for p-values, 1e-12 absolute for bounds.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fisherExact, newcombeBounds } from '../src/stats/exact.js';
import { normalQuantile } from '../src/stats/index.js';
import { seededRandom } from './helpers/random.js';

const random = seededRandom(7);
const int = (a: number, b: number) => a + Math.floor(random() * (b - a + 1));
const cases = Array.from({ length: 40 }, () => {
  const nC = int(1, 2000);
  const nT = int(1, 2000);
  const few = (n: number) => (random() < 0.5 ? int(0, Math.min(n, 12)) : n - int(0, Math.min(n, 12)));
  return { c: [few(nC), nC], t: [few(nT), nT], alpha: [0.01, 0.05, 0.1][int(0, 2)]! };
});

const PYTHON = `
import json, sys
import numpy as np
from scipy import stats
data = json.load(sys.stdin)
def wilson(s, n, z):
    p = s / n
    center = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (center - spread) / (1 + z * z / n), (center + spread) / (1 + z * z / n)
out = []
for c in data:
    (sc, nc), (st, nt) = c['c'], c['t']
    table = [[st, nt - st], [sc, nc - sc]]
    p = {a: float(stats.fisher_exact(table, alternative=a)[1]) for a in ['two-sided', 'greater', 'less']}
    z = float(stats.norm.isf(c['alpha'] / 2))
    lt, ut = wilson(st, nt, z)
    lc, uc = wilson(sc, nc, z)
    d = st / nt - sc / nc
    out.append({'p': p, 'z': z, 'newcombe': [float(d - np.sqrt((st / nt - lt) ** 2 + (uc - sc / nc) ** 2)),
                                          float(d + np.sqrt((ut - st / nt) ** 2 + (sc / nc - lc) ** 2))]})
print(json.dumps(out))
`;

describe('small-count tests agree with scipy / numpy', () => {
  let ref: Array<{ p: Record<string, number>; z: number; newcombe: [number, number] }>;
  before(() => {
    const run = spawnSync('python3', ['-c', PYTHON], { input: JSON.stringify(cases), encoding: 'utf8' });
    if (run.error || run.status !== 0) assert.fail(`python3 with numpy and scipy is required: ${run.stderr}`);
    ref = JSON.parse(run.stdout);
  });

  it('Fisher exact p, two-sided, greater, less (40 tables with few successes or failures)', () => {
    cases.forEach((k, i) => {
      const c = { successes: k.c[0]!, trials: k.c[1]! };
      const t = { successes: k.t[0]!, trials: k.t[1]! };
      for (const [ours, theirs] of [
        ['two', 'two-sided'],
        ['greater', 'greater'],
        ['less', 'less'],
      ] as const) {
        const p = fisherExact(c, t, ours)!;
        const expected = ref[i]!.p[theirs]!;
        assert.ok(Math.abs(p - expected) <= 1e-9 * expected, `case ${i} ${ours}: ${p} vs scipy ${expected}`);
      }
    });
  });

  it('Newcombe hybrid score interval for p_T - p_C', () => {
    cases.forEach((k, i) => {
      const z = -normalQuantile(k.alpha / 2);
      assert.ok(Math.abs(z - ref[i]!.z) < 1e-12);
      const ours = newcombeBounds(
        { successes: k.c[0]!, trials: k.c[1]! },
        { successes: k.t[0]!, trials: k.t[1]! },
        z,
      );
      for (const j of [0, 1]) {
        assert.ok(
          Math.abs(ours[j]! - ref[i]!.newcombe[j]!) < 1e-12,
          `case ${i}: ${ours} vs ${ref[i]!.newcombe}`,
        );
      }
    });
  });
});
