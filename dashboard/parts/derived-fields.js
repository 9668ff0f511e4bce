// A metric row's derived definition in the experiment form: the select and the inputs its choice needs
// (the rules: derived-rules.js).
import { html } from '../html.js';
import { DERIVED_CHOICES } from './derived-rules.js';

/** The select and the inputs the choice needs; `Field` and `described` are the form's own. */
export function DerivedFields({ r, i, errors, set, Field, described }) {
  const input = (name, label, attrs) => {
    const id = `m${r.id}-${name}`;
    const error = errors[`metrics.${i}.${name}`];
    return html`<${Field} id=${id} label=${label} error=${error} wide=${!attrs.type}>
      <input id=${id} value=${r[name]} onInput=${(e) => set(i, name, e.currentTarget.value)} data-testid=${`metric-${name}`}
        aria-invalid=${String(Boolean(error))} aria-describedby=${described(id, error)} autocomplete="off" ...${attrs} />
    </${Field}>`;
  };
  const number = { type: 'number', step: 'any', inputmode: 'decimal' };
  const id = `m${r.id}-derived`;
  return html`<${Field} id=${id} label="Defined as" wide>
      <select id=${id} value=${r.derived} onChange=${(e) => set(i, 'derived', e.currentTarget.value)} data-testid="metric-derived"
        title="A ratio of two logged metrics, a cap against heavy tails, or an adjustment on a metric the treatment cannot change">
        ${DERIVED_CHOICES.map(([value, text]) => html`<option value=${value}>${text}</option>`)}
      </select>
    </${Field}>
    ${r.derived === 'ratio' && input('numerator', 'Numerator', { placeholder: 'cost_usd' })}
    ${r.derived === 'ratio' && input('denominator', 'Denominator', { placeholder: 'success' })}
    ${r.derived === 'cap-value' && input('cap', 'Cap', { ...number, placeholder: '0.05' })}
    ${r.derived === 'cap-percentile' && input('cap', 'Cap percentile', { ...number, min: '0', max: '100', placeholder: '99' })}
    ${r.derived === 'covariate' && input('covariate', 'Covariate', { placeholder: 'input_tokens' })}`;
}
