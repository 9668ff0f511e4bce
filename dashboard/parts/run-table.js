// An offline run's comparison as a table (issue 40, GET /runs/:id/comparison): one row per metric and
// variant against the control, over the items both answered: both means, the mean difference with its
// paired t interval, the paired t p-value and its Holm adjustment, the Wilcoxon signed-rank p-value, the
// bootstrap interval, McNemar's test (pass/fail, one trial), wins / ties / losses, where a trial's variance
// comes from (repeated trials) and the items needed to detect the difference seen.
import { formatCount, formatNumber, formatP, formatPoints, formatValue } from '../format.js';
import { html } from '../html.js';

/** The primary metric: the one the experiment declares primary, else the comparison's first. */
export function primaryMetric(comparison, declared = []) {
  const named = declared.find((d) => d.role === 'primary')?.name;
  return comparison.metrics.find((m) => m.name === named) ?? comparison.metrics[0] ?? null;
}

/** The primary metric first, then the API's order. */
export function orderRunMetrics(comparison, declared = []) {
  const primary = primaryMetric(comparison, declared);
  return primary ? [primary, ...comparison.metrics.filter((m) => m !== primary)] : [];
}

// Points as formatPoints writes them: one decimal at most, signed unless zero.
const points = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

/** A p-value in a cell: two significant figures, '< 0.0001' below that, '—' when not computed. */
export function pText(p) {
  if (p === null || p === undefined) return '—';
  if (p < 1e-4) return '< 0.0001';
  return String(Number(p.toPrecision(2)));
}

/** +1.25 / -0.5 / 0: a signed difference in the metric's units. */
function signed(x) {
  if (x === 0) return '0';
  return `${x > 0 ? '+' : '-'}${formatNumber(Math.abs(x))}`;
}

/** A difference and its interval: points for pass/fail ('+30 points [+15.2, +44.8]'), else its units. */
export function differenceText(estimate, ci, kind) {
  if (kind === 'proportion') return formatPoints({ estimate, ci: ci ?? [null, null] });
  return `${signed(estimate)}${ci ? ` [${signed(ci[0])}, ${signed(ci[1])}]` : ''}`;
}

/** An interval alone: '[+15.2, +44.8] points' for pass/fail, '[-0.5, +1.25]' otherwise; '—' when none. */
export function intervalText(ci, kind) {
  if (!ci) return '—';
  if (kind === 'proportion') return `[${points.format(ci[0] * 100)}, ${points.format(ci[1] * 100)}] points`;
  return `[${signed(ci[0])}, ${signed(ci[1])}]`;
}

/** '64% generation · 36% items': where one trial's variance comes from. */
export function varianceText(v) {
  if (!v) return '—';
  const pct = (x) => `${Math.round(x * 100)}%`;
  return `${pct(v.generation)} generation · ${pct(v.items)} items`;
}

/** 'A only 5 · B only 30', then 'p = 0.0001' on a line of its own ('A only': items the control passed and the treatment failed). */
export function mcnemarText(m, control, variant) {
  if (!m) return '—';
  return `${control} only ${m.b} · ${variant} only ${m.c}\n${formatP(m.pValue)}`;
}

/** Text that may wrap between its estimate and its interval, never inside either. */
function Breakable({ text }) {
  const parts = text.split(/ (?=\[)|(?<=\]) /);
  return parts.map((part, i) => html`${i > 0 ? ' ' : ''}<span class="nowrap">${part}</span>`);
}

const DIRECTION_WORDS = { increase: '↑ higher is better', decrease: '↓ lower is better' };

/** Better, worse, or not significant after Holm's adjustment: a word and its colour. */
export function verdictOf(c) {
  if (!c.significant) return ['neutral', 'Not significant'];
  if (c.better === true) return ['good', 'Better'];
  if (c.better === false) return ['bad', 'Worse'];
  return ['info', c.difference.estimate > 0 ? 'Higher' : 'Lower'];
}

