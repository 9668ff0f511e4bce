// Who enters an experiment (ADR 0038) in the experiment form: targeting (a GrowthBook condition, JSON
// checked as you type), coverage, layer, QA overrides and the default variant. The server checks the
// condition's operators and names the path it refuses (targeting.plan.$inn); this file only checks JSON.
import { html } from '../html.js';
import { LayerHint } from './layer-hint.js';

/** Clickable starting points: the condition language is GrowthBook's, which few people know by heart. */
export const EXAMPLES = [
  ['plan in [pro, team]', { plan: { $in: ['pro', 'team'] } }],
  ['country not FR', { country: { $ne: 'FR' } }],
  ['app version ≥ 1.2.0', { appVersion: { $vgte: '1.2.0' } }],
  ['email at example.com', { email: { $regex: '@example\\.com$' } }],
];

let nextRow = 0;
function overrideRow(o) {
  const byIds = !o || o.userIds !== undefined;
  return {
    id: ++nextRow,
    variant: o?.variant ?? '',
    mode: byIds ? 'ids' : 'condition',
    ids: byIds ? (o?.userIds ?? []).join(', ') : '',
    condition: byIds ? '' : JSON.stringify(o.condition),
  };
}

/** The form's fields for an experiment (or a new one's defaults). */
export function whoState(experiment) {
  const layer = experiment?.layer ?? null;
  return {
    targeting: experiment?.targeting ? JSON.stringify(experiment.targeting, null, 2) : '',
    coverage: String(experiment?.coverage ?? 100),
    layerKey: layer?.key ?? '',
    layerStart: layer ? String(layer.range[0]) : '0',
    layerEnd: layer ? String(layer.range[1]) : '1',
    overrides: (experiment?.overrides ?? []).map(overrideRow),
    defaultVariant: experiment?.defaultVariant ?? '',
  };
}

/** A condition's text: '' is null (everyone); else a JSON object, or why it is not one yet. */
export function conditionOf(text) {
  if (text.trim() === '') return { value: null, error: null };
  try {
    const v = JSON.parse(text);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      return { value: null, error: 'A condition is a JSON object: {"plan": {"$in": ["pro"]}}' };
    }
    return { value: v, error: null };
  } catch (e) {
    return { value: null, error: `Not valid JSON yet: ${e.message}` };
  }
}

/** What the form would send for who enters (only what changed, on edit), or what keeps it from sending. */
export function whoBody(form, experiment) {
  const errors = {};
  const targeting = conditionOf(form.targeting);
  if (targeting.error) errors.targeting = targeting.error;
  const coverage = form.coverage.trim() === '' ? Number.NaN : Number(form.coverage);
  if (!(coverage >= 0 && coverage <= 100)) errors.coverage = 'A percentage from 0 to 100';
  let layer = null;
  if (form.layerKey.trim()) {
    const range = [Number(form.layerStart), Number(form.layerEnd)];
    const blank = form.layerStart.trim() === '' || form.layerEnd.trim() === '';
    if (blank || !(range[0] >= 0 && range[0] < range[1] && range[1] <= 1)) {
      errors.layer = 'The range is [start, end) with 0 ≤ start < end ≤ 1 (fractions of the layer)';
    }
    layer = { key: form.layerKey.trim(), range };
  }
  const overrides = form.overrides.map((r, i) => {
    if (r.mode === 'ids') {
      const userIds = r.ids
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (userIds.length === 0) errors[`overrides.${i}`] = 'List at least one user id (comma-separated)';
      return { variant: r.variant, userIds };
    }
    const c = conditionOf(r.condition);
    if (c.error || c.value === null)
      errors[`overrides.${i}`] = c.error ?? 'Write a condition: {"email": "qa@x.io"}';
    return { variant: r.variant, condition: c.value };
  });
  const fields = {
    targeting: targeting.value,
    coverage,
    layer,
    overrides,
    defaultVariant: form.defaultVariant || null,
  };
  const defaults = { targeting: null, coverage: 100, layer: null, overrides: [], defaultVariant: null };
  const body = {};
  for (const [name, value] of Object.entries(fields)) {
    const was = experiment ? (experiment[name] ?? defaults[name]) : defaults[name];
    if (JSON.stringify(value) !== JSON.stringify(was)) body[name] = value;
  }
  return { errors, body };
}

/** The field a server message about who enters belongs to ('targeting', 'layer', …), or null. */
export function whoFieldOf(message) {
  const m = /^(?:body\/)?(targeting|coverage|layer|overrides|defaultVariant)\b/.exec(message);
  return m ? m[1] : null;
}

function FieldError({ id, error }) {
  return (
    error &&
    html`<p class="field-error" id=${`${id}-error`} role="alert" data-testid=${`error-${id}`}>${error}</p>`
  );
}

