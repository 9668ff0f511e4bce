// Tests the distributions against closed forms (t with 1 and 2 dof, chi-square with 2 dof) and round trips.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chiSquareCdf,
  chiSquareQuantile,
  chiSquareSf,
  normalCdf,
  normalQuantile,
  studentTCdf,
  studentTQuantile,
} from './distributions.js';

const relClose = (actual: number, expected: number, tolerance: number, what = '') =>
  assert.ok(
    Math.abs(actual - expected) <= tolerance * Math.abs(expected),
    `${what} got ${actual}, expected ${expected} (rel ${tolerance})`,
  );

describe('Student t', () => {
  it('matches the Cauchy distribution (1 dof), including far tails', () => {
    for (const t of [0.3, 1, 7, 1e3, 1e8]) {
      relClose(studentTCdf(-t, 1), Math.atan(1 / t) / Math.PI, 1e-13, `F(-${t})`);
      relClose(studentTCdf(t, 1), 0.5 + Math.atan(t) / Math.PI, 1e-14, `F(${t})`);
    }
    // tan(pi (p - 1/2)) = -1 / tan(pi p), which avoids the cancellation in p - 1/2 for small p.
    for (const p of [1e-12, 0.025, 0.3]) relClose(studentTQuantile(p, 1), -1 / Math.tan(Math.PI * p), 1e-12);
  });

  it('matches the closed form for 2 dof', () => {
    for (const t of [0.01, 1.5, 40, 1e6]) {
      const s = Math.sqrt(2 + t * t);
      relClose(studentTCdf(-t, 2), 1 / (s * (s + t)), 1e-13, `F(-${t})`);
    }
    for (const p of [1e-9, 0.05, 0.8])
      relClose(studentTQuantile(p, 2), (2 * p - 1) / Math.sqrt(2 * p * (1 - p)), 1e-12);
  });

  it('keeps tiny tail probabilities instead of rounding them to 0', () => {
    const p = studentTCdf(-40, 6000);
    assert.ok(p > 0 && p < 1e-300, `${p}`);
    assert.equal(studentTCdf(0, 12), 0.5);
  });

  it('inverts its own cdf across dof, including the large-dof branch', () => {
    for (const dof of [1.3, 4, 30, 1e5, 9e6, 5e7]) {
      for (const p of [1e-15, 1e-4, 0.025, 0.4, 0.975]) {
        relClose(studentTCdf(studentTQuantile(p, dof), dof), p, 1e-11, `dof ${dof} p ${p}`);
      }
    }
  });

  it('is continuous across the switch to the large-dof expansion at 1e7', () => {
    for (const t of [-8, -2, -0.5]) relClose(studentTCdf(t, 1e7 * (1 + 1e-12)), studentTCdf(t, 1e7), 1e-9);
  });

  it('returns NaN for invalid dof', () => {
    assert.ok(Number.isNaN(studentTCdf(1, 0)));
    assert.ok(Number.isNaN(studentTQuantile(0.5, -1)));
  });
});

describe('normal', () => {
  it('gives the textbook quantiles', () => {
    relClose(normalQuantile(0.975), 1.959963984540054, 1e-15);
    relClose(normalCdf(-1.959963984540054), 0.025, 1e-14);
    assert.equal(normalQuantile(0.5), 0);
  });

  it('keeps the far lower tail (Mills ratio asymptotics)', () => {
    const x = 37;
    const mills = (1 - 1 / x ** 2 + 3 / x ** 4 - 15 / x ** 6 + 105 / x ** 8) / x;
    relClose(normalCdf(-x), (Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI)) * mills, 1e-11);
  });

  it('inverts its cdf from 1e-300 to the upper tail', () => {
    // Near x = -37 the cdf itself is good to ~1.5e-13 (rounding of x^2 / 2 inside exp), hence 1e-12.
    for (const p of [1e-300, 1e-20, 0.025, 0.7, 1 - 1e-12]) relClose(normalCdf(normalQuantile(p)), p, 1e-12);
  });
});

describe('chi-square', () => {
  it('matches exp(-x/2) for 2 dof, far into the tail', () => {
    for (const x of [0.001, 1, 10, 100, 1000]) relClose(chiSquareSf(x, 2), Math.exp(-x / 2), 1e-13, `x ${x}`);
    relClose(chiSquareCdf(1, 2), -Math.expm1(-0.5), 1e-14);
  });

  it('is 1 at 0 and NaN for invalid dof', () => {
    assert.equal(chiSquareSf(0, 3), 1);
    assert.ok(Number.isNaN(chiSquareSf(1, 0)));
  });

  it('inverts to -2 ln(1 - p) for 2 dof, both tails', () => {
    for (const p of [1e-300, 1e-9, 0.2, 0.5, 0.975])
      relClose(chiSquareQuantile(p, 2), -2 * Math.log1p(-p), 1e-12);
    relClose(chiSquareQuantile(1 - 1e-12, 2), 2 * 12 * Math.LN10, 1e-4); // 1 - 1e-12 is not exact in floating point
  });

  it('inverts its own cdf from fractional to a million dof', () => {
    for (const dof of [0.3, 1, 4.5, 29, 1e3, 1e6]) {
      for (const p of [1e-30, 1e-6, 0.2, 0.5, 0.8]) {
        // ln P changes ~sqrt(dof) times faster than ln x there, so the round trip keeps fewer digits than x.
        relClose(chiSquareCdf(chiSquareQuantile(p, dof), dof), p, 1e-9, `dof ${dof} p ${p}`);
      }
      relClose(chiSquareSf(chiSquareQuantile(1 - 1e-9, dof), dof), 1e-9, 1e-6, `dof ${dof} upper`);
    }
  });

  it('is 0 at p = 0, Infinity at p = 1, NaN outside', () => {
    assert.equal(chiSquareQuantile(0, 3), 0);
    assert.equal(chiSquareQuantile(1, 3), Number.POSITIVE_INFINITY);
    for (const [p, dof] of [
      [-0.1, 3],
      [1.1, 3],
      [0.5, 0],
      [Number.NaN, 3],
    ] as const) {
      assert.ok(Number.isNaN(chiSquareQuantile(p, dof)), `${p} ${dof}`);
    }
  });
});