function Row({ metric, c, control, primary, show }) {
  const [tone, word] = verdictOf(c);
  const kind = metric.kind;
  return html`<tr data-testid="comparison-row" data-metric=${metric.name} data-variant=${c.variant}
    data-significant=${String(c.significant)} class=${primary ? 'primary-row' : ''}>
    <th scope="row" data-label="Metric">
      <span class="metric-name">${metric.name}</span>
      ${primary && html`<span class="chip role-primary" data-testid="primary-chip">primary</span>`}
      <div class="muted small">
        ${DIRECTION_WORDS[metric.direction] ?? 'no direction declared'} · ${kind === 'proportion' ? 'pass/fail' : 'mean'}
      </div>
    </th>
    <td data-label="Variant">
      <span class="mono strong" data-testid="run-variant">${c.variant} vs ${control}</span>
      <div><span class=${`chip ${tone}`} data-testid="run-significance">${word}</span></div>
      <div class="muted small" data-testid="run-items">
        ${formatCount(c.items)} items${c.unpaired > 0 ? ` (${formatCount(c.unpaired)} unpaired, left out)` : ''}
      </div>
    </td>
    <td data-label=${`${control} (control)`} class="num" data-testid="run-control-mean">${formatValue(c.control.mean, kind)}</td>
    <td data-label=${c.variant} class="num" data-testid="run-treatment-mean">${formatValue(c.treatment.mean, kind)}</td>
    <td data-label="Difference (paired t)" data-testid="run-difference">
      <strong class=${`lift ${tone}`}><${Breakable} text=${differenceText(c.difference.estimate, c.difference.ci, kind)} /></strong>
    </td>
    <td data-label="p (paired t)" class="num" data-testid="run-p">${pText(c.difference.pValue)}</td>
    <td data-label="p (Holm)" class="num" data-testid="run-holm">${pText(c.adjustedPValue)}</td>
    <td data-label="Wilcoxon p" class="num" data-testid="run-wilcoxon"
      title=${c.wilcoxon ? `signed-rank statistic ${formatNumber(c.wilcoxon.statistic)}, ${c.wilcoxon.method}, n = ${c.wilcoxon.n}` : undefined}>
      ${pText(c.wilcoxon?.pValue)}
    </td>
    <td data-label="Bootstrap" data-testid="run-bootstrap"
      title=${c.bootstrap ? `${formatCount(c.bootstrap.resamples)} resamples of the items` : undefined}>
      <${Breakable} text=${intervalText(c.bootstrap?.ci ?? null, kind)} />
    </td>
    ${show.mcnemar && html`<td data-label="McNemar" data-testid="run-mcnemar">${mcnemarText(c.mcnemar, control, c.variant)}</td>`}
    <td data-label="Wins / ties / losses" class="num" data-testid="run-wtl">${c.wins} / ${c.ties} / ${c.losses}</td>
    ${show.variance && html`<td data-label="Variance" data-testid="run-variance">${varianceText(c.variance)}</td>`}
    <td data-label="Items needed" class="num" data-testid="run-items-needed">${formatCount(c.itemsNeeded)}</td>
  </tr>`;
}

export function RunTable({ comparison, declared }) {
  const metrics = orderRunMetrics(comparison, declared);
  const rows = metrics.flatMap((m) => m.comparisons.map((c) => ({ m, c })));
  if (rows.length === 0) {
    return html`<p class="empty" data-testid="comparison-empty">
      Nothing to compare yet: no metric has values from ${comparison.control} and another variant on the same items.
    </p>`;
  }
  const show = {
    mcnemar: rows.some(({ c }) => c.mcnemar),
    variance: rows.some(({ c }) => c.variance),
  };
  const level = `${Math.round((1 - comparison.alpha) * 1000) / 10}%`;
  return html`<div class="table-wrap">
    <table class="stack compact run-table" data-testid="comparison-table" data-control=${comparison.control}>
      <caption>
        Each variant against ${comparison.control}, over the items both answered (each item the mean of its trials):
        ${` ${level} intervals; p-values two-sided, Holm-adjusted across the metrics of each variant.`}
      </caption>
      <thead>
        <tr>
          <th scope="col">Metric</th>
          <th scope="col">Variant</th>
          <th scope="col" class="num">${comparison.control} <span class="muted small">(control)</span></th>
          <th scope="col" class="num">Treatment</th>
          <th scope="col">Difference <span class="muted small">(paired t)</span></th>
          <th scope="col" class="num">p</th>
          <th scope="col" class="num">p <span class="muted small">(Holm)</span></th>
          <th scope="col" class="num">Wilcoxon p</th>
          <th scope="col">Bootstrap</th>
          ${show.mcnemar && html`<th scope="col">McNemar</th>`}
          <th scope="col" class="num" title="Items where the variant scored higher / the same / lower">W / T / L</th>
          ${show.variance && html`<th scope="col" title="Where one trial's variance comes from">Variance</th>`}
          <th scope="col" class="num" title="Items needed to detect this difference (80% power)">Items needed</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          ({ m, c }) =>
            html`<${Row} key=${`${m.name}/${c.variant}`} metric=${m} c=${c} control=${comparison.control}
              primary=${m === metrics[0]} show=${show} />`,
        )}
      </tbody>
    </table>
  </div>`;
}
