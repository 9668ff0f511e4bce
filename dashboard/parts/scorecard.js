// The scorecard: one row per metric, primary first; per treatment the lift with its interval drawn as a
// bar against zero, the chance to be better (bayesian) or the p-value (adjusted where a correction applies),
// significance, a guardrail's status against its threshold, quantiles and the sample-size hint. A metric
// whose values never vary is one plain line. Fields a server may not send yet (quantiles) are optional.
import {
  formatBounds,
  formatChance,
  formatCount,
  formatInterval,
  formatLift,
  formatP,
  formatPoints,
  formatShare,
  formatTest,
  formatValue,
} from '../format.js';
import { html } from '../html.js';
import { DerivedCell, DerivedHead } from './derived.js';

// Guardrails before secondary metrics: a guardrail can stop a launch, a secondary metric only informs it.
const ROLE_ORDER = { primary: 0, guardrail: 1, secondary: 2 };

/**
 * Primary first, then guardrails, secondary, and metrics nobody declared; within a role the order the
 * experiment declares them in (`declared`: experiment.metrics), then the API's order.
 */
export function orderMetrics(metrics, declared = []) {
  const place = new Map(declared.map((d, i) => [d.name, i]));
  const at = (m, i) => place.get(m.name) ?? declared.length + i;
  return metrics
    .map((m, i) => ({ m, i: at(m, i) }))
    .sort((a, b) => (ROLE_ORDER[a.m.role] ?? 3) - (ROLE_ORDER[b.m.role] ?? 3) || a.i - b.i)
    .map(({ m }) => m);
}

/** The relative scale when every treatment has one; else the absolute (a control mean of 0 has no lift). */
function scaleOf(metric) {
  const treatments = metric.variants.filter((v) => v.relative);
  // A lift without any bound (control mean within noise of 0) reads as the difference, which has one.
  const bounded = (e) => e.ci[0] !== null || e.ci[1] !== null;
  const relative = treatments.every(
    (v) => v.relative.estimate !== null && (bounded(v.relative) || !bounded(v.absolute)),
  );
  const effects = treatments.map((v) => (relative ? v.relative : v.absolute));
  const reach = effects
    .flatMap((e) => [e.estimate, ...e.ci])
    .filter((x) => x !== null && Number.isFinite(x))
    .reduce((a, x) => Math.max(a, Math.abs(x)), 0);
  return { relative, reach: reach > 0 ? reach * 1.15 : 1 };
}

function effectOf(v, scale) {
  return scale.relative ? v.relative : v.absolute;
}

function effectText(effect, scale, kind) {
  if (scale.relative) return [formatLift(effect.estimate), formatInterval(effect.ci)];
  const f = (x) => (x === null ? null : `${x > 0 ? '+' : ''}${formatValue(x, kind)}`);
  const [lo, hi] = effect.ci;
  return [f(effect.estimate) ?? '—', formatBounds(lo, hi, f)];
}

/** The interval as a bar on a scale centred on zero; the better side is tinted when a direction is known. */
function EffectBar({ effect, scale, tone, direction, label }) {
  const x = (v) => 100 + (Math.max(-scale.reach, Math.min(scale.reach, v)) / scale.reach) * 96;
  const [lo, hi] = effect.ci;
  const hasBar = effect.estimate !== null;
  const left = lo === null ? 2 : x(lo);
  const right = hi === null ? 198 : x(hi);
  const goodRight = direction === 'increase';
  return html`<svg class="effect-bar" viewBox="0 0 200 20" preserveAspectRatio="none" role="img" aria-label=${label}>
    ${
      direction &&
      html`<rect x=${goodRight ? 100 : 0} y="0" width="100" height="20" class="side-good" />
        <rect x=${goodRight ? 0 : 100} y="0" width="100" height="20" class="side-bad" />`
    }
    ${hasBar && html`<rect x=${left} y="6" width=${Math.max(right - left, 1)} height="8" rx="2" class=${`bar ${tone}`} />`}
    <line x1="100" x2="100" y1="0" y2="20" class="zero" vector-effect="non-scaling-stroke" />
    ${
      hasBar &&
      html`<line x1=${x(effect.estimate)} x2=${x(effect.estimate)} y1="3" y2="17" class="estimate"
        vector-effect="non-scaling-stroke" />`
    }
  </svg>`;
}

