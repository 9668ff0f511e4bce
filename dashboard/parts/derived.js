// What a definition derived (ADR 0035), as the scorecard shows it: under the metric's name the cap used and
// what it capped, or the covariate and the variance it removed (a ratio's label says it all); in each cell
// the share this variant had capped, or the reading before the adjustment, labelled "unadjusted" so the
// two p-values are never confused. Fields an older server does not send are simply absent.
import { formatCount, formatP, formatValue } from '../format.js';
import { html } from '../html.js';

/** 0.1013 -> '10.1%': shares of units, one decimal. */
const percent = (x) => (x === null || x === undefined ? '—' : `${Number((x * 100).toFixed(1))}%`);
const unitsWord = (metric) => (metric.unit === 'user' ? 'users' : 'calls');
/** Users straddling the cap count in part (30.4 users): whole units read better. */
const units = (x) => (x === null || x === undefined ? '—' : formatCount(Math.round(x)));

/** 'capped at 0.01057 (p90): 30 of 300 users, 10.1%'; a cap that found no values says so. */
export function capText(metric) {
  const cap = metric.cap;
  const at = cap.percentile !== null && cap.percentile !== undefined ? ` (p${cap.percentile})` : '';
  if (cap.value === null || cap.value === undefined)
    return `not capped yet${at}: no values to read the cap from`;
  const all = metric.variants.reduce((a, v) => a + (v.n ?? 0), 0);
  return `capped at ${formatValue(cap.value, metric.kind)}${at}: ${units(cap.units)} of ${formatCount(all)} ${unitsWord(metric)}, ${percent(cap.share)}`;
}

/** 'adjusted on input_tokens: variance −82%', or why it was not adjusted. */
export function adjustmentText(adjustment) {
  const { covariate, adjusted, varianceReduction: r } = adjustment;
  if (!adjusted) return `not adjusted on ${covariate}: too few units, or no covariance with it`;
  if (r === null || r === undefined) return `adjusted on ${covariate}`;
  const size = Math.round(Math.abs(r) * 100);
  return `adjusted on ${covariate}: variance ${r >= 0 ? '−' : '+'}${size}%`;
}

/** Under the metric's name. */
export function DerivedHead({ metric }) {
  return html`${
    metric.cap &&
    html`<div class="muted small" data-testid="cap" title="Every mean, interval and p-value of this metric is of the capped values"
      >${capText(metric)}</div
    >`
  }${
    metric.adjustment &&
    html`<div class="muted small" data-testid="adjustment"
      title="Means, effects, intervals and p-values are the adjusted ones; each variant shows its unadjusted reading"
      >${adjustmentText(metric.adjustment)}</div
    >`
  }`;
}

/**
 * In a variant's cell: its capped share, and its unadjusted reading. `effect` is the unadjusted effect as
 * the cell writes its own ([estimate, interval], on the same scale); absent for the control.
 */
export function DerivedCell({ metric, v, effect }) {
  const capped = v?.capped;
  const before = v?.unadjusted;
  return html`${
    capped &&
    html`<div class="muted small" data-testid="capped">
      capped: ${units(capped.units)} ${unitsWord(metric)}, ${percent(capped.share)}
    </div>`
  }${
    before &&
    metric.adjustment?.adjusted &&
    html`<div class="muted small unadjusted" data-testid="unadjusted">
      unadjusted: ${
        effect
          ? `${effect[0]} ${effect[1]}, ${formatP(before.pValue ?? before.absolute?.pValue ?? null)} (mean ${formatValue(before.mean, metric.kind)})`
          : `mean ${formatValue(before.mean, metric.kind)}`
      }
    </div>`
  }`;
}
