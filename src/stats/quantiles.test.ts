import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveUnits, quantileArm, quantileSummary } from './quantiles.js';
import { SKETCH_RELATIVE_ACCURACY, type SketchBin, sketchBin } from './sketch.js';
import { interpolatedQuantile, layOut } from './sketch-layout.js';
import { assertAllFinite } from './test-helpers.js';

function binsOf(values: number[]): SketchBin[] {
  return values.map((v) => ({ ...sketchBin(v), count: 1 }));
}
const within = (actual: number | null, expected: number, relative: number) =>
  actual !== null && Math.abs(actual - expected) <= relative * Math.abs(expected) + 1e-12;

describe('quantileSummary', () => {
  it('is all null with a warning when there are no values (no bins, zero counts)', () => {
    for (const bins of [[], [{ side: 1, key: 3, count: 0 } as SketchBin]]) {
      assert.deepEqual(quantileSummary(bins), {
        p50: null,
        p90: null,
        p95: null,
        p99: null,
        warnings: ['no values'],
      });
    }
  });

  it('reads negatives, zeros and positives in order, each within 1% of the value of rank ⌊q·(n − 1)⌋', () => {
    const values = Array.from({ length: 201 }, (_, i) => (i - 100) * 0.37); // includes 0
    const s = quantileSummary(binsOf(values));
    const sorted = [...values].sort((a, b) => a - b);
    for (const [key, q] of [
      ['p50', 0.5],
      ['p90', 0.9],
      ['p95', 0.95],
      ['p99', 0.99],
    ] as const) {
      assert.ok(within(s[key], sorted[Math.floor(q * 200)]!, SKETCH_RELATIVE_ACCURACY), `${key}: ${s[key]}`);
    }
    assert.equal(s.p50, 0);
  });

  it('a single value is every quantile (within 1%); invalid rows are skipped with a warning', () => {
    const bins: SketchBin[] = [
      { ...sketchBin(-42), count: 1 },
      { side: 1, key: Number.NaN, count: 5 },
      { side: 2 as 1, key: 1, count: 5 },
      { side: 1, key: 1e9, count: 5 },
      { side: 1, key: 4, count: -1 },
    ];
    const s = quantileSummary(bins);
    for (const key of ['p50', 'p90', 'p95', 'p99'] as const)
      assert.ok(within(s[key], -42, 0.01), `${s[key]}`);
    assert.deepEqual(s.warnings, ['4 invalid sketch bin(s) ignored']);
  });
});