/** Better, worse, harmful or not significant: one word with the colour to match. */
function significance(metric, v) {
  if (metric.role === 'guardrail' && v.guardrail?.status === 'failed') return ['harmful', 'Guardrail failed'];
  if (!v.significant) return ['neutral', 'Not significant'];
  if (v.better) return ['good', 'Better'];
  if (v.worse) return ['bad', 'Worse'];
  return ['info', 'Significant'];
}

/** The corrections by name, as a sentence says them. */
export const CORRECTION_WORDS = {
  holm: 'Holm',
  bh: 'Benjamini–Hochberg (BH)',
};
const CORRECTION_SHORT = { holm: 'Holm', bh: 'BH' };

const GUARDRAIL_WORDS = {
  passed: 'Guardrail passed',
  failed: 'Guardrail failed',
  inconclusive: 'Guardrail inconclusive',
};

/** 'could be 3.7% worse' / 'at worst 1.2% better': the guardrail interval's worse end, in the metric's terms. */
export function guardrailReach(direction, bound) {
  if (bound === null || bound === undefined) return 'its lift cannot be computed';
  const size = (x) => formatLift(Math.abs(x)).replace('+', '');
  if (!direction) return `could be ${size(bound)} ${bound > 0 ? 'higher' : 'lower'}`;
  const worse = direction === 'increase' ? -bound : bound;
  return worse > 0 ? `could be ${size(worse)} worse` : `at worst ${size(worse)} better`;
}

/** 'Guardrail inconclusive: could be 3.7% worse; threshold 5%'. */
export function guardrailText(direction, g) {
  const from = g.test ? ` (${formatTest(g.test)})` : '';
  return `${GUARDRAIL_WORDS[g.status] ?? `Guardrail ${g.status}`}: ${guardrailReach(direction, g.bound)}${from}; threshold ${formatShare(g.threshold)}`;
}

const QUANTILES = ['p50', 'p90', 'p95', 'p99'];

/** 'p50 812 · p90 1,040 · p95 1,110 · p99 1,250' for numeric metrics whose analysis has quantiles. */
function Quantiles({ metric, v }) {
  const q = v?.quantiles;
  if (!q || metric.kind === 'proportion') return null;
  const shown = QUANTILES.filter((k) => q[k] !== null && q[k] !== undefined);
  if (shown.length === 0) return null;
  return html`<div class="quantiles small" data-testid="quantiles">
    ${shown.map(
      (k, i) =>
        html`${i > 0 ? ' · ' : ''}<span class=${k === metric.statistic ? 'compared' : 'muted'} data-testid=${`quantile-${k}`}
          >${k} ${formatValue(q[k], metric.kind)}</span
        >`,
    )}
  </div>`;
}

function Evidence({ metric, v, method, correction }) {
  if (method === 'bayesian') {
    if (v.chanceToWin === null || v.chanceToWin === undefined) {
      return html`<span class="muted small" data-testid="chance" title="A chance to be better needs a declared direction"
        >chance: needs a direction</span
      >`;
    }
    return html`<span data-testid="chance"><strong>${formatChance(v.chanceToWin)}</strong> chance to be better</span>`;
  }
  // pValue decides: the correction's adjusted one exactly when the metric is in its family (older servers:
  // the absolute effect's).
  const adjusted = Boolean(metric.corrected) && correction !== 'none' && v.pValue !== undefined;
  const p = v.pValue ?? v.absolute?.pValue ?? null;
  return html`<span data-testid="pvalue" data-adjusted=${String(adjusted)}
    >${formatP(p)}${adjusted ? ` (${CORRECTION_SHORT[correction] ?? correction}-adjusted)` : ''}</span
  >`;
}

