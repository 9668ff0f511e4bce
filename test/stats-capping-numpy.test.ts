// Cross-checks capping (src/stats/capping.ts) against numpy on heavy-tailed data: python draws seeded lognormal
// and Pareto values for two arms; src/stats sees only each arm's exact sums, min, max and DDSketch bins (built
// here from the values, as the store counts them). numpy caps the raw values with np.minimum(x, c): at fixed
// value caps, at the caps src/stats chose from a percentile (the reading's error alone), and at numpy's own
// np.percentile of the pooled values (the reading's and the cap's error together). python3 with numpy is
// required.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { type CappingArm, capArms, summarizeArm } from '../src/stats/index.js';
import { type SketchBin, sketchBin } from '../src/stats/sketch.js';

interface Dataset {
  seed: number;
  distribution: 'lognormal' | 'pareto';
  /** lognormal: σ of the log; pareto: the tail index α (numpy's pareto(α) + 1, minimum 1). */
  shape: number;
  n: number;
}
const datasets: Dataset[] = [];
for (const [distribution, shape] of [
  ['lognormal', 1],
  ['lognormal', 2],
  ['pareto', 1.1],
  ['pareto', 1.5],
  ['pareto', 2.5],
] as const) {
  for (const n of [200, 2000, 50_000]) datasets.push({ seed: datasets.length + 1, distribution, shape, n });
}
const PERCENTILES = [90, 99, 99.9];

const PYTHON = `
import json, sys
import numpy as np

data = json.load(sys.stdin)

def draw(d):
    rng = np.random.default_rng(d['seed'])
    arm = lambda: rng.lognormal(0, d['shape'], d['n']) if d['distribution'] == 'lognormal' \\
        else rng.pareto(d['shape'], d['n']) + 1
    return [arm(), arm()]

def capped(arms, c):
    out = []
    for x in arms:
        y = np.minimum(x, c)
        out.append({'mean': float(y.mean()), 'variance': float(y.var(ddof=1)), 'above': int((x > c).sum())})
    return out

result = []
for i, d in enumerate(data['datasets']):
    arms = draw(d)
    pooled = np.concatenate(arms)
    entry = {'values': [a.tolist() for a in arms]} if data['phase'] == 1 else {}
    # Value caps: the population's 95th and 99.5th percentiles.
    if d['distribution'] == 'lognormal':
        from statistics import NormalDist
        caps = [float(np.exp(d['shape'] * NormalDist().inv_cdf(q))) for q in (0.95, 0.995)]
    else:
        caps = [float((1 - q) ** (-1 / d['shape'])) for q in (0.95, 0.995)]
    entry['valueCaps'] = caps
    entry['atValue'] = [capped(arms, c) for c in caps]
    entry['percentileCaps'] = [float(np.percentile(pooled, p)) for p in data['percentiles']]
    entry['atPercentile'] = [capped(arms, c) for c in entry['percentileCaps']]
    if data['phase'] == 2:
        entry['atOurs'] = [capped(arms, c) for c in data['ours'][i]]
    result.append(entry)
print(json.dumps(result))
`;

interface Capped {
  mean: number;
  variance: number;
  above: number;
}
interface Reference {
  values?: [number[], number[]];
  valueCaps: number[];
  atValue: Capped[][];
  percentileCaps: number[];
  atPercentile: Capped[][];
  atOurs?: Capped[][];
}

function python(input: object): Reference[] {
  const run = spawnSync('python3', ['-c', PYTHON], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error || run.status !== 0) {
    assert.fail(`python3 with numpy is required for this test: ${run.error?.message ?? run.stderr}`);
  }
  return JSON.parse(run.stdout) as Reference[];
}

