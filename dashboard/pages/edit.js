// Create or edit an experiment: slug, name, assignment mode, variants (payload JSON checked as you type,
// weights that must sum to 100) and metric definitions. The API's errors land next to the field they name.
import { useEffect, useRef, useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { navigate, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, errorText } from '../parts/common.js';
import { DerivedFields } from '../parts/derived-fields.js';
import { derivedState } from '../parts/derived-rules.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import {
  fieldOf,
  metricsFrom,
  percentText,
  STATISTICS,
  variantsFrom,
  weightSum,
} from '../parts/form-rules.js';
import { GuardrailFields, guardrailBody, guardrailState } from '../parts/guardrail-fields.js';
import { PreviewBox } from '../parts/preview.js';
import { WhoEntersFields, whoBody, whoFieldOf, whoState } from '../parts/who-enters.js';

/** Random vs sticky in two sentences: sticky is the usual choice for agents and conversations. */
const ASSIGNMENT_HINT =
  'random: every assign call draws a variant by weight, so one user may meet several variants. ' +
  'sticky: the same userId always gets the same variant (while the weights stay), the choice for agents ' +
  'and conversations, where a user should keep one behaviour from turn to turn.';

let nextRow = 0;
const row = (fields) => ({ id: ++nextRow, ...fields });

function variantRow(v) {
  return row({ key: v.key, payload: JSON.stringify(v.payload, null, 2), weight: String(v.trafficPercent) });
}

function metricRow(m) {
  return row({
    name: m.name,
    direction: m.direction,
    role: m.role ?? 'secondary',
    kind: m.kind ?? '',
    mde: percentText(m.minimumDetectableEffect),
    threshold: percentText(m.threshold),
    statistic: m.statistic ?? 'mean',
    // Sent back as stored: an explicit 'mean' stays explicit, so an untouched form changes nothing.
    statisticSet: m.statistic !== undefined,
    ...derivedState(m),
  });
}

function initial(experiment) {
  if (experiment) {
    return {
      slug: experiment.slug,
      name: experiment.name,
      description: experiment.description,
      assignment: experiment.assignment,
      seed: experiment.seed,
      variants: experiment.variants.map(variantRow),
      metrics: experiment.metrics.map(metricRow),
      segments: (experiment.segments ?? []).join(', '),
      ...guardrailState(experiment),
      ...whoState(experiment),
    };
  }
  const payload = { prompt: '' };
  return {
    slug: '',
    name: '',
    description: '',
    // Sticky, the usual choice for agents (ASSIGNMENT_HINT); the API's own default stays random.
    assignment: 'sticky',
    seed: '',
    variants: [
      variantRow({ key: 'A', payload, trafficPercent: 50 }),
      variantRow({ key: 'B', payload, trafficPercent: 50 }),
    ],
    metrics: [],
    segments: '',
    ...guardrailState(),
    ...whoState(),
  };
}

/** The segments field (comma-separated context keys) as the API's list. */
function segmentList(text) {
  return text
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
}

/** A label, the control, and the error the API or the form has for it. */
function Field({ id, label, error, hint, wide, children }) {
  return html`<div class=${wide ? 'field wide' : 'field'}>
    <label for=${id}>${label}</label>
    ${children}
    ${hint && html`<p class="hint small" id=${`${id}-hint`}>${hint}</p>`}
    ${error && html`<p class="field-error" id=${`${id}-error`} role="alert" data-testid=${`error-${id}`}>${error}</p>`}
  </div>`;
}