describe('quantileArm', () => {
  it('all-equal values (and a single value): the estimate, no standard error, warning "no variation"', () => {
    for (const values of [[7.5, 7.5, 7.5, 7.5], [7.5]]) {
      const arm = quantileArm(binsOf(values), 0.5, values.length);
      assert.ok(within(arm.estimate, 7.5, 0.01));
      assert.equal(arm.stdError, null);
      assert.match(arm.warnings.join(), /no variation/);
    }
    const zeros = quantileArm([{ side: 0, key: 0, count: 1000 }], 0.9, 1000);
    assert.equal(zeros.estimate, 0);
    assert.equal(zeros.stdError, null);
  });

  it('zero standard error when the rank interval sits inside a run of zeros: null with a warning', () => {
    const bins: SketchBin[] = [
      { side: 0, key: 0, count: 900 },
      { ...sketchBin(5), count: 100 },
    ];
    const arm = quantileArm(bins, 0.5, 1000);
    assert.equal(arm.estimate, 0);
    assert.equal(arm.stdError, null);
    assert.match(arm.warnings.join(), /zero standard error/);
  });

  it('too few units for the rank interval (p99 needs n > 1.96²·99 ≈ 380): estimate, null SE, warning', () => {
    const values = Array.from({ length: 300 }, (_, i) => 1 + i);
    const arm = quantileArm(binsOf(values), 0.99, 300);
    assert.ok(arm.estimate !== null && arm.stdError === null);
    assert.match(arm.warnings.join(), /too few units/);
    assert.ok(quantileArm(binsOf(values), 0.5, 300).stdError! > 0);
  });

  it('invalid q, units or bins: nulls with warnings, never NaN or a throw', () => {
    const bins = binsOf([1, 2, 3, 4, 5]);
    for (const q of [0, 1, -0.5, Number.NaN, '0.5' as unknown as number]) {
      const arm = quantileArm(bins, q, 5);
      assert.equal(arm.estimate, null);
      assert.match(arm.warnings.join(), /quantile must be in \(0, 1\)/);
    }
    for (const units of [0, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const arm = quantileArm(bins, 0.5, units);
      assert.ok(arm.estimate !== null && arm.stdError === null && arm.n === null);
      assert.match(arm.warnings.join(), /units must be/);
      assertAllFinite(arm);
    }
    const capped = quantileArm(bins, 0.5, 50);
    assert.equal(capped.n, 5);
    assert.match(capped.warnings.join(), /exceed the number of values/);
    assert.deepEqual(quantileArm([], 0.5, 5).warnings, ['no values']);
  });

  it('negative values: the estimate and SE mirror those of the positive values', () => {
    const values = Array.from({ length: 2000 }, (_, i) => Math.exp(Math.sin(i) * 2));
    const up = quantileArm(binsOf(values), 0.3, 2000);
    const down = quantileArm(binsOf(values.map((v) => -v)), 0.7, 2000);
    assert.ok(within(down.estimate, -up.estimate!, 1e-9), `${down.estimate} ${up.estimate}`);
    assert.ok(within(down.stdError, up.stdError!, 1e-9));
  });

  it('the SE does not collapse inside one ~2% bin at large n, and shrinks like 1/√n', () => {
    // 10⁶ values spread evenly over [1000, 1100]: about 4 bins, the rank interval of 1.96·√(.25/n) inside one.
    const bins = layOut(binsOf(Array.from({ length: 2000 }, (_, i) => 1000 + i / 20))).bins;
    const scaled = bins.map((b) => ({ side: b.side, key: b.key, count: b.count * 500 }));
    const small = quantileArm(scaled, 0.5, 10_000).stdError!;
    const large = quantileArm(scaled, 0.5, 1_000_000).stdError!;
    assert.ok(large > 0);
    assert.ok(within(small / large, 10, 0.05), `ratio ${small / large}`);
    // Evenly spread values: F' = 1/100, so SE = √(.25/n) · 100.
    assert.ok(within(large, Math.sqrt(0.25 / 1_000_000) * 100, 0.1), `${large}`);
  });
});

describe('quantiles within the min and max', () => {
  const KEYS = ['p50', 'p90', 'p95', 'p99'] as const;
  const extremesOf = (values: number[]) => ({ min: Math.min(...values), max: Math.max(...values) });

  it('a constant arm reads exactly its value, however its bin sits around it', () => {
    for (const value of [0.003, 5, -7.25, 1e-320, 123_456.789]) {
      const values = Array.from({ length: 50 }, () => value);
      const extremes = extremesOf(values);
      const s = quantileSummary(binsOf(values), extremes);
      for (const key of KEYS) assert.equal(s[key], value, `${value} ${key}`);
      assert.equal(quantileArm(binsOf(values), 0.95, 50, extremes).estimate, value);
      // Unclamped, the sketch answers its bin's value instead (0.002997 for 0.003).
      if (value === 0.003) assert.notEqual(quantileSummary(binsOf(values)).p50, value);
    }
  });

  it('ratings 1–5: p90/p95/p99 read 5, not the top bin’s 5.003; every reading stays in [1, 5]', () => {
    const ratings = Array.from({ length: 1000 }, (_, i) => 1 + (i % 5));
    const extremes = { min: 1, max: 5 };
    const s = quantileSummary(binsOf(ratings), extremes);
    assert.deepEqual([s.p90, s.p95, s.p99], [5, 5, 5]);
    assert.ok(quantileSummary(binsOf(ratings)).p99! > 5, 'unclamped it passes the max');
    for (let q = 0.01; q < 1; q += 0.01) {
      const arm = quantileArm(binsOf(ratings), q, 1000, extremes);
      assert.ok(arm.estimate! >= 1 && arm.estimate! <= 5, `q=${q}: ${arm.estimate}`);
    }
  });

  it('clamping never widens the standard error, and leaves readings inside the data untouched', () => {
    const values = Array.from({ length: 4000 }, (_, i) => Math.exp(Math.sin(i * 7.1) * 1.5) * 100);
    const extremes = extremesOf(values);
    for (const q of [0.5, 0.9, 0.95, 0.99]) {
      const free = quantileArm(binsOf(values), q, 4000);
      const clamped = quantileArm(binsOf(values), q, 4000, extremes);
      assert.ok(clamped.stdError! > 0 && clamped.stdError! <= free.stdError! + 1e-12, `q=${q}`);
      assert.ok(clamped.estimate! >= extremes.min && clamped.estimate! <= extremes.max);
    }
    // The median's rank interval is far from the min's and the max's bins: nothing moves.
    assert.deepEqual(
      quantileArm(binsOf(values), 0.5, 4000, extremes),
      quantileArm(binsOf(values), 0.5, 4000),
    );
  });

  it('invalid extremes are ignored with a warning (read unclamped); none given: no warning', () => {
    const bins = binsOf([1, 2, 3]);
    for (const extremes of [
      { min: 3, max: 1 },
      { min: Number.NaN, max: 3 },
    ]) {
      const s = quantileSummary(bins, extremes);
      assert.deepEqual(s, { ...quantileSummary(bins), warnings: [s.warnings[0]!] });
      assert.match(s.warnings.join(), /invalid min\/max/);
    }
    assert.deepEqual(quantileSummary(bins, null).warnings, []);
  });
});

describe('interpolatedQuantile', () => {
  it('is continuous and non-decreasing in rank, also across gaps between bins and the sign change', () => {
    const layout = layOut(binsOf([-30, -2, -2, 0, 0, 1, 1.001, 8, 500]));
    let previous = Number.NEGATIVE_INFINITY;
    for (let r = 0; r <= 8; r += 0.01) {
      const v = interpolatedQuantile(layout, r);
      assert.ok(v >= previous - 1e-12, `rank ${r}: ${v} < ${previous}`);
      const step = Math.abs(interpolatedQuantile(layout, r + 1e-7) - v);
      assert.ok(step < 1e-3, `jump at rank ${r}: ${step}`);
      previous = v;
    }
  });
});

describe('effectiveUnits', () => {
  it('is the number of users when each has one value, and (Σy)²/Σy² otherwise', () => {
    assert.equal(effectiveUnits(250, 250), 250);
    // users with 1, 2, 3 values: (6)² / 14
    assert.equal(effectiveUnits(6, 14), 36 / 14);
  });

  it('is null with a warning for sums no counts could give', () => {
    for (const [y, y2] of [
      [0, 0],
      [10, 5],
      [Number.NaN, 1],
      [5, Number.POSITIVE_INFINITY],
      [-3, 9],
    ]) {
      const warnings: string[] = [];
      assert.equal(effectiveUnits(y!, y2!, warnings), null);
      assert.equal(warnings.length, 1);
    }
  });
});
