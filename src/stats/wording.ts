// Owns how numbers read in a verdict's sentence: counts, effects with their intervals, p-values, chances.
import type { MetricKind } from './arms.js';
import type { TestUsed } from './comparison.js';
import type { EffectEstimate } from './types.js';

const count = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const signed = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });
const plain = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const signedValue = new Intl.NumberFormat('en-US', {
  maximumSignificantDigits: 3,
  signDisplay: 'exceptZero',
});
const list = new Intl.ListFormat('en-US', { type: 'conjunction' });

/** What a unit is, for sentences: { one: 'user', other: 'users' }. */
export interface UnitWord {
  one: string;
  other: string;
}

/** 1,234 users; 1 user. */
export function units(n: number, unit: UnitWord): string {
  return `${count.format(n)} ${n === 1 ? unit.one : unit.other}`;
}

/** Rounded up to two significant figures, so "about" never understates: 1,187 -> 1,200; 87 stays 87. */
export function about(n: number): string {
  if (n < 100) return count.format(Math.ceil(n));
  const step = 10 ** (Math.floor(Math.log10(n)) - 1);
  return count.format(Math.ceil(n / step) * step);
}

export function and(items: string[]): string {
  return list.format(items);
}

/** A relative size as a percentage: 0.05 -> '5%'. */
export function percent(fraction: number): string {
  return `${plain.format(fraction * 100)}%`;
}

/** 'p = 0.003' (two significant figures), 'p < 0.0001' below that. */
export function pValue(p: number): string {
  return p < 1e-4 ? 'p < 0.0001' : `p = ${Number(p.toPrecision(2))}`;
}

/** '99%', '99.4%', '>99.9%': whole percents in the middle, one decimal near the ends. */
export function chance(p: number): string {
  const pct = p * 100;
  if (pct >= 99.95) return '>99.9%';
  if (pct < 0.05) return '<0.1%';
  return `${pct > 99 || pct < 1 ? pct.toFixed(1) : Math.round(pct)}%`;
}

/** How an effect on a metric of this kind is shown: proportions in points, means in percent (else raw). */
interface Scale {
  value: number;
  format: (x: number) => string;
  lower: number | null;
  upper: number | null;
}

function scale(kind: MetricKind, absolute: EffectEstimate, relative: EffectEstimate): Scale | null {
  const pick = (e: EffectEstimate, factor: number, format: (x: number) => string): Scale | null => {
    if (e.estimate === null) return null;
    const at = (x: number | null) => (x === null ? null : x * factor);
    return { value: e.estimate * factor, format, lower: at(e.ci[0]), upper: at(e.ci[1]) };
  };
  if (kind === 'proportion') return pick(absolute, 100, (x) => signed.format(x));
  // A lift without any bound (its control mean within noise of 0) reads as the difference, which has one.
  const liftBounded = relative.ci[0] !== null || relative.ci[1] !== null;
  const absoluteBounded = absolute.ci[0] !== null || absolute.ci[1] !== null;
  const lift = liftBounded || !absoluteBounded ? pick(relative, 100, (x) => `${signed.format(x)}%`) : null;
  return lift ?? pick(absolute, 1, (x) => signedValue.format(x));
}

function interval(s: Scale, test?: TestUsed | null): string {
  const { lower, upper } = s;
  const label = test ? testLabel(test) : '';
  // A difference known exactly is its own interval: the point is not repeated.
  if (test?.method === 'known') return ` (${label})`;
  const named = label ? `, ${label}` : '';
  if (lower !== null && upper !== null) {
    return ` [${s.format(lower)}, ${s.format(upper)}]${label ? ` (${label})` : ''}`;
  }
  if (lower !== null) return ` (at least ${s.format(lower)}${named})`;
  if (upper !== null) return ` (at most ${s.format(upper)}${named})`;
  return '';
}

const TEST_NAMES: Record<TestUsed['method'], string> = {
  welch: 'Welch t interval',
  sequence: 'confidence sequence',
  posterior: 'credible interval',
  score: 'score interval',
  'score-sequence': 'score confidence sequence',
  known: 'exact: no spread in either arm',
};

/** '95% Welch t interval', '90% confidence sequence', 'exact: no spread in either arm'. */
export function testLabel(test: TestUsed): string {
  const name = TEST_NAMES[test.method] ?? test.method;
  if (test.method === 'known') return name;
  return `${Number((test.level * 100).toPrecision(3))}% ${name}`;
}

/**
 * '+8.1 points [+2.3, +13.9] (95% score interval)', '-12.3% [-20.1%, -4.5%]', '+0.512 (at least +0.1)';
 * null when not computed. With a test, the interval names it.
 */
export function effect(
  kind: MetricKind,
  absolute: EffectEstimate,
  relative: EffectEstimate,
  test?: TestUsed | null,
): string | null {
  const s = scale(kind, absolute, relative);
  if (s === null) return null;
  return `${s.format(s.value)}${kind === 'proportion' ? ' points' : ''}${interval(s, test)}`;
}

/** The interval alone, as effect() shows it: ' [+2.3, +13.9]', ' (at least +12%)', or ''. */
export function bounds(
  kind: MetricKind,
  absolute: EffectEstimate,
  relative: EffectEstimate,
  test?: TestUsed | null,
): string {
  const s = scale(kind, absolute, relative);
  return s === null ? '' : interval(s, test);
}

/** '27% higher', '0.4 points lower', 'unchanged'; null when not computed. */
export function change(kind: MetricKind, absolute: EffectEstimate, relative: EffectEstimate): string | null {
  const s = scale(kind, absolute, relative);
  if (s === null) return null;
  const size = s.format(Math.abs(s.value)).replace(/^\+/, '');
  if (s.format(s.value) === s.format(0)) return 'unchanged';
  return `${size}${kind === 'proportion' ? ' points' : ''} ${s.value > 0 ? 'higher' : 'lower'}`;
}
