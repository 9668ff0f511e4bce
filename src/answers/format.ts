// How numbers read as text (the CLI's terminal, the MCP tools' answers): the same rounding as the
// dashboard (its own format module) and the verdict's wording, so a number reads alike on the page, in the
// CLI, in an agent's tool answer and in the summary sentence.
import type { TestUsed } from '../stats/comparison.js';
import { testLabel } from '../stats/wording.js';

const count = new Intl.NumberFormat('en-US');
// Means keep four significant digits, trailing zeros included, so 0.005018 and 0.004630 read alike.
const significant = new Intl.NumberFormat('en-US', {
  minimumSignificantDigits: 4,
  maximumSignificantDigits: 4,
});
// As the verdict writes points: one decimal at most, signed unless zero.
const points = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

type Maybe = number | null | undefined;

/** 12,345; '—' for nothing. */
export function formatCount(n: Maybe): string {
  return n === null || n === undefined ? '—' : count.format(n);
}

/** A mean: 4 significant digits (0.004630, 226.4), thousands whole (1,251); a proportion as 53.8%. */
export function formatValue(v: Maybe, kind: string): string {
  if (v === null || v === undefined) return '—';
  if (kind === 'proportion') return `${trim((v * 100).toPrecision(3))}%`;
  if (v !== 0 && Math.abs(v) < 0.0001) return v.toExponential(3);
  if (Math.abs(v) >= 1000 || Number.isInteger(v)) return count.format(Math.round(v));
  return significant.format(v);
}

/** A signed difference in the metric's unit: +0.1800, −20.09; for a proportion, +16.6 points. */
export function formatDifference(v: Maybe, kind: string): string {
  if (v === null || v === undefined) return '—';
  if (kind === 'proportion') return `${points.format(v * 100)} points`;
  return `${v > 0 ? '+' : ''}${formatValue(v, kind)}`;
}

/**
 * An interval from its bounds: '[a, b]'; one bound (a one-sided test): '(≥ a)' or '(≤ b)'; none (a lift
 * whose control mean is within noise of 0): '(no bounded interval)'. Never infinite.
 */
function interval(lo: Maybe, hi: Maybe, f: (x: number) => string): string {
  const has = (x: Maybe): x is number => x !== null && x !== undefined;
  if (has(lo) && has(hi)) return `[${f(lo)}, ${f(hi)}]`;
  if (has(lo)) return `(≥ ${f(lo)})`;
  if (has(hi)) return `(≤ ${f(hi)})`;
  return '(no bounded interval)';
}

/** [lower, upper] of a difference; one bound for a one-sided test. */
export function formatDifferenceInterval(ci: Maybe[] | undefined, kind: string): string {
  if (!ci) return '';
  return interval(ci[0], ci[1], (x) =>
    kind === 'proportion' ? points.format(x * 100) : `${x > 0 ? '+' : ''}${formatValue(x, kind)}`,
  );
}

/** '95% Welch t interval' for a comparison's test; '' from older servers that do not name it. */
export function formatTest(test: { method: string; level: number } | undefined | null): string {
  return test ? testLabel(test as TestUsed) : '';
}

/** A relative effect: +5.2% (one decimal; two below 0.1%). */
export function formatLift(x: Maybe): string {
  if (x === null || x === undefined) return '—';
  const pct = x * 100;
  const s = pct.toFixed(Math.abs(pct) < 0.095 ? 2 : 1);
  return `${pct > 0 && Number(s) !== 0 ? '+' : ''}${s}%`;
}

/** [-1.0%, +9.4%]; one bound for a one-sided test. */
export function formatLiftInterval(ci: Maybe[] | undefined): string {
  if (!ci) return '';
  return interval(ci[0], ci[1], formatLift);
}

/** 96.3% */
export function formatChance(p: Maybe): string {
  return p === null || p === undefined ? '—' : `${(p * 100).toFixed(1)}%`;
}

/** 0.031, 0.0012, < 0.0001: two significant figures, as the verdict writes p-values. */
export function formatP(p: Maybe): string {
  if (p === null || p === undefined) return '—';
  if (p < 1e-4) return '< 0.0001';
  return `${Number(p.toPrecision(2))}`;
}

/** 50% of the traffic, as given (33.3333% stays as precise as it was set, to 4 significant digits). */
export function formatPercent(x: number): string {
  return `${Number(x.toPrecision(4))}%`;
}

/** Text cut to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function trim(s: string): string {
  return s.includes('.') && !s.includes('e') ? s.replace(/\.?0+$/, '') : s;
}
