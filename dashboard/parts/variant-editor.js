// The experiment form's variants: key, weight and JSON payload (checked as you type) of each, weights
// that must sum to 100, add and split evenly.
import { html } from '../html.js';
import { described, Field, row } from './field.js';
import { weightSum } from './form-rules.js';

export function VariantEditor({ rows, errors, onChange }) {
  const sum = weightSum(rows);
  const set = (i, name, value) => onChange(rows.map((r, j) => (j === i ? { ...r, [name]: value } : r)));
  const add = () =>
    onChange([
      ...rows,
      row({
        key: String.fromCharCode(65 + (rows.length % 26)),
        payload: '{\n  "prompt": ""\n}',
        weight: '0',
      }),
    ]);
  const even = () => {
    const share = Math.floor(10000 / rows.length) / 100;
    const last = Math.round((100 - share * (rows.length - 1)) * 100) / 100;
    onChange(rows.map((r, i) => ({ ...r, weight: String(i === rows.length - 1 ? last : share) })));
  };
  const left = Math.round((100 - sum.total) * 1e6) / 1e6;
  return html`<fieldset class="variants-editor">
    <legend>Variants</legend>
    ${rows.map((r, i) => {
      let json = null;
      try {
        const v = JSON.parse(r.payload);
        json =
          v !== null && typeof v === 'object' && !Array.isArray(v)
            ? null
            : 'The payload must be a JSON object: { … }';
      } catch (e) {
        json = `Not valid JSON yet: ${e.message}`;
      }
      const at = (name) => `variants.${i}.${name}`;
      const payloadError = errors[at('payload')] ?? json;
      return html`<div class="variant-row" key=${r.id} data-testid=${`variant-row-${i}`}>
        <div class="variant-fields">
          <${Field} id=${`v${r.id}-key`} label="Key" error=${errors[at('key')]}>
            <input
              id=${`v${r.id}-key`}
              value=${r.key}
              onInput=${(e) => set(i, 'key', e.currentTarget.value)}
              aria-invalid=${String(Boolean(errors[at('key')]))}
              aria-describedby=${described(`v${r.id}-key`, errors[at('key')])}
              data-testid="variant-key"
              autocomplete="off"
            />
          </${Field}>
          <${Field} id=${`v${r.id}-weight`} label="Weight (%)" error=${errors[at('trafficPercent')]}>
            <input
              id=${`v${r.id}-weight`}
              type="number"
              min="0"
              max="100"
              step="any"
              inputmode="decimal"
              value=${r.weight}
              onInput=${(e) => set(i, 'weight', e.currentTarget.value)}
              aria-invalid=${String(Boolean(errors[at('trafficPercent')] || errors.weights))}
              aria-describedby=${`${described(`v${r.id}-weight`, errors[at('trafficPercent')]) ?? ''} weight-sum`.trim()}
              data-testid="variant-weight"
            />
          </${Field}>
          <button
            type="button"
            class="link danger remove"
            onClick=${() => onChange(rows.filter((_, j) => j !== i))}
            disabled=${rows.length === 1}
            aria-label=${`Remove variant ${r.key || i + 1}`}
          >
            Remove
          </button>
        </div>
        <${Field} id=${`v${r.id}-payload`} label=${`Payload of ${r.key || 'this variant'} (JSON object)`} error=${payloadError}>
          <textarea
            id=${`v${r.id}-payload`}
            rows="5"
            spellcheck="false"
            class="mono"
            value=${r.payload}
            onInput=${(e) => set(i, 'payload', e.currentTarget.value)}
            aria-invalid=${String(Boolean(payloadError))}
            aria-describedby=${described(`v${r.id}-payload`, payloadError)}
            data-testid="variant-payload"
          ></textarea>
        </${Field}>
        ${errors[`variants.${i}`] && html`<p class="field-error" role="alert">${errors[`variants.${i}`]}</p>`}
      </div>`;
    })}
    <div class="weight-summary">
      <p
        class=${sum.ok ? 'ok' : 'field-error'}
        aria-live="polite"
        data-testid="weight-sum"
        data-total=${sum.total}
        id="weight-sum"
      >
        ${
          sum.ok
            ? 'Weights sum to 100%.'
            : left > 0
              ? `Weights sum to ${sum.total}%: ${left}% left to assign.`
              : `Weights sum to ${sum.total}%: ${-left}% too much.`
        }
      </p>
      ${errors.variants && html`<p class="field-error" role="alert" data-testid="error-variants">${errors.variants}</p>`}
      <div class="row-buttons">
        <button type="button" onClick=${add} disabled=${rows.length >= 100} data-testid="add-variant">Add variant</button>
        <button type="button" onClick=${even} data-testid="split-evenly">Split evenly</button>
      </div>
    </div>
  </fieldset>`;
}
