// Start a rollout (issue 38): which variant to ship, the ramp (percents, minutes held at each, units and
// approvals before a step), and what a proven regression does. The guardrails are the experiment's own
// (the server's default), shown read-only. POST /experiment/:slug/rollout; the server's 400/409 is shown
// as it is. "Ship B" on the verdict opens this form with B chosen.
import { useEffect, useRef, useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { formatShare } from '../format.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { controlOf } from './rollout-data.js';
import { DryRun } from './rollout-dry-run.js';

export const DEFAULT_PERCENTS = '5, 25, 50, 100';
export const DEFAULT_MINUTES = '60';

/** The variants a rollout may ship: every one but the control. */
export function shippable(experiment) {
  const control = controlOf(experiment);
  return experiment.variants.map((v) => v.key).filter((k) => k !== control);
}

/** "cost_usd (5%), latency_ms (any loss)": the experiment's guardrails, which a rollout watches by default. */
export function guardedBy(experiment) {
  const guardrails = experiment.metrics.filter((m) => m.role === 'guardrail');
  if (guardrails.length === 0) return null;
  return guardrails
    .map((m) => `${m.name} (${m.threshold > 0 ? `${formatShare(m.threshold)} worse` : 'any loss'})`)
    .join(', ');
}

/** "5, 25 50" → [5, 25, 50]; an error sentence for anything that is not a number. */
function numbers(text, what) {
  const parts = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = parts.find((s) => !Number.isFinite(Number(s)));
  if (bad !== undefined) return { error: `${what}: '${bad}' is not a number` };
  return { values: parts.map(Number) };
}

/** The POST body from the form's text, or `{ errors }` naming the field. */
export function rolloutBody(form) {
  const errors = {};
  const percents = numbers(form.percents, 'Steps');
  if (percents.error) errors.percents = percents.error;
  else if (percents.values.length === 0) errors.percents = 'Steps: name at least one percent (the last 100)';
  const approve = numbers(form.approve, 'Approval before');
  if (approve.error) errors.approve = approve.error;
  const minutes = Number(form.minutes);
  if (form.minutes.trim() === '' || !Number.isFinite(minutes) || minutes < 0) {
    errors.minutes = 'Minutes: a number, 0 or more';
  }
  const units = form.minUnits.trim() === '' ? null : Number(form.minUnits);
  if (units !== null && !(Number.isInteger(units) && units >= 0)) {
    errors.minUnits = 'Units: a whole number, 0 or more (or empty: no minimum)';
  }
  if (Object.keys(errors).length > 0) return { errors };
  const steps = percents.values.map((percent) => ({
    percent,
    // At 100% the rollout completes: no time is held there.
    ...(percent < 100 ? { minMinutes: minutes } : {}),
    ...(units !== null && percent < 100 ? { minUnits: units } : {}),
    ...(approve.values.includes(percent) ? { approval: true } : {}),
  }));
  return { body: { variant: form.variant, steps, onRegression: form.onRegression } };
}

function initial(experiment, preset) {
  const variants = shippable(experiment);
  return {
    variant: preset && variants.includes(preset) ? preset : (variants[0] ?? ''),
    percents: DEFAULT_PERCENTS,
    minutes: DEFAULT_MINUTES,
    minUnits: '',
    approve: '',
    onRegression: 'rollback',
  };
}

function TextField({ id, label, value, error, hint, onInput, inputmode = 'text' }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input id=${id} type="text" inputmode=${inputmode} value=${value} onInput=${onInput}
      aria-invalid=${String(Boolean(error))} aria-describedby=${hint ? `${id}-hint` : undefined}
      data-testid=${id} />
    ${hint && html`<p class="hint small" id=${`${id}-hint`}>${hint}</p>`}
    ${error && html`<p class="field-error" role="alert" data-testid=${`${id}-error`}>${error}</p>`}
  </div>`;
}

export function RolloutForm({ experiment, preset, onStarted, onCancel }) {
  const { api } = useSession();
  const [form, setForm] = useState(() => initial(experiment, preset));
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const first = useRef(null);
  useEffect(() => {
    first.current?.focus();
  }, []);
  const set = (field) => (e) => setForm({ ...form, [field]: e.currentTarget.value });
  const control = controlOf(experiment);
  const guarded = guardedBy(experiment);

  const submit = async (e) => {
    e.preventDefault();
    const { body, errors: found } = rolloutBody(form);
    setErrors(found ?? {});
    setError(null);
    if (!body) return;
    setBusy(true);
    try {
      onStarted(await api.post(experimentPath(experiment.slug, '/rollout'), body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="rollout-form" onSubmit=${submit} data-testid="rollout-form" aria-labelledby="rollout-form-title">
    <h3 id="rollout-form-title">Start a rollout</h3>
    <p class="hint small">
      Ramps one variant to everyone in steps; everyone else gets ${control}. The guardrail monitor moves it on
      and rolls it back on a proven regression.
    </p>
    <div class="rollout-fields">
      <label class="field">
        <span>Variant to ship</span>
        <select ref=${first} value=${form.variant} onChange=${set('variant')} data-testid="rollout-variant">
          ${shippable(experiment).map((k) => html`<option value=${k}>${k}</option>`)}
        </select>
      </label>
      <${TextField} id="rollout-percents" label="Steps (percent served)" value=${form.percents}
        error=${errors.percents} onInput=${set('percents')} hint="Increasing, the last 100" />
      <${TextField} id="rollout-minutes" label="Minutes at each step" value=${form.minutes} inputmode="decimal"
        error=${errors.minutes} onInput=${set('minutes')} hint="Held before the next step" />
      <${TextField} id="rollout-min-units" label="Units in the variant before a step" value=${form.minUnits}
        inputmode="numeric" error=${errors.minUnits} onInput=${set('minUnits')} hint="Empty: no minimum" />
      <${TextField} id="rollout-approve" label="Approval before (percents)" value=${form.approve}
        error=${errors.approve} onInput=${set('approve')} hint="e.g. 100: a person approves the last step" />
      <label class="field">
        <span>On a regression</span>
        <select value=${form.onRegression} onChange=${set('onRegression')} data-testid="rollout-on-regression">
          <option value="rollback">roll back (everyone to ${control})</option>
          <option value="pause">pause (hold the step)</option>
        </select>
      </label>
    </div>
    <p class="small" data-testid="rollout-guarded-by">
      <strong>Guarded by:</strong> ${guarded ?? "no guardrails (declare a metric with role 'guardrail' to have one watched)"}
    </p>
    <${DryRun} experiment=${experiment} body=${guarded ? (rolloutBody(form).body ?? null) : null} />
    <${ErrorNote} error=${error} testid="rollout-start-error" />
    <div class="form-buttons">
      <button type="submit" class="primary" disabled=${busy} data-testid="rollout-start">
        ${busy ? 'Starting…' : `Start rollout of ${form.variant}`}
      </button>
      <button type="button" onClick=${onCancel} data-testid="rollout-cancel">Cancel</button>
    </div>
  </form>`;
}