function Overrides({ rows, keys, errors, onChange }) {
  const set = (i, name, value) => onChange(rows.map((r, j) => (j === i ? { ...r, [name]: value } : r)));
  const add = () => onChange([...rows, { ...overrideRow(null), variant: keys[keys.length - 1] ?? '' }]);
  return html`<div class="field" role="group" aria-labelledby="overrides-label" data-testid="overrides">
    <span id="overrides-label">Overrides (QA: always served, never analysed; first match wins)</span>
    ${rows.map((r, i) => {
      const error = errors[`overrides.${i}`];
      return html`<div class="override-row" key=${r.id} data-testid=${`override-${i}`}>
        <select value=${r.variant} onChange=${(e) => set(i, 'variant', e.currentTarget.value)}
          aria-label=${`Variant of override ${i + 1}`} data-testid="override-variant">
          ${!keys.includes(r.variant) && html`<option value=${r.variant}>${r.variant || 'choose…'}</option>`}
          ${keys.map((k) => html`<option value=${k}>${k}</option>`)}
        </select>
        <select value=${r.mode} onChange=${(e) => set(i, 'mode', e.currentTarget.value)}
          aria-label=${`Override ${i + 1} matches`} data-testid="override-mode">
          <option value="ids">user ids</option>
          <option value="condition">condition</option>
        </select>
        <input class="mono" value=${r.mode === 'ids' ? r.ids : r.condition} autocomplete="off" spellcheck="false"
          placeholder=${r.mode === 'ids' ? 'qa-1, qa-2' : '{"email": {"$regex": "@qa\\\\."}}'}
          onInput=${(e) => set(i, r.mode === 'ids' ? 'ids' : 'condition', e.currentTarget.value)}
          aria-label=${r.mode === 'ids' ? `User ids of override ${i + 1}` : `Condition of override ${i + 1}`}
          aria-invalid=${String(Boolean(error))} data-testid="override-value" />
        <button type="button" class="link danger" onClick=${() => onChange(rows.filter((_, j) => j !== i))}
          aria-label=${`Remove override ${i + 1}`}>Remove</button>
        ${error && html`<p class="field-error" role="alert">${error}</p>`}
      </div>`;
    })}
    <${FieldError} id="overrides" error=${errors.overrides} />
    <div class="row-buttons">
      <button type="button" class="small" onClick=${add} disabled=${rows.length >= 50} data-testid="add-override">
        Add override
      </button>
    </div>
  </div>`;
}

/** The "Who enters" fieldset; `preview` (the preview box, on edit) sits beside the fields. */
export function WhoEntersFields({ form, errors, update, keys, slug, preview }) {
  const set = (name) => (e) => update({ ...form, [name]: e.currentTarget.value });
  const typed = conditionOf(form.targeting).error;
  const targetingError = errors.targeting ?? typed;
  return html`<fieldset data-testid="who-enters">
    <legend>Who enters</legend>
    <div class=${preview ? 'who-enters' : ''}>
      <div>
        <div class="field">
          <label for="targeting">Targeting (a GrowthBook condition over the assign context and userId)</label>
          <textarea id="targeting" rows="6" class="mono" spellcheck="false" value=${form.targeting}
            onInput=${set('targeting')} placeholder="empty: everyone enters" data-testid="field-targeting"
            aria-invalid=${String(Boolean(targetingError))}
            aria-describedby=${targetingError ? 'targeting-error targeting-hint' : 'targeting-hint'}></textarea>
          <div class="row-buttons" role="group" aria-label="Targeting examples">
            ${EXAMPLES.map(
              ([label, value]) => html`<button type="button" class="small" data-testid="targeting-example"
                onClick=${() => update({ ...form, targeting: JSON.stringify(value, null, 2) })}>${label}</button>`,
            )}
          </div>
          <p class="hint small" id="targeting-hint">
            Empty: everyone. Changing targeting, coverage or layer starts a new version; overrides and the default do not.
          </p>
          <${FieldError} id="targeting" error=${targetingError} />
        </div>
        <div class="grid-2">
          <div class="field">
            <label for="coverage">Coverage (%)</label>
            <input id="coverage" type="number" min="0" max="100" step="any" inputmode="decimal" value=${form.coverage}
              onInput=${set('coverage')} aria-invalid=${String(Boolean(errors.coverage))} data-testid="field-coverage" />
            <${FieldError} id="coverage" error=${errors.coverage} />
          </div>
          <div class="field">
            <label for="defaultVariant">Served to those who do not enter</label>
            <select id="defaultVariant" value=${form.defaultVariant} onChange=${set('defaultVariant')}
              aria-invalid=${String(Boolean(errors.defaultVariant))} data-testid="field-defaultVariant">
              <option value="">the first variant${keys[0] ? ` (${keys[0]})` : ''}</option>
              ${keys.map((k) => html`<option value=${k}>${k}</option>`)}
              ${form.defaultVariant && !keys.includes(form.defaultVariant) && html`<option value=${form.defaultVariant}>${form.defaultVariant}</option>`}
            </select>
            <${FieldError} id="defaultVariant" error=${errors.defaultVariant} />
          </div>
        </div>
        <div class="layer-fields">
          <div class="field">
            <label for="layerKey">Layer (empty: none)</label>
            <input id="layerKey" value=${form.layerKey} onInput=${set('layerKey')} autocomplete="off" spellcheck="false"
              placeholder="prompts" aria-invalid=${String(Boolean(errors.layer))} data-testid="field-layerKey" />
          </div>
          <div class="field">
            <label for="layerStart">Range start</label>
            <input id="layerStart" type="number" min="0" max="1" step="any" inputmode="decimal" value=${form.layerStart}
              onInput=${set('layerStart')} disabled=${!form.layerKey.trim()} data-testid="field-layerStart" />
          </div>
          <div class="field">
            <label for="layerEnd">Range end</label>
            <input id="layerEnd" type="number" min="0" max="1" step="any" inputmode="decimal" value=${form.layerEnd}
              onInput=${set('layerEnd')} disabled=${!form.layerKey.trim()} data-testid="field-layerEnd" />
          </div>
        </div>
        <p class="hint small">Running experiments of one layer never share a user: their ranges may not overlap.</p>
        <${LayerHint} layerKey=${form.layerKey} slug=${slug} />
        <${FieldError} id="layer" error=${errors.layer} />
        <${Overrides} rows=${form.overrides} keys=${keys} errors=${errors}
          onChange=${(overrides) => update({ ...form, overrides })} />
      </div>
      ${preview}
    </div>
  </fieldset>`;
}
