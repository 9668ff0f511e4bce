// Cross-checks quantiles read from sketch bins against numpy on the exact raw values: seeded data drawn in numpy
// (lognormal latencies, a normal with negatives, a discrete count with ties and zeros), n from 50 to 200,000.
// The values travel to this process, are binned by core/sketch.ts as the store bins them, and are read back.
//
// Rank convention: DDSketch reads rank q·(n − 1) and answers the value of the bin holding the value of rank
// ⌊q·(n − 1)⌋, which is numpy.quantile(method='lower'); quantileArm interpolates between the values of ranks
// ⌊r⌋ and ⌈r⌉, which is numpy's default method='linear'.
//
// Tolerances:
// - quantileSummary: 1% relative of numpy 'lower' (the sketch's guarantee), all n;
// - quantileArm estimate: 2α/(1 − α) ≈ 2.02% relative of numpy 'linear' (one bin's width: values are read
//   continuously inside their bin), all n; the largest error seen is printed;
// - quantileArm stdError: 10% relative of the same rank-interval SE on the raw values (numpy 'linear' at ranks
//   q ± 1.96·√(q(1 − q)/n)), p50/p90/p95/p99, n >= 1,000, continuous data only: on discrete data the raw SE is
//   0 or one gap between tied values depending on where the rank interval falls, not a smooth quantity.
// - with the raw data's min and max (as the rollups keep them), all of the above still hold, every quantile
//   lies in [min, max], and the ratings 1–5 and constants of issue 33 read exactly where numpy's value is the
//   min or the max.
// python3 with numpy and scipy is required (CI has it): the test fails, loudly, without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { quantileArm, quantileSummary } from '../src/stats/quantiles.js';
import { SKETCH_RELATIVE_ACCURACY, type SketchBin, sketchBin } from '../src/stats/sketch.js';

const QS = [0.5, 0.9, 0.95, 0.99] as const;
const KEYS = ['p50', 'p90', 'p95', 'p99'] as const;
const BIN_WIDTH = (2 * SKETCH_RELATIVE_ACCURACY) / (1 - SKETCH_RELATIVE_ACCURACY);
const SE_TOLERANCE = 0.1;

const PYTHON = `
import json, sys
import numpy as np
from scipy import stats

rng = np.random.default_rng(20_251_126)
z = float(stats.norm.ppf(0.975))
QS = [0.5, 0.9, 0.95, 0.99]
datasets = []
for n in [50, 1_000, 20_000, 200_000]:
    datasets.append(('lognormal', n, rng.lognormal(mean=np.log(800.0), sigma=0.8, size=n)))
    datasets.append(('normal', n, rng.normal(loc=0.3, scale=1.0, size=n)))
    datasets.append(('poisson', n, rng.poisson(lam=3.0, size=n).astype(float)))

def rank_se(x, q):
    h = z * np.sqrt(q * (1 - q) / len(x))
    if q - h < 0 or q + h > 1:
        return None
    return float((np.quantile(x, q + h) - np.quantile(x, q - h)) / (2 * z))

# Data whose quantiles a sketch bin reads outside the data (issue 33): ratings 1–5, and constants.
for n in [50, 1_000, 20_000]:
    datasets.append(('ratings', n, rng.integers(1, 6, size=n).astype(float)))
    datasets.append(('constant', n, np.full(n, 0.003)))

out = []
for name, n, x in datasets:
    out.append({
        'name': name, 'n': n, 'values': x.tolist(),
        'lower': [float(np.quantile(x, q, method='lower')) for q in QS],
        'linear': [float(np.quantile(x, q, method='linear')) for q in QS],
        'se': [rank_se(x, q) for q in QS],
        'min': float(np.min(x)), 'max': float(np.max(x)),
    })
print(json.dumps({'numpy': np.__version__, 'datasets': out}))
`;

interface Dataset {
  name: string;
  n: number;
  values: number[];
  lower: number[];
  linear: number[];
  se: (number | null)[];
  min: number;
  max: number;
}

/** The data sets the tests before issue 33 read (the bounded ones come after them). */
const UNBOUNDED = new Set(['lognormal', 'normal', 'poisson']);