const described = (id, error, hint) =>
  [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;

function VariantEditor({ rows, errors, onChange }) {
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

function MetricEditor({ rows, errors, onChange }) {
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

/** The form's own verdict on itself: what it would send, and what keeps it from sending. */
function check(form, creating, experiment) {
  const built = variantsFrom(form.variants);
  const defs = metricsFrom(form.metrics);
  const guardrail = guardrailBody(form, experiment);
  const who = whoBody(form, experiment);
  const errors = { ...built.errors, ...defs.errors, ...guardrail.errors, ...who.errors };
  if (creating && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(form.slug)) {
    errors.slug = '1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit';
  }
  return { built, defs, guardrail, who, errors };
}

function ExperimentForm({ experiment, onSaved }) {
  const { api } = useSession();
  const [form, setForm] = useState(() => initial(experiment));
  // The form's own errors show once a save was tried, and then follow every keystroke; the API's
  // refusal stays until the form changes.
  const [tries, setTries] = useState(0);
  const [refused, setRefused] = useState({});
  const [formError, setFormError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState(null);
  const ref = useRef(null);
  const creating = !experiment;
  const update = (next) => {
    setForm(next);
    setRefused({});
    setNote(null);
  };
  const set = (name) => (e) => update({ ...form, [name]: e.currentTarget.value });
  const { built, defs, guardrail, who, errors: own } = check(form, creating, experiment);
  const errors = { ...(tries > 0 ? own : {}), ...refused };

  // After a refusal, focus the first field that says why.
  useEffect(() => {
    if (Object.keys(errors).length === 0 || !ref.current) return;
    const message = ref.current.querySelector('.field-error');
    const control = message?.closest('.field, fieldset')?.querySelector('input, select, textarea');
    (ref.current.querySelector('[aria-invalid="true"]') ?? control)?.focus();
  }, [tries, refused]);

  const submit = async (e) => {
    e.preventDefault();
    setFormError(null);
    setNote(null);
    setTries(tries + 1);
    if (Object.keys(own).length) return;

    let body;
    if (creating) {
      body = {
        slug: form.slug,
        assignment: form.assignment,
        variants: built.variants,
        metrics: defs.metrics,
      };
      if (form.name.trim()) body.name = form.name.trim();
      if (form.description.trim()) body.description = form.description.trim();
      if (form.assignment === 'sticky' && form.seed.trim()) body.seed = form.seed.trim();
      if (segmentList(form.segments).length > 0) body.segments = segmentList(form.segments);
      Object.assign(body, guardrail.body, who.body);
    } else {
      body = {};
      if (form.name !== experiment.name) body.name = form.name;
      if (form.description !== experiment.description) body.description = form.description;
      if (JSON.stringify(built.variants) !== JSON.stringify(experiment.variants))
        body.variants = built.variants;
      if (JSON.stringify(defs.metrics) !== JSON.stringify(experiment.metrics)) body.metrics = defs.metrics;
      const segments = segmentList(form.segments);
      if (JSON.stringify(segments) !== JSON.stringify(experiment.segments ?? [])) body.segments = segments;
      Object.assign(body, guardrail.body, who.body);
      if (Object.keys(body).length === 0) {
        setNote('Nothing changed.');
        return;
      }
    }
    setBusy(true);
    try {
      const saved = creating
        ? await api.post('/experiments', body)
        : await api.patch(experimentPath(experiment.slug), body);
      onSaved(saved);
    } catch (error) {
      const field = whoFieldOf(error.message ?? '') ?? fieldOf(error.message ?? '');
      if (field && error.status !== 401) setRefused({ [field]: error.message });
      else setFormError(error);
    } finally {
      setBusy(false);
    }
  };

  const versionNote =
    !creating &&
    JSON.stringify(built.variants) !== JSON.stringify(experiment.variants) &&
    `Saving these variants starts version ${experiment.version + 1}; results keep the version they were logged under.`;
  return html`<form ref=${ref} class="experiment-form" onSubmit=${submit} novalidate data-testid="experiment-form">
    <${ErrorNote} error=${formError} testid="form-error" />
    ${errors.form && html`<p class="error-note" role="alert" data-testid="form-error">${errors.form}</p>`}
    <fieldset>
      <legend>Experiment</legend>
      <div class="grid-2">
        <${Field} id="slug" label="Slug" error=${errors.slug} hint=${creating ? 'Names the experiment in every URL; cannot change later.' : null}>
          <input id="slug" value=${form.slug} onInput=${set('slug')} readonly=${!creating} required
            aria-invalid=${String(Boolean(errors.slug))} aria-describedby=${described('slug', errors.slug, creating)}
            data-testid="field-slug" autocomplete="off" spellcheck="false" />
        </${Field}>
        <${Field} id="name" label="Name" error=${errors.name}>
          <input id="name" value=${form.name} onInput=${set('name')} placeholder=${creating ? 'default: the slug' : ''}
            aria-invalid=${String(Boolean(errors.name))} aria-describedby=${described('name', errors.name)} data-testid="field-name" />
        </${Field}>
      </div>
      <${Field} id="description" label="Description" error=${errors.description}>
        <textarea id="description" rows="2" value=${form.description} onInput=${set('description')}
          aria-describedby=${described('description', errors.description)} data-testid="field-description"></textarea>
      </${Field}>
      <${Field} id="segments" label="Segments" error=${errors.segments}
        hint="Optional: up to 5 context keys (comma-separated, e.g. plan, region) to split the analysis by; results count from when a key is declared.">
        <input id="segments" value=${form.segments} onInput=${set('segments')} placeholder="plan, region"
          aria-describedby=${described('segments', errors.segments, true)} data-testid="field-segments" autocomplete="off" spellcheck="false" />
      </${Field}>
      <div class="grid-2">
        <${Field} id="assignment" label="Assignment" error=${errors.assignment}
          hint=${`${ASSIGNMENT_HINT}${creating ? ' It cannot change later.' : ''}`}>
          <select id="assignment" value=${form.assignment} onChange=${set('assignment')} disabled=${!creating}
            aria-describedby=${described('assignment', errors.assignment, true)} data-testid="field-assignment">
            <option value="random">random</option>
            <option value="sticky">sticky</option>
          </select>
        </${Field}>
        ${
          form.assignment === 'sticky' &&
          html`<${Field} id="seed" label="Seed" error=${errors.seed} hint=${creating ? 'Optional; defaults to the slug.' : null}>
            <input id="seed" value=${form.seed} onInput=${set('seed')} readonly=${!creating}
              aria-describedby=${described('seed', errors.seed, creating)} data-testid="field-seed" />
          </${Field}>`
        }
      </div>
    </fieldset>
    <${VariantEditor} rows=${form.variants} errors=${errors} onChange=${(variants) => update({ ...form, variants })} />
    <${MetricEditor} rows=${form.metrics} errors=${errors} onChange=${(metrics) => update({ ...form, metrics })} />
    <${GuardrailFields} form=${form} errors=${errors} set=${set} />
    <${WhoEntersFields} form=${form} errors=${errors} update=${update} keys=${built.variants.map((v) => v.key).filter(Boolean)} slug=${experiment?.slug}
      preview=${!creating && html`<${PreviewBox} slug=${experiment.slug} />`} />
    ${versionNote && html`<p class="hint" data-testid="version-note">${versionNote}</p>`}
    ${note && html`<p class="hint" role="status">${note}</p>`}
    <div class="form-buttons">
      <button type="submit" class="primary" disabled=${busy} data-testid="save">
        ${busy ? 'Saving…' : creating ? 'Create experiment' : 'Save changes'}
      </button>
      <a class="button" href=${creating ? '#/' : `#/experiment/${experiment.slug}`}>Cancel</a>
    </div>
    ${creating && html`<p class="hint small">It starts as a draft: start it from its page when the agents are ready.</p>`}
  </form>`;
}

export function EditPage({ slug }) {
  const { admin } = useSession();
  useEffect(() => {
    if (!slug) document.title = 'New experiment · agentsplit';
  }, [slug]);
  if (!admin) {
    return html`<${ErrorNote} error=${{ status: 403, message: 'changing experiments needs an admin key' }} />`;
  }
  const saved = (experiment) => navigate(`/experiment/${experiment.slug}`);
  if (!slug) {
    return html`<section data-testid="create-page">
      <h1>New experiment</h1>
      <${ExperimentForm} onSaved=${saved} />
    </section>`;
  }
  return html`<${ExperimentFrame} slug=${slug} tab="edit"
    >${(experiment) =>
      experiment.status === 'archived'
        ? html`<p class="error-note">${errorText({ message: 'An archived experiment can no longer change.' })}</p>`
        : html`<${ExperimentForm} key=${experiment.updatedAt} experiment=${experiment} onSaved=${saved} />`}</${ExperimentFrame}
  >`;
}
