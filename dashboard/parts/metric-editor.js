// The experiment form's metric definitions, one aligned row each: name, direction, role, kind, statistic,
// smallest effect, the derived fields (ratio, cap, covariate) and a guardrail's tolerated loss.
import { html } from '../html.js';
import { DerivedFields } from './derived-fields.js';
import { derivedState } from './derived-rules.js';
import { described, Field, row } from './field.js';
import { STATISTICS } from './form-rules.js';

export function MetricEditor({ rows, errors, onChange }) {
  const set = (i, name, value) => onChange(rows.map((r, j) => (j === i ? { ...r, [name]: value } : r)));
  const add = () =>
    onChange([
      ...rows,
      row({
        // No default direction or role: the user chooses both (form-rules.js refuses to save until then).
        name: '',
        direction: '',
        role: '',
        kind: '',
        mde: '',
        threshold: '',
        statistic: 'mean',
        statisticSet: false,
        ...derivedState(),
      }),
    ]);
  const primaries = rows.filter((r) => r.role === 'primary').length;
  const select = (i, r, name, label, options) => {
    const id = `m${r.id}-${name}`;
    const error = errors[`metrics.${i}.${name}`];
    return html`<${Field} id=${id} label=${label} error=${error}>
      <select id=${id} value=${r[name]} onChange=${(e) => set(i, name, e.currentTarget.value)} data-testid=${`metric-${name}`}
        aria-invalid=${String(Boolean(error))} aria-describedby=${described(id, error)}>
        ${options.map(([value, text]) => html`<option value=${value}>${text}</option>`)}
      </select>
    </${Field}>`;
  };
  return html`<fieldset class="metrics-editor">
    <legend>Metrics</legend>
    <p class="hint small">
      Declare which way is better so the analysis can name a winner: there is no default, choose it and the
      role for each metric (cost and latency are usually better lower). The primary metric decides the verdict;
      a guardrail fails when its interval lies wholly beyond its threshold, the loss you tolerate in its worse
      direction (0%: none). Numeric metrics compare their mean, or a quantile (p95: the slowest 5% of calls).
      A metric can also be defined as a ratio of two logged metrics (cost_usd per success), capped against
      heavy tails, or adjusted on a covariate the treatment cannot change (input_tokens) to narrow its intervals.
      Metrics you do not declare are still analysed, without a direction.
    </p>
    ${rows.map((r, i) => {
      const nameId = `m${r.id}-name`;
      const mdeId = `m${r.id}-mde`;
      const nameError = errors[`metrics.${i}.name`];
      const mdeError = errors[`metrics.${i}.minimumDetectableEffect`];
      const thresholdId = `m${r.id}-threshold`;
      const thresholdError = errors[`metrics.${i}.threshold`];
      return html`<div class="metric-row" key=${r.id} data-testid=${`metric-row-${i}`}>
        <${Field} id=${nameId} label="Name" error=${nameError}>
          <input id=${nameId} value=${r.name} onInput=${(e) => set(i, 'name', e.currentTarget.value)} data-testid="metric-name"
            aria-invalid=${String(Boolean(nameError))} aria-describedby=${described(nameId, nameError)} autocomplete="off" />
        </${Field}>
        ${select(i, r, 'direction', 'Better when', [
          ['', 'choose…'],
          ['increase', 'higher'],
          ['decrease', 'lower'],
        ])}
        ${select(i, r, 'role', 'Role', [
          ['', 'choose…'],
          ['primary', 'primary'],
          ['secondary', 'secondary'],
          ['guardrail', 'guardrail'],
        ])}
        ${select(i, r, 'kind', 'Kind', [
          ['', 'as logged'],
          ['mean', 'mean'],
          ['proportion', 'proportion'],
        ])}
        ${select(
          i,
          r,
          'statistic',
          'Compared on',
          STATISTICS.map((x) => [x, x === 'p50' ? 'p50 (median)' : x]),
        )}
        <${Field} id=${mdeId} label="Smallest effect worth detecting (%)" error=${mdeError}>
          <input id=${mdeId} type="number" min="0" step="any" inputmode="decimal" placeholder="optional" value=${r.mde}
            onInput=${(e) => set(i, 'mde', e.currentTarget.value)} data-testid="metric-mde"
            aria-invalid=${String(Boolean(mdeError))} aria-describedby=${described(mdeId, mdeError)} />
        </${Field}>
        <${DerivedFields} r=${r} i=${i} errors=${errors} set=${set} Field=${Field} described=${described} />
        ${
          r.role === 'guardrail' &&
          html`<${Field} id=${thresholdId} label="Loss tolerated (%)" error=${thresholdError}>
            <input id=${thresholdId} type="number" min="0" max="1000" step="any" inputmode="decimal" placeholder="0"
              value=${r.threshold} onInput=${(e) => set(i, 'threshold', e.currentTarget.value)} data-testid="metric-threshold"
              title="How much worse, relative, the guardrail may get and still pass: 5 for at most 5% worse"
              aria-invalid=${String(Boolean(thresholdError))} aria-describedby=${described(thresholdId, thresholdError)} />
          </${Field}>`
        }
        <button type="button" class="link danger remove" onClick=${() => onChange(rows.filter((_, j) => j !== i))}
          aria-label=${`Remove metric ${r.name || i + 1}`}>Remove</button>
        ${errors[`metrics.${i}`] && html`<p class="field-error" role="alert">${errors[`metrics.${i}`]}</p>`}
      </div>`;
    })}
    ${primaries > 1 && html`<p class="hint small">Only the first primary metric decides the verdict.</p>`}
    ${errors.metrics && html`<p class="field-error" role="alert" data-testid="error-metrics">${errors.metrics}</p>`}
    <button type="button" onClick=${add} data-testid="add-metric">Add metric</button>
  </fieldset>`;
}