/** The store's rows for these values: one per bin, counts summed. */
function binsOf(values: number[]): SketchBin[] {
  const rows = new Map<string, SketchBin>();
  for (const v of values) {
    const { side, key } = sketchBin(v);
    const id = `${side}:${key}`;
    const row = rows.get(id) ?? { side, key, count: 0 };
    row.count++;
    rows.set(id, row);
  }
  return [...rows.values()];
}

const relativeError = (actual: number, expected: number) =>
  expected === 0 ? Math.abs(actual) : Math.abs(actual - expected) / Math.abs(expected);

describe('quantiles from sketch bins agree with numpy on the raw values', () => {
  let datasets: Array<Dataset & { bins: SketchBin[] }>;
  let unbounded: typeof datasets;

  before(() => {
    const run = spawnSync('python3', ['-c', PYTHON], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    if (run.error || run.status !== 0) {
      assert.fail(
        `python3 with numpy and scipy is required for this test: ${run.error?.message ?? run.stderr}`,
      );
    }
    const parsed = JSON.parse(run.stdout) as { datasets: Dataset[] };
    datasets = parsed.datasets.map((d) => ({ ...d, bins: binsOf(d.values) }));
    unbounded = datasets.filter((d) => UNBOUNDED.has(d.name));
  });

  it("quantileSummary is within 1% of numpy.quantile(method='lower') (rank ⌊q·(n − 1)⌋)", () => {
    let worst = 0;
    for (const d of unbounded) {
      const summary = quantileSummary(d.bins);
      assert.deepEqual(summary.warnings, []);
      KEYS.forEach((key, i) => {
        const error = relativeError(summary[key]!, d.lower[i]!);
        worst = Math.max(worst, error);
        assert.ok(
          error <= SKETCH_RELATIVE_ACCURACY + 1e-12,
          `${d.name} n=${d.n} ${key}: ${summary[key]} vs ${d.lower[i]}`,
        );
      });
    }
    console.log(`quantileSummary: largest relative error ${worst.toExponential(2)}`);
  });

  it("quantileArm's estimate is within one bin's width of numpy.quantile(method='linear')", () => {
    const worst: Record<string, number> = {};
    for (const d of unbounded) {
      QS.forEach((q, i) => {
        const arm = quantileArm(d.bins, q, d.n);
        assert.ok(arm.estimate !== null, `${d.name} n=${d.n} q=${q}: ${arm.warnings}`);
        const error = relativeError(arm.estimate, d.linear[i]!);
        worst[d.name] = Math.max(worst[d.name] ?? 0, error);
        assert.ok(error <= BIN_WIDTH, `${d.name} n=${d.n} q=${q}: ${arm.estimate} vs ${d.linear[i]}`);
      });
    }
    console.log(`quantileArm estimate: largest relative error by data set ${JSON.stringify(worst)}`);
  });

  it('quantileArm stdError is within 10% of the rank-interval SE on the raw values (n >= 1,000, continuous)', () => {
    let worst = 0;
    let compared = 0;
    for (const d of unbounded) {
      if (d.n < 1_000 || d.name === 'poisson') continue;
      QS.forEach((q, i) => {
        const arm = quantileArm(d.bins, q, d.n);
        const exact = d.se[i]!;
        assert.ok(arm.stdError !== null && exact > 0, `${d.name} n=${d.n} q=${q}: ${arm.warnings}`);
        const error = relativeError(arm.stdError, exact);
        worst = Math.max(worst, error);
        compared++;
        assert.ok(error <= SE_TOLERANCE, `${d.name} n=${d.n} q=${q}: SE ${arm.stdError} vs raw ${exact}`);
      });
    }
    assert.equal(compared, 24);
    console.log(`quantileArm stdError: largest relative error ${worst.toFixed(4)} over ${compared} cases`);
  });

  it('the discrete data (ties, zeros) still get a positive stdError that shrinks like 1/√n', () => {
    const poisson = unbounded.filter((d) => d.name === 'poisson' && d.n >= 1_000);
    for (const q of QS) {
      const ses = poisson.map((d) => quantileArm(d.bins, q, d.n).stdError);
      assert.ok(
        ses.every((se) => se !== null && se > 0),
        `q=${q}: ${ses}`,
      );
      // n grows 20× then 10×: the SE falls, as the rank interval narrows inside the tied values' bins.
      assert.ok(ses[0]! > ses[1]! && ses[1]! > ses[2]!, `q=${q}: ${ses}`);
    }
  });

  it('read within the raw min and max, every quantile lies in [min, max] and keeps the accuracy above', () => {
    let worst = { summary: 0, arm: 0, se: 0 };
    let outside = 0;
    for (const d of datasets) {
      const extremes = { min: d.min, max: d.max };
      const free = quantileSummary(d.bins);
      const summary = quantileSummary(d.bins, extremes);
      assert.deepEqual(summary.warnings, []);
      QS.forEach((q, i) => {
        const key = KEYS[i]!;
        const what = `${d.name} n=${d.n} ${key}`;
        if (free[key]! < d.min || free[key]! > d.max) outside++;
        assert.ok(summary[key]! >= d.min && summary[key]! <= d.max, `${what}: ${summary[key]}`);
        const error = relativeError(summary[key]!, d.lower[i]!);
        assert.ok(error <= SKETCH_RELATIVE_ACCURACY + 1e-12, `${what}: ${summary[key]} vs ${d.lower[i]}`);
        const arm = quantileArm(d.bins, q, d.n, extremes);
        assert.ok(arm.estimate! >= d.min && arm.estimate! <= d.max, `${what}: arm ${arm.estimate}`);
        const armError = relativeError(arm.estimate!, d.linear[i]!);
        assert.ok(armError <= BIN_WIDTH, `${what}: arm ${arm.estimate} vs ${d.linear[i]}`);
        worst = { ...worst, summary: Math.max(worst.summary, error), arm: Math.max(worst.arm, armError) };
        // The standard error: never wider than unclamped; on continuous data still within 10% of numpy's.
        const unclamped = quantileArm(d.bins, q, d.n).stdError;
        if (arm.stdError !== null) assert.ok(arm.stdError <= unclamped! + 1e-12, `${what}: SE widened`);
        if (d.n >= 1_000 && (d.name === 'lognormal' || d.name === 'normal')) {
          const seError = relativeError(arm.stdError!, d.se[i]!);
          worst.se = Math.max(worst.se, seError);
          assert.ok(seError <= SE_TOLERANCE, `${what}: SE ${arm.stdError} vs raw ${d.se[i]}`);
        }
      });
    }
    // Without the min and max, the ratings' and constants' quantiles leave the data (the reproduction).
    assert.ok(outside > 0);
    console.log(
      `within min/max: ${outside} quantile(s) read outside the data unclamped, none clamped; largest relative ` +
        `error: summary ${worst.summary.toExponential(2)}, estimate ${worst.arm.toExponential(2)}, SE ${worst.se.toFixed(4)}`,
    );
  });

  it('ratings 1–5 read p90/p95/p99 = 5 as numpy does (not 5.003), and a constant 0.003 reads 0.003 exactly', () => {
    for (const d of datasets.filter((x) => x.name === 'ratings' || x.name === 'constant')) {
      const summary = quantileSummary(d.bins, { min: d.min, max: d.max });
      QS.forEach((q, i) => {
        const key = KEYS[i]!;
        // Exact where numpy's value is the min or the max (every quantile of a constant; 5s of ratings).
        if (d.lower[i] === d.max || d.lower[i] === d.min) {
          assert.equal(summary[key], d.lower[i], `${d.name} n=${d.n} ${key}`);
        }
        if (d.name === 'constant') {
          assert.equal(quantileArm(d.bins, q, d.n, { min: d.min, max: d.max }).estimate, 0.003);
        }
      });
      if (d.name === 'ratings') assert.deepEqual([summary.p90, summary.p95, summary.p99], [5, 5, 5]);
      else
        assert.deepEqual([summary.p50, summary.p90, summary.p95, summary.p99], [0.003, 0.003, 0.003, 0.003]);
    }
  });
});