function TreatmentCell({ metric, v, scale, method, control, correction }) {
  const effect = effectOf(v, scale);
  const [tone, word] = significance(metric, v);
  const [estimate, interval] = effectText(effect, scale, metric.kind);
  // Before a covariate's adjustment, on the same scale (a lift absent for want of a control mean: none).
  const before = v.unadjusted && effectOf(v.unadjusted, scale);
  const unadjusted = before?.estimate !== undefined ? before : null;
  const label = `${v.key} against ${control} on ${metric.name}: ${estimate} ${interval}, ${word.toLowerCase()}`;
  return html`<td
    class="effect-cell"
    data-label=${`${v.key} vs ${control}`}
    data-testid=${`cell-${metric.name}-${v.key}`}
    data-significant=${String(Boolean(v.significant))}
  >
    <div class="mean-line">
      <span data-testid="mean">${formatValue(v.mean, metric.kind)}</span>
      <span class="muted small">n = <span data-testid="n">${formatCount(v.n)}</span></span>
    </div>
    <div class="lift-line">
      <strong class=${`lift ${tone}`} data-testid="lift">${estimate}</strong>
      <span class="muted small" data-testid="ci">${interval}</span>
    </div>
    ${v.test && html`<div class="muted small" data-testid="interval-test">${formatTest(v.test)}</div>`}
    ${
      metric.kind === 'proportion' &&
      scale.relative &&
      html`<div class="points-line small" data-testid="points">${formatPoints(v.absolute)}</div>`
    }
    <${EffectBar} effect=${effect} scale=${scale} tone=${tone} direction=${metric.direction} label=${label} />
    <div class="evidence-line">
      <${Evidence} metric=${metric} v=${v} method=${method} correction=${correction} />
      <span class=${`chip ${tone}`} data-testid="significance">${word}</span>
    </div>
    <${DerivedCell} metric=${metric} v=${v} effect=${unadjusted && effectText(unadjusted, scale, metric.kind)} />
    ${
      v.guardrail &&
      html`<p class=${`guardrail-line small ${v.guardrail.status}`} data-testid="guardrail" data-status=${v.guardrail.status}>
        ${guardrailText(metric.direction, v.guardrail)}
      </p>`
    }
    <${Quantiles} metric=${metric} v=${v} />
    ${
      v.moreUnits !== undefined &&
      v.moreUnits !== null &&
      html`<p class="hint small" data-testid="more-units">
        ${`About ${formatCount(v.moreUnits)} more ${metric.unit === 'user' ? 'users' : 'calls'} per variant to detect ${formatLift(metric.minimumDetectableEffect)}`}
      </p>`
    }
  </td>`;
}

const INTERVAL_WORDS = { bayesian: 'credible', sequential: 'always-valid', frequentist: 'confidence' };
const DIRECTION_WORDS = { increase: '↑ higher is better', decrease: '↓ lower is better' };

/**
 * What each number is, in words: the analysis' label ('mean per call, users as units'); a server without
 * labels gets the kind and, for a per-user reading, no claim about what is averaged.
 */
export function labelOf(metric) {
  if (metric.label) return metric.label;
  const what = metric.kind === 'proportion' ? 'share true' : 'mean';
  return metric.unit === 'user' ? `${what}, users as units` : `${what} per call`;
}

function MetricHead({ metric, scale, correction }) {
  const threshold =
    metric.role === 'guardrail' && metric.threshold !== undefined && metric.threshold !== null;
  return html`<th scope="row" data-label="Metric">
    <span class="metric-name">${metric.name}</span>
    ${metric.role && html`<span class=${`chip role-${metric.role}`} data-testid="role">${metric.role}</span>`}
    ${
      metric.corrected &&
      correction !== 'none' &&
      html`<span class="chip info" data-testid="corrected" title="Its p-values are adjusted for multiple comparisons"
        >${CORRECTION_SHORT[correction] ?? correction}-adjusted</span
      >`
    }
    <div class="muted small">
      ${DIRECTION_WORDS[metric.direction] ?? 'no direction declared'} · <span data-testid="metric-label">${labelOf(metric)}</span>
      ${scale && !scale.relative ? ' · absolute effect' : ''}
    </div>
    ${
      threshold &&
      html`<div class="muted small" data-testid="threshold">
        ${metric.threshold > 0 ? `tolerates up to ${formatShare(metric.threshold)} worse` : 'no loss tolerated'} (threshold ${formatShare(metric.threshold)})
      </div>`
    }
    <${DerivedHead} metric=${metric} />
  </th>`;
}

/** Every value the same in every variant: one plain line, no effects or intervals. */
function NoVariationRow({ metric, columns }) {
  const arms = metric.variants.filter((v) => v.n > 0);
  const n = arms.reduce((a, v) => a + v.n, 0);
  const value = arms[0]?.mean ?? null;
  return html`<tr data-testid=${`metric-row-${metric.name}`} data-no-variation="true">
    <${MetricHead} metric=${metric} scale=${null} correction="none" />
    <td colspan=${columns} data-label="Every variant" class="no-variation" data-testid="no-variation">
      No variation: every value is ${formatValue(value, metric.kind)} in every variant (n = ${formatCount(n)}), so there is
      nothing to compare.
    </td>
  </tr>`;
}