function armOf(values: number[]): CappingArm {
  const bins = new Map<string, SketchBin>();
  let [sum, sumSquares, min, max] = [0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const x of values) {
    const b = sketchBin(x);
    const id = `${b.side}:${b.key}`;
    const bin = bins.get(id) ?? { ...b, count: 0 };
    bin.count++;
    bins.set(id, bin);
    sum += x;
    sumSquares += x * x;
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  return { n: values.length, sum, sumSquares, min, max, bins: [...bins.values()] };
}

/** Relative errors of our capped mean and variance against numpy's, per arm. */
function errors(result: ReturnType<typeof capArms>, expected: Capped[], what: string): [number, number][] {
  return expected.map((e, i) => {
    const s = summarizeArm(result.arms[i]!.moments!);
    assert.deepEqual(s.warnings, [], what);
    return [Math.abs(s.mean! / e.mean - 1), Math.abs(s.variance! / e.variance - 1)];
  });
}

describe('capping agrees with numpy np.minimum(x, c) on lognormal and Pareto data', () => {
  let arms: CappingArm[][];
  let ours: number[][];
  let ref: Reference[];

  before(() => {
    const first = python({ phase: 1, datasets, percentiles: PERCENTILES });
    arms = first.map((r) => r.values!.map(armOf));
    ours = arms.map((pair) => PERCENTILES.map((percentile) => capArms(pair, { percentile }).cap!));
    ref = python({ phase: 2, datasets, percentiles: PERCENTILES, ours });
  });

  it('value caps: the capped mean within 0.2% and variance within 1% of numpy', (t) => {
    let worst = [0, 0];
    datasets.forEach((d, i) => {
      ref[i]!.valueCaps.forEach((value, j) => {
        const what = `${d.distribution}(${d.shape}) n ${d.n} cap ${value.toPrecision(4)}`;
        const r = capArms(arms[i]!, { value });
        errors(r, ref[i]!.atValue[j]!, what).forEach(([mean, variance], a) => {
          worst = [Math.max(worst[0]!, mean), Math.max(worst[1]!, variance)];
          assert.ok(
            mean <= 0.002 && variance <= 0.01,
            `${what} arm ${a}: mean ${mean}, variance ${variance}`,
          );
          const above = ref[i]!.atValue[j]![a]!.above;
          // The count above is read from the bin holding the cap: off by at most that bin's values.
          assert.ok(Math.abs(r.arms[a]!.capped! - above) <= 0.02 * d.n + 1, `${what} arm ${a} count`);
        });
      });
    });
    t.diagnostic(
      `largest relative error: capped mean ${worst[0]!.toExponential(2)}, variance ${worst[1]!.toExponential(2)}`,
    );
  });

  it('percentile caps, at the cap chosen: the same bounds; the cap within a bin width of np.percentile', (t) => {
    let worst = [0, 0, 0];
    datasets.forEach((d, i) => {
      PERCENTILES.forEach((percentile, j) => {
        const what = `${d.distribution}(${d.shape}) n ${d.n} p${percentile}`;
        const r = capArms(arms[i]!, { percentile });
        const cap = Math.abs(r.cap! / ref[i]!.percentileCaps[j]! - 1);
        errors(r, ref[i]!.atOurs![j]!, what).forEach(([mean, variance], a) => {
          worst = [Math.max(worst[0]!, mean), Math.max(worst[1]!, variance), Math.max(worst[2]!, cap)];
          assert.ok(
            mean <= 0.002 && variance <= 0.01,
            `${what} arm ${a}: mean ${mean}, variance ${variance}`,
          );
        });
        // Numpy's 'linear' rule, within one bin width (2.02%) where the two ranks it interpolates are close.
        if (d.n * 2 * (1 - percentile / 100) >= 20) assert.ok(cap <= 0.0203, `${what}: cap off by ${cap}`);
      });
    });
    t.diagnostic(
      `largest relative error: capped mean ${worst[0]!.toExponential(2)}, variance ${worst[1]!.toExponential(2)}; ` +
        `cap vs np.percentile ${worst[2]!.toExponential(2)}`,
    );
  });

  it('percentile caps against numpy capping at np.percentile (the cap’s error included): 0.5%, 2.5%', (t) => {
    let worst = [0, 0];
    datasets.forEach((d, i) => {
      PERCENTILES.forEach((percentile, j) => {
        const what = `${d.distribution}(${d.shape}) n ${d.n} p${percentile}`;
        const r = capArms(arms[i]!, { percentile });
        errors(r, ref[i]!.atPercentile[j]!, what).forEach(([mean, variance], a) => {
          worst = [Math.max(worst[0]!, mean), Math.max(worst[1]!, variance)];
          // A cap 1% off moves every capped value by 1%: the variance of heavy tails, which the capped values
          // dominate, by about as much.
          assert.ok(
            mean <= 0.005 && variance <= 0.025,
            `${what} arm ${a}: mean ${mean}, variance ${variance}`,
          );
        });
      });
    });
    t.diagnostic(
      `largest relative error: capped mean ${worst[0]!.toExponential(2)}, variance ${worst[1]!.toExponential(2)}`,
    );
  });
});
