// The experiment form's guardrail monitor settings (issue 27): what the monitor does when a guardrail
// fails (notify, or also pause) and how many units each variant needs before it judges.
import { html } from '../html.js';
import { monitorText, useSettings } from './settings.js';

const actionHint = (settings) =>
  `What the guardrail monitor does when a guardrail metric fails (sequential test, ${monitorText(settings)}): ` +
  'notify records a guardrail.failed event in the history; pause also pauses the experiment, so assign ' +
  'answers 404 and clients fall back to their default.';
const UNITS_HINT =
  'Units (users of a sticky experiment, calls otherwise) each variant needs on every guardrail before the monitor judges.';

/** The form's fields for an experiment (or the defaults for a new one). */
export function guardrailState(experiment) {
  return {
    guardrailAction: experiment?.guardrailAction ?? 'notify',
    minimumUnits: String(experiment?.minimumUnits ?? 100),
  };
}

/** What the form would send: both fields on create, the changed ones on edit; an error when not an integer ≥ 1. */
export function guardrailBody(form, experiment) {
  const units = Number(form.minimumUnits);
  if (!/^\s*\d+\s*$/.test(form.minimumUnits) || !Number.isInteger(units) || units < 1) {
    return { errors: { minimumUnits: 'minimumUnits must be a whole number of at least 1' }, body: {} };
  }
  const body = {};
  if (!experiment || form.guardrailAction !== experiment.guardrailAction) {
    body.guardrailAction = form.guardrailAction;
  }
  if (!experiment || units !== experiment.minimumUnits) body.minimumUnits = units;
  return { errors: {}, body };
}

export function GuardrailFields({ form, errors, set }) {
  const settings = useSettings();
  const error = (name) =>
    errors[name] &&
    html`<p class="field-error" id=${`${name}-error`} role="alert" data-testid=${`error-${name}`}>${errors[name]}</p>`;
  const describedBy = (name) => [`${name}-hint`, errors[name] ? `${name}-error` : ''].join(' ').trim();
  return html`<fieldset data-testid="guardrail-fields">
    <legend>Guardrail monitor</legend>
    <div class="grid-2">
      <div class="field">
        <label for="guardrailAction">When a guardrail fails</label>
        <select id="guardrailAction" value=${form.guardrailAction} onChange=${set('guardrailAction')}
          aria-describedby=${describedBy('guardrailAction')} data-testid="field-guardrailAction">
          <option value="notify">notify</option>
          <option value="pause">pause</option>
        </select>
        <p class="hint small" id="guardrailAction-hint" data-testid="guardrailAction-hint">${actionHint(settings)}</p>
        ${error('guardrailAction')}
      </div>
      <div class="field">
        <label for="minimumUnits">Minimum units per variant</label>
        <input id="minimumUnits" type="number" min="1" step="1" inputmode="numeric" value=${form.minimumUnits}
          onInput=${set('minimumUnits')} aria-invalid=${String(Boolean(errors.minimumUnits))}
          aria-describedby=${describedBy('minimumUnits')} data-testid="field-minimumUnits" />
        <p class="hint small" id="minimumUnits-hint">${UNITS_HINT}</p>
        ${error('minimumUnits')}
      </div>
    </div>
  </fieldset>`;
}