function MetricRow({ metric, control, treatments, method, correction }) {
  if (metric.noVariation) {
    return html`<${NoVariationRow} metric=${metric} columns=${treatments.length + 1} />`;
  }
  const scale = scaleOf(metric);
  const controlArm = metric.variants.find((v) => v.key === control);
  return html`<tr data-testid=${`metric-row-${metric.name}`} class=${metric.role === 'primary' ? 'primary-row' : ''}>
    <${MetricHead} metric=${metric} scale=${scale} correction=${correction} />
    <td data-label=${`${control} (control)`} data-testid=${`cell-${metric.name}-${control}`} class="control-cell">
      <span data-testid="mean">${formatValue(controlArm?.mean ?? null, metric.kind)}</span>
      <div class="muted small">n = <span data-testid="n">${formatCount(controlArm?.n ?? 0)}</span></div>
      <${DerivedCell} metric=${metric} v=${controlArm} />
      <${Quantiles} metric=${metric} v=${controlArm} />
    </td>
    ${treatments.map((key) => {
      const v = metric.variants.find((x) => x.key === key);
      return v
        ? html`<${TreatmentCell} metric=${metric} v=${v} scale=${scale} method=${method} control=${control} correction=${correction} />`
        : html`<td class="muted">—</td>`;
    })}
  </tr>`;
}

/**
 * Which correction is in use and on which metrics: 'P-values of latency_ms and judge_score are adjusted
 * (Benjamini–Hochberg (BH), …); success and cost_usd are read on their own.' Bayesian readings have none.
 */
export function correctionText(analysis) {
  const correction = analysis.correction ?? 'none';
  if (analysis.method === 'bayesian')
    return 'Bayesian reading: chances to be better, no p-values to correct.';
  const list = (names) => new Intl.ListFormat('en-US', { type: 'conjunction' }).format(names);
  const compared = analysis.metrics.filter((m) => !m.noVariation);
  if (correction === 'none') {
    return 'No multiple-comparison correction: each p-value stands alone (with many metrics, some look significant by chance).';
  }
  const family = compared.filter((m) => m.corrected).map((m) => m.name);
  const alone = compared.filter((m) => !m.corrected).map((m) => m.name);
  const name = CORRECTION_WORDS[correction] ?? correction;
  if (family.length === 0)
    return `${name} correction: no metric shown is in its family; p-values are unadjusted.`;
  return (
    `${name} correction across ${list(family)}: ${family.length === 1 ? 'its' : 'their'} p-values are adjusted and intervals widened to match` +
    (alone.length
      ? `; ${list(alone)} ${alone.length === 1 ? 'is' : 'are'} read on ${alone.length === 1 ? 'its' : 'their'} own.`
      : '.')
  );
}

export function Scorecard({ analysis, declared }) {
  const { control, method, alpha } = analysis;
  const correction = method === 'bayesian' ? 'none' : (analysis.correction ?? 'none');
  const metrics = orderMetrics(analysis.metrics, declared);
  if (metrics.length === 0) {
    return html`<p class="empty" data-testid="scorecard-empty">
      No metrics yet: results logged with <code>metrics</code> appear here.
    </p>`;
  }
  const treatments = metrics[0].variants.map((v) => v.key).filter((k) => k !== control);
  const level = `${Math.round((1 - alpha) * 1000) / 10}%`;
  return html`<div class="table-wrap">
    <table
      class="scorecard stack"
      data-testid="scorecard"
      data-method=${method}
      data-alpha=${alpha}
      data-control=${control}
      data-correction=${correction}
    >
      <caption>
        Each treatment against ${control}: mean, relative effect with its ${`${level} ${INTERVAL_WORDS[method] ?? ''} `}
        interval (the bar; the line is zero)${`, for proportions the difference in points, ${method === 'bayesian' ? 'chance to be better' : 'p-value'} and significance.`}
      </caption>
      <thead>
        <tr>
          <th scope="col">Metric</th>
          <th scope="col">${control} <span class="muted small">(control)</span></th>
          ${treatments.map((k) => html`<th scope="col">${k} <span class="muted small">vs ${control}</span></th>`)}
        </tr>
      </thead>
      <tbody>
        ${metrics.map(
          (m) =>
            html`<${MetricRow} key=${m.name} metric=${m} control=${control} treatments=${treatments} method=${method} correction=${correction} />`,
        )}
      </tbody>
    </table>
    <p class="muted small correction-note" data-testid="correction-note" data-correction=${correction}>
      ${correctionText(analysis)}
    </p>
  </div>`;
}
