// Capping's rules on data whose answer is computed here exactly (min(x, c) summed in doubles): the exact cases,
// what cannot be capped and why, negative values and zeros, the percentile cap and values up to 1e100 (the
// agreement with numpy on heavy tails: test/stats-capping-numpy.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../test/helpers/random.js';
import { type CappingArm, capArms, percentileCap } from './capping.js';
import { summarizeArm } from './moments.js';
import { type SketchBin, sketchBin } from './sketch.js';
import { interpolatedQuantile, layOut } from './sketch-layout.js';
import { assertAllFinite } from './test-helpers.js';

function armOf(values: number[]): CappingArm {
  const bins = new Map<string, SketchBin>();
  for (const x of values) {
    const b = sketchBin(x);
    const id = `${b.side}:${b.key}`;
    const bin = bins.get(id) ?? { ...b, count: 0 };
    bin.count++;
    bins.set(id, bin);
  }
  return {
    n: values.length,
    sum: values.reduce((a, x) => a + x, 0),
    sumSquares: values.reduce((a, x) => a + x * x, 0),
    min: values.reduce((a, x) => Math.min(a, x), Number.POSITIVE_INFINITY),
    max: values.reduce((a, x) => Math.max(a, x), Number.NEGATIVE_INFINITY),
    bins: [...bins.values()],
  };
}

const exactly = (values: number[], c: number) => {
  const capped = values.map((x) => Math.min(x, c));
  return armOf(capped);
};

const random = seededRandom(7);
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const lognormal = (n: number) => Array.from({ length: n }, () => Math.exp(1 + 1.2 * normal()));

describe('capArms: exact cases', () => {
  const values = lognormal(500);
  const arm = armOf(values);

  it('max ≤ cap: nothing capped, the sums unchanged', () => {
    for (const cap of [{ value: arm.max }, { value: arm.max * 10 }, { percentile: 100 }]) {
      const r = capArms([arm], cap);
      assert.deepEqual(r.arms[0], {
        moments: { n: arm.n, sum: arm.sum, sumSquares: arm.sumSquares },
        capped: 0,
        cappedShare: 0,
        exact: true,
      });
      assert.deepEqual(r.warnings, []);
    }
  });

  it('min > cap: every value is the cap', () => {
    const r = capArms([arm], { value: arm.min / 2 });
    const c = arm.min / 2;
    assert.deepEqual(r.arms[0], {
      moments: { n: arm.n, sum: arm.n * c, sumSquares: arm.n * c * c },
      capped: arm.n,
      cappedShare: 1,
      exact: true,
    });
  });

  it('only the maximum above the cap: exact (the maximum is known, the rest unread)', () => {
    const outlier = [...values, 1e6];
    const c = Math.max(...values) * 1.5;
    const r = capArms([armOf(outlier)], { value: c });
    const e = exactly(outlier, c);
    const m = r.arms[0]!.moments!;
    assert.equal(r.arms[0]!.capped, 1);
    // Up to the rounding of Σx² − 1e12 (the outlier's square): 1e-16 of 1e12, 1e-9 of the capped Σx².
    assert.ok(Math.abs(m.sum - e.sum) <= 1e-12 * e.sum, `${m.sum} vs ${e.sum}`);
    assert.ok(
      Math.abs(m.sumSquares - e.sumSquares) <= 1e-8 * e.sumSquares,
      `${m.sumSquares} vs ${e.sumSquares}`,
    );
  });

  it('an empty arm stays empty', () => {
    const r = capArms([arm, { n: 0, sum: 0, sumSquares: 0, min: 0, max: 0, bins: [] }], { percentile: 99 });
    assert.deepEqual(r.arms[1], {
      moments: { n: 0, sum: 0, sumSquares: 0 },
      capped: 0,
      cappedShare: null,
      exact: true,
    });
  });
});

