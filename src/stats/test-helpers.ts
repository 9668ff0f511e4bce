// Test support only (not exported by index.ts): loads the shared reference vectors, tolerant comparisons.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sharedPath } from '../../test/helpers/shared.js';

export function loadStatisticsVectors(): StatisticsVectors {
  return JSON.parse(readFileSync(sharedPath('vectors/statistics.json'), 'utf8')) as StatisticsVectors;
}

type Arm = { n: number; sum: number; sumSquares: number } | { n: number; successes: number };
export interface StatisticsVectors {
  welch: Array<ComparisonCase>;
  sequential: { cases: Array<ComparisonCase & { nStar: number }> };
  bayesian: {
    cases: Array<{
      id: string;
      control?: Arm;
      treatment?: Arm;
      prior?: { mean: number; variance: number };
      riskOf?: { mean: number; stdDev: number };
      expect: Record<string, number | number[]>;
    }>;
  };
  srm: {
    cases: Array<{ id: string; observed: number[]; weights: number[]; expect: Record<string, number> }>;
  };
}
export interface ComparisonCase {
  id: string;
  alpha: number;
  sided: 'two' | 'greater' | 'less';
  effect: 'absolute' | 'relative';
  control: Arm;
  treatment: Arm;
  expect: Record<string, number | number[]>;
}

/** Decimal places written in a number's shortest form ('0.000020079' → 9, '1.5e-7' → 8, '2' → 0). */
function decimals(x: number): number {
  const [mantissa = '', exponent = '0'] = String(Math.abs(x)).split('e');
  const fraction = mantissa.split('.')[1] ?? '';
  return Math.max(0, fraction.length - Number(exponent));
}

/**
 * Tolerance for a published value: half a unit in its last written decimal (5 decimal places for values written
 * as whole numbers such as 1 or 0.0), and never tighter than 1e-9 relative (values published to full precision).
 */
export function publishedTolerance(expected: number): number {
  const places = Number.isInteger(expected) ? 5 : decimals(expected);
  return Math.max(0.5 * 10 ** -places, 1e-9 * Math.abs(expected));
}

export function assertMatches(actual: number | null | undefined, expected: number, what: string): void {
  assert.ok(typeof actual === 'number', `${what}: expected ${expected}, got ${actual}`);
  const tolerance = publishedTolerance(expected);
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: got ${actual}, expected ${expected} (±${tolerance.toExponential(1)})`,
  );
}

/** Every number anywhere inside value is finite (null is allowed, NaN and ±Infinity are not). */
export function assertAllFinite(value: unknown, path = 'result'): void {
  if (typeof value === 'number') assert.ok(Number.isFinite(value), `${path} is ${value}`);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) assertAllFinite(v, `${path}[${i}]`);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) assertAllFinite(v, `${path}.${k}`);
  }
}
