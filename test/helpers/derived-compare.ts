// Comparing GET analysis answers with the python oracle's (helpers/derived-oracle.ts): to 1e-9 relative by
// default, remembering the largest difference seen per tolerance (`worst`), for the tests to print.
import assert from 'node:assert/strict';
import type { CapReference, Comparison } from './derived-oracle.js';

const TOLERANCE = 1e-9;

/** The largest relative difference seen per tolerance (printed at the end). */
export const worst = new Map<number, number>();

export function close(actual: unknown, expected: number, scale: number, what: string, tol = TOLERANCE): void {
  assert.ok(typeof actual === 'number', `${what}: got ${actual}, python ${expected}`);
  const error = Math.abs(actual - expected) / Math.max(Math.abs(expected), scale);
  assert.ok(error <= tol, `${what}: got ${actual}, python ${expected} (tol ${tol})`);
  worst.set(tol, Math.max(worst.get(tol) ?? 0, error));
}

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field
export type Metric = any;

/** n, means, and B's effects (estimate, stdError, pValue, ci on both scales) against python, to 1e-9. */
export function assertComparison(m: Metric, ref: Comparison, what: string): void {
  const [a, b] = m.variants;
  for (const [got, want, key] of [[a, ref.A, 'A'] as const, [b, ref.B, 'B'] as const]) {
    assert.equal(got.n, want.n, `${what} ${key}: n`);
    close(got.mean, want.mean, 0, `${what} ${key}: mean`);
  }
  for (const scale of ['absolute', 'relative'] as const) {
    const [got, want] = [b[scale], ref[scale]];
    close(got.estimate, want.estimate, want.stdError, `${what} ${scale} estimate`);
    close(got.stdError, want.stdError, 0, `${what} ${scale} stdError`);
    close(got.pValue, want.pValue, 0, `${what} ${scale} pValue`);
    for (const j of [0, 1] as const) close(got.ci[j], want.ci[j], want.stdError, `${what} ${scale} ci[${j}]`);
  }
}

/** Each variant's capped units within the units near c (in c's bin, read in part) of numpy's count. */
export function cappedWithin(m: Metric, r: CapReference, what: string): void {
  for (const [i, v] of m.variants.entries()) {
    const [got, want, near] = [v.capped.units, r.units[i]!, r.near[i]!];
    assert.ok(Math.abs(got - want) <= near, `${what} ${i}: ${got} capped, numpy ${want} ± ${near}`);
  }
  const [sum, near] = [r.units[0] + r.units[1], r.near[0] + r.near[1]];
  assert.ok(Math.abs(m.cap.units - sum) <= near, `${what}: cap.units ${m.cap.units}, numpy ${sum} ± ${near}`);
}

/** `actual` between the two python readings (± 1e-9): a quantity the bin split moves between them. */
export function between(actual: number, x: number, y: number, what: string): void {
  const slack = TOLERANCE * Math.max(Math.abs(x), Math.abs(y));
  assert.ok(
    actual >= Math.min(x, y) - slack && actual <= Math.max(x, y) + slack,
    `${what}: ${actual} not in [${x}, ${y}]`,
  );
}

/** Same shape and strings; numbers to 1e-9 relative (sums rebuilt in another order may differ in the last bits). */
export function same(actual: unknown, expected: unknown, at: string): void {
  if (typeof expected === 'number') close(actual, expected, 0, at);
  else if (expected === null || typeof expected !== 'object') assert.equal(actual, expected, at);
  else {
    assert.ok(actual !== null && typeof actual === 'object', `${at}: ${JSON.stringify(actual)}`);
    assert.deepEqual(Object.keys(actual), Object.keys(expected), at);
    for (const [k, v] of Object.entries(expected))
      same((actual as Record<string, unknown>)[k], v, `${at}.${k}`);
  }
}
