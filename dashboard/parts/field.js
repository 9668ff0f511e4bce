// The experiment form's field: a label, the control, its hint and the error the API or the form has for
// it; and the aria-describedby that names them. Rows carry a form-wide unique id.
import { html } from '../html.js';

let nextRow = 0;
/** A form row (a variant, a metric) with an id unique in the page, for keys and element ids. */
export const row = (fields) => ({ id: ++nextRow, ...fields });

/** A label, the control, and the error the API or the form has for it. */
export function Field({ id, label, error, hint, wide, children }) {
  return html`<div class=${wide ? 'field wide' : 'field'}>
    <label for=${id}>${label}</label>
    ${children}
    ${hint && html`<p class="hint small" id=${`${id}-hint`}>${hint}</p>`}
    ${error && html`<p class="field-error" id=${`${id}-error`} role="alert" data-testid=${`error-${id}`}>${error}</p>`}
  </div>`;
}

export const described = (id, error, hint) =>
  [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
