// How numbers read on the page. The scorecard and the tests share these, so both round alike.

const count = new Intl.NumberFormat('en-US');
// Means keep four significant digits, trailing zeros included, so 0.005018 and 0.004630 read alike.
const significant = new Intl.NumberFormat('en-US', {
  minimumSignificantDigits: 4,
  maximumSignificantDigits: 4,
});
const tick = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 4 });
// As src/stats/wording.ts writes points in a verdict: one decimal at most, signed unless zero.
const points = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

/** 12,345 */
export function formatCount(n) {
  return n === null || n === undefined ? '—' : count.format(n);
}

/**
 * A metric's value: 4 significant digits (0.004630, 226.4), thousands whole (1,251), whole numbers as they
 * are (a logged count of 230 is not 230.0); proportions as percentages with 3 (53.8%).
 */
export function formatValue(v, kind) {
  if (v === null || v === undefined) return '—';
  if (kind === 'proportion') return `${trim((v * 100).toPrecision(3))}%`;
  if (v !== 0 && Math.abs(v) < 0.0001) return v.toExponential(3);
  if (Math.abs(v) >= 1000 || Number.isInteger(v)) return count.format(Math.round(v));
  return significant.format(v);
}

/**
 * A number as it is shown where no kind is known (a logged value, a feedback score, a mean, JSON on the
 * page): whole numbers as they are, others to 4 significant digits (0.1235, 2.5, 226.4), from 1,000 on
 * to a whole number (1517.5356831594258 reads 1,518), tiny ones with an exponent (1.23e-7).
 */
export function roundNumber(v) {
  if (typeof v !== 'number' || !Number.isFinite(v) || Number.isInteger(v)) return v;
  if (Math.abs(v) >= 1000) return Math.round(v);
  return Number(v.toPrecision(Math.abs(v) < 0.0001 ? 3 : 4));
}

/** roundNumber as text, thousands grouped: 1,518 · 0.1235 · 2.5; '—' for none. */
export function formatNumber(v) {
  if (v === null || v === undefined) return '—';
  const r = roundNumber(v);
  return Math.abs(r) >= 1000 ? count.format(r) : String(r);
}

/** JSON text, indented, its numbers rounded for reading (roundNumber). */
export function readableJson(value) {
  return JSON.stringify(value, (_k, v) => (typeof v === 'number' ? roundNumber(v) : v), 2);
}

/** An axis tick: as formatValue but without trailing zeros (ticks are round numbers). */
export function formatTick(v, kind) {
  if (v === null || v === undefined) return '';
  if (kind === 'proportion') return `${trim((v * 100).toPrecision(3))}%`;
  return Math.abs(v) >= 1000 ? count.format(Math.round(v)) : tick.format(v);
}

/**
 * A proportion's absolute effect in percentage points, as the verdict writes it:
 * '+9.4 points [+4.9, +13.8]', '+2.1 points (at least +0.3)'; '—' when not computed.
 */
export function formatPoints(effect) {
  if (!effect || effect.estimate === null || effect.estimate === undefined) return '—';
  const f = (x) => points.format(x * 100);
  const [lo, hi] = effect.ci ?? [null, null];
  const bounds =
    lo !== null && hi !== null
      ? ` [${f(lo)}, ${f(hi)}]`
      : lo !== null
        ? ` (at least ${f(lo)})`
        : hi !== null
          ? ` (at most ${f(hi)})`
          : '';
  return `${f(effect.estimate)} points${bounds}`;
}

/** A relative effect: +5.2% (one decimal; two below 0.1%). */
export function formatLift(x) {
  if (x === null || x === undefined) return '—';
  const pct = x * 100;
  const decimals = Math.abs(pct) < 0.095 ? 2 : 1;
  const s = pct.toFixed(decimals);
  return `${pct > 0 && Number(s) !== 0 ? '+' : ''}${s}%`;
}

/**
 * An interval from its bounds: '[a, b]'; one bound (a one-sided test): '(≥ a)' or '(≤ b)'; none (a lift whose
 * control mean is within noise of 0): '(no bounded interval)'. Never infinite.
 */
export function formatBounds(lo, hi, f) {
  const has = (x) => x !== null && x !== undefined;
  if (has(lo) && has(hi)) return `[${f(lo)}, ${f(hi)}]`;
  if (has(lo)) return `(≥ ${f(lo)})`;
  if (has(hi)) return `(≤ ${f(hi)})`;
  return '(no bounded interval)';
}

/** [−1.0%, +9.4%]; one bound for a one-sided test. */
export function formatInterval(ci) {
  if (!ci) return '';
  return formatBounds(ci[0], ci[1], formatLift);
}

const TEST_NAMES = {
  welch: 'Welch t interval',
  sequence: 'confidence sequence',
  posterior: 'credible interval',
  score: 'score interval',
  'score-sequence': 'score confidence sequence',
  known: 'exact: no spread in either arm',
};

/** '95% Welch t interval': the test behind a comparison's intervals, as the verdict names it ('' if unnamed). */
export function formatTest(test) {
  if (!test) return '';
  const name = TEST_NAMES[test.method] ?? test.method;
  return test.method === 'known' ? name : `${Number((test.level * 100).toPrecision(3))}% ${name}`;
}

/** A relative size without a sign: 0.079 -> '7.9%', 0.05 -> '5%' (up to 4 significant digits, as set). */
export function formatShare(x) {
  if (x === null || x === undefined) return '—';
  return `${Number((Math.abs(x) * 100).toPrecision(4))}%`;
}

/** 96.3% */
export function formatChance(p) {
  if (p === null || p === undefined) return '—';
  return `${(p * 100).toFixed(1)}%`;
}

/** p = 0.031, p = 0.0012, p < 0.0001: two significant figures, as the verdict (src/stats/wording.ts pValue). */
export function formatP(p) {
  if (p === null || p === undefined) return 'p = —';
  if (p < 1e-4) return 'p < 0.0001';
  return `p = ${Number(p.toPrecision(2))}`;
}

/** 2025-06-02 09:20:11 in the viewer's time zone. */
export function formatTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "3 min ago" */
export function formatAgo(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

function trim(s) {
  return s.includes('.') && !s.includes('e') ? s.replace(/\.?0+$/, '') : s;
}