describe('capArms: read from the sketch', () => {
  it('negative values, zeros and positive values, at caps below, at and above 0: close to exact', () => {
    const values = Array.from({ length: 4000 }, () => (random() < 0.1 ? 0 : 2 * normal()));
    const arm = armOf(values);
    for (const c of [-1.5, -0.2, 0, 0.3, 2.5, 5]) {
      const r = capArms([arm], { value: c });
      const e = exactly(values, c);
      const m = r.arms[0]!.moments!;
      const s = summarizeArm(m);
      const t = summarizeArm(e);
      assert.deepEqual(s.warnings, [], `cap ${c}`);
      // Against the spread of the values (sd 2): the mean within 0.002 sd, the variance within 0.5%.
      assert.ok(Math.abs(s.mean! - t.mean!) <= 0.004, `cap ${c}: mean ${s.mean} vs ${t.mean}`);
      assert.ok(Math.abs(s.variance! / t.variance! - 1) <= 0.005, `cap ${c}: ${s.variance} vs ${t.variance}`);
      const above = values.filter((x) => x > c).length;
      assert.ok(Math.abs(r.arms[0]!.capped! - above) <= 0.01 * values.length, `cap ${c}: capped count`);
    }
  });

  it('the moments are consistent (variance ≥ 0) and never above the uncapped ones', () => {
    for (const n of [2, 3, 10, 100]) {
      const values = lognormal(n);
      const arm = armOf(values);
      for (const p of [1, 10, 50, 90, 99]) {
        const r = capArms([arm], { percentile: p });
        const m = r.arms[0]!.moments!;
        assertAllFinite(r);
        assert.ok(m.sumSquares * m.n >= m.sum * m.sum, `n ${n} p${p}: variance < 0`);
        assert.ok(m.sum <= arm.sum && m.sum <= m.n * r.cap!, `n ${n} p${p}: sum`);
        assert.ok(m.sum >= m.n * arm.min, `n ${n} p${p}: sum below n·min`);
      }
    }
  });

  it('values up to 1e100: finite, and within 0.5% of the exact capped moments', () => {
    const values = lognormal(2000).map((x) => x * 1e100);
    const arm = armOf(values);
    const r = capArms([arm], { percentile: 95 });
    assertAllFinite(r);
    const [s, t] = [summarizeArm(r.arms[0]!.moments!), summarizeArm(exactly(values, r.cap!))];
    assert.ok(Math.abs(s.mean! / t.mean! - 1) <= 0.005, `${s.mean} vs ${t.mean}`);
    assert.ok(Math.abs(s.variance! / t.variance! - 1) <= 0.005, `${s.variance} vs ${t.variance}`);
  });
});

describe('the cap and what cannot be capped', () => {
  const a = armOf(lognormal(300));
  const b = armOf(lognormal(200).map((x) => 2 * x));

  it('a percentile cap is the pooled sketch quantile (quantiles.ts’s reading), inside the pooled [min, max]', () => {
    const pooled = layOut([...a.bins, ...b.bins]);
    for (const p of [50, 90, 99]) {
      const expected = interpolatedQuantile(pooled, (p / 100) * (pooled.n - 1));
      assert.equal(
        percentileCap([a, b], p),
        Math.min(Math.max(expected, Math.min(a.min, b.min)), Math.max(a.max, b.max)),
      );
      assert.equal(capArms([a, b], { percentile: p }).cap, percentileCap([a, b], p));
    }
    assert.equal(percentileCap([a, b], 100), Math.max(a.max, b.max));
    const tiny = percentileCap([a, b], 1e-9)!;
    assert.ok(tiny >= Math.min(a.min, b.min));
  });

  it('an invalid cap: every arm null, one warning', () => {
    for (const cap of [
      { value: Number.NaN },
      { percentile: 0 },
      { percentile: 101 },
      {} as { value: number },
    ]) {
      const r = capArms([a, b], cap);
      assert.equal(r.cap, null, JSON.stringify(cap));
      assert.equal(r.arms.length, 2);
      assert.ok(r.arms.every((arm) => arm.moments === null));
      assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings));
    }
    assert.deepEqual(capArms([{ ...a, bins: [] }], { percentile: 99 }).warnings, [
      'no values in the sketches: no percentile cap',
    ]);
  });

  it('sums and sketch that disagree: that arm null with a warning, the others capped', () => {
    const c = { value: 20 };
    const cases: Array<[Partial<CappingArm>, RegExp]> = [
      [{ n: a.n + 1 }, /arm 0: the sketch counts 300 values, the sums 301: not capped/],
      [{ max: a.max * 1.1 }, /arm 0: min and max are not in the sketch's first and last bins/],
      [{ min: a.min * 0.9 }, /arm 0: min and max are not in the sketch's first and last bins/],
      [{ sum: Number.POSITIVE_INFINITY }, /arm 0: sum, sumSquares, min and max must be finite/],
      [{ min: a.max, max: a.min }, /min <= max/],
      [{ n: -1 }, /arm 0: n must be a finite number >= 0/],
    ];
    for (const [change, warning] of cases) {
      const r = capArms([{ ...a, ...change }, b], c);
      assert.equal(r.arms[0]!.moments, null, JSON.stringify(change));
      assert.match(r.warnings.join('; '), warning);
      assert.notEqual(r.arms[1]!.moments, null);
    }
  });
});
