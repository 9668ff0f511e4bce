// Owns the distributions behind the statistical tests: standard normal, Student t and chi-square (cdf, pdf, quantile).
// jstat supplies the starting points of the quantile searches; CDFs come from ./special.ts because jstat's
// lose accuracy (about 1e-7 relative for t, 0.5% at 1e6 degrees of freedom) and underflow in the tails.
import jStat from 'jstat';
import { betaIncomplete, erfc, gammaIncomplete, logBeta, logGamma } from './special.js';

const LN_SQRT_2PI = 0.9189385332046728;
// Beyond 1e7 degrees of freedom the continued fraction for I_x(dof/2, 1/2) loses digits (x is close to 1), while
// the leading term of its large-a expansion, Phi(-sqrt((dof - 1/2) ln(1 + t^2/dof))) (the first term of BGRAT,
// DiDonato & Morris 1992), is within 4e-10 relative at dof = 1e7 and improves as 1/dof^2.
const LARGE_DOF = 1e7;

/** Standard normal cumulative distribution; accurate relative to its value far into the lower tail. */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x - LN_SQRT_2PI);
}

/** Student t cumulative distribution. Use studentTCdf(-t, dof) for the upper tail: it keeps tiny p-values. */
export function studentTCdf(t: number, dof: number): number {
  if (Number.isNaN(t) || !(dof > 0)) return Number.NaN;
  if (dof === Number.POSITIVE_INFINITY) return normalCdf(t);
  if (t === 0) return 0.5;
  const t2 = t * t;
  const tail =
    dof > LARGE_DOF
      ? normalCdf(-Math.sqrt((dof - 0.5) * Math.log1p(t2 / dof)))
      : 0.5 * betaIncomplete(dof / (dof + t2), t2 / (dof + t2), dof / 2, 0.5);
  return t < 0 ? tail : 1 - tail;
}

export function studentTPdf(t: number, dof: number): number {
  if (dof === Number.POSITIVE_INFINITY) return normalPdf(t);
  return Math.exp(-((dof + 1) / 2) * Math.log1p((t * t) / dof) - 0.5 * Math.log(dof) - logBeta(dof / 2, 0.5));
}

/**
 * Solves cdf(x) = p for p < 0.5 by Newton's method on log cdf against u = ln(-x): both normal and power-law
 * (small dof) tails are close to linear there, so it converges from jstat's approximate start in a few steps.
 */
function lowerTailQuantile(p: number, start: number, cdf: (x: number) => number, pdf: (x: number) => number) {
  let u = Math.log(-start);
  for (let i = 0; i < 100; i++) {
    const x = -Math.exp(u);
    const f = cdf(x);
    const step = ((Math.log(f) - Math.log(p)) * f) / (pdf(x) * -x);
    if (!Number.isFinite(step)) break;
    u += step;
    if (Math.abs(step) <= 1e-15) break;
  }
  return -Math.exp(u);
}

/** Quantile via the lower tail and symmetry (1 - p is exact for p >= 0.5, so no precision is lost). */
function symmetricQuantile(p: number, lowerTail: (pp: number) => number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return Number.NaN;
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  return p < 0.5 ? lowerTail(p) : -lowerTail(1 - p);
}

function validStart(start: number, p: number): number {
  return Number.isFinite(start) && start < 0 ? start : -Math.sqrt(-2 * Math.log(p));
}

export function normalQuantile(p: number): number {
  return symmetricQuantile(p, (pp) =>
    lowerTailQuantile(pp, validStart(jStat.normal.inv(pp, 0, 1), pp), normalCdf, normalPdf),
  );
}

export function studentTQuantile(p: number, dof: number): number {
  if (!(dof > 0)) return Number.NaN;
  if (dof === Number.POSITIVE_INFINITY) return normalQuantile(p);
  return symmetricQuantile(p, (pp) =>
    lowerTailQuantile(
      pp,
      validStart(jStat.studentt.inv(pp, dof), pp),
      (x) => studentTCdf(x, dof),
      (x) => studentTPdf(x, dof),
    ),
  );
}

export function chiSquareCdf(x: number, dof: number): number {
  if (Number.isNaN(x) || !(dof > 0)) return Number.NaN;
  return gammaIncomplete(dof / 2, x / 2)[0];
}

/** Chi-square survival function 1 - cdf, computed directly so that tiny p-values survive. */
export function chiSquareSf(x: number, dof: number): number {
  if (Number.isNaN(x) || !(dof > 0)) return Number.NaN;
  return gammaIncomplete(dof / 2, x / 2)[1];
}

function chiSquarePdf(x: number, dof: number): number {
  const k = dof / 2;
  return Math.exp((k - 1) * Math.log(x) - x / 2 - k * Math.LN2 - logGamma(k));
}

/**
 * Solves cdf(x) = p by Newton's method on the smaller tail against ln x (ln Q and ln P are close to linear in
 * ln x), kept inside a bracket that each step narrows, from the Wilson–Hilferty start. The tail actually
 * searched is the one whose probability is below 0.5, so neither end loses digits to 1 - p.
 */
export function chiSquareQuantile(p: number, dof: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1 || !(dof > 0)) return Number.NaN;
  if (p === 0) return 0;
  if (p === 1) return Number.POSITIVE_INFINITY;
  const upper = p > 0.5;
  const target = Math.log(upper ? 1 - p : p);
  const tail = (x: number) => gammaIncomplete(dof / 2, x / 2)[upper ? 1 : 0];
  const c = 2 / (9 * dof);
  const start = dof * (1 - c + normalQuantile(p) * Math.sqrt(c)) ** 3;
  // Where Wilson–Hilferty fails (few dof, small p), the lower tail's leading term P ≈ (x/2)^k / Gamma(k + 1).
  const k = dof / 2;
  let u = start > 0 ? Math.log(start) : Math.LN2 + (Math.log(p) + logGamma(k + 1)) / k;
  let [lo, hi] = [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (let i = 0; i < 200; i++) {
    const x = Math.exp(u);
    const f = tail(x);
    const excess = Math.log(f) - target;
    // The lower tail grows with x, the upper one falls: excess > 0 means x is past the root for P, short of it for Q.
    if (excess > 0 !== upper) hi = u;
    else lo = u;
    // d ln P / d ln x = pdf x / P, d ln Q / d ln x = -pdf x / Q.
    const slope = ((upper ? -1 : 1) * chiSquarePdf(x, dof) * x) / f;
    let next = u - excess / slope;
    if (!(next > lo && next < hi))
      next = Number.isFinite(lo) && Number.isFinite(hi) ? (lo + hi) / 2 : u + (upper === excess > 0 ? 1 : -1);
    if (Math.abs(next - u) <= 1e-15 * Math.max(1, Math.abs(u))) return Math.exp(next);
    u = next;
  }
  return Math.exp(u);
}
