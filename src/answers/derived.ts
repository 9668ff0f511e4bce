// What a definition derived (ADR 0035), in words for the CLI's report and the MCP tools' answers, as the
// dashboard says it (the dashboard's derived part): the cap used and what it capped, the covariate and the
// variance it removed, and a treatment's reading before the adjustment, always labelled "unadjusted" so its
// p-value is never taken for the one that decides. A ratio's label ("cost_usd per success") says the rest.
import type { Adjustment, MetricAnalysis, Num, VariantAnalysis } from './analysis.js';
import { formatCount, formatLift, formatLiftInterval, formatP, formatValue } from './format.js';

/** 0.1013 -> '10.1%': a share of units, one decimal. */
function percent(x: Num | undefined): string {
  return x === null || x === undefined ? '—' : `${Number((x * 100).toFixed(1))}%`;
}

/** Users straddling a percentile's cap count in part (30.4 users): whole units read better. */
function units(x: Num | undefined): string {
  return x === null || x === undefined ? '—' : formatCount(Math.round(x));
}

const unitsWord = (m: MetricAnalysis) => (m.unit === 'user' ? 'users' : 'calls');

/** 'capped at 0.01057 (p90): 30 of 300 users, 10.1%'; null without a cap. */
export function capText(m: MetricAnalysis): string | null {
  const cap = m.cap;
  if (!cap) return null;
  const at = cap.percentile !== null ? ` (p${cap.percentile})` : '';
  if (cap.value === null) return `not capped yet${at}: no values to read the cap from`;
  const all = m.variants.reduce((a, v) => a + v.n, 0);
  return `capped at ${formatValue(cap.value, m.kind)}${at}: ${units(cap.units)} of ${formatCount(all)} ${unitsWord(m)}, ${percent(cap.share)}`;
}

/** 'adjusted on input_tokens: variance −82%', or why it was not adjusted. */
export function adjustmentText(adjustment: Adjustment | undefined): string | null {
  if (!adjustment) return null;
  const { covariate, adjusted, varianceReduction: r } = adjustment;
  if (!adjusted) return `not adjusted on ${covariate}: too few units, or no covariance with it`;
  if (r === null) return `adjusted on ${covariate}`;
  return `adjusted on ${covariate}: variance ${r >= 0 ? '−' : '+'}${Math.round(Math.abs(r) * 100)}%`;
}

/** 'capped 15 users (9.9%)': this variant's capped units; null without a cap. */
export function cappedText(m: MetricAnalysis, v: VariantAnalysis): string | null {
  if (!v.capped) return null;
  return `capped ${units(v.capped.units)} ${unitsWord(m)} (${percent(v.capped.share)})`;
}

/**
 * 'unadjusted: mean 886.2, lift −1.8% [−4.6%, +1.1%], p 0.22' (the control: its mean only); null when the
 * metric was not adjusted.
 */
export function unadjustedText(m: MetricAnalysis, v: VariantAnalysis): string | null {
  const before = v.unadjusted;
  if (!before || !m.adjustment?.adjusted) return null;
  const parts = [`unadjusted: mean ${formatValue(before.mean, m.kind)}`];
  if (before.relative) {
    parts.push(`lift ${formatLift(before.relative.estimate)} ${formatLiftInterval(before.relative.ci)}`);
  }
  const p = before.pValue ?? before.absolute?.pValue;
  if (p !== undefined) parts.push(`p ${formatP(p)}`);
  return parts.join(', ');
}
