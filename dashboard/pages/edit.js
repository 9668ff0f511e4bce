// Create or edit an experiment: slug, name, assignment mode, variants (payload JSON checked as you type,
// weights that must sum to 100) and metric definitions. The API's errors land next to the field they name.
import { useEffect, useRef, useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { navigate, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, errorText } from '../parts/common.js';
import { derivedState } from '../parts/derived-rules.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import { described, Field, row } from '../parts/field.js';
import { fieldOf, metricsFrom, percentText, variantsFrom } from '../parts/form-rules.js';
import { GuardrailFields, guardrailBody, guardrailState } from '../parts/guardrail-fields.js';
import { MetricEditor } from '../parts/metric-editor.js';
import { PreviewBox } from '../parts/preview.js';
import { VariantEditor } from '../parts/variant-editor.js';
import { WhoEntersFields, whoBody, whoFieldOf, whoState } from '../parts/who-enters.js';

/** Random vs sticky in two sentences: sticky is the usual choice for agents and conversations. */
const ASSIGNMENT_HINT =
  'random: every assign call draws a variant by weight, so one user may meet several variants. ' +
  'sticky: the same userId always gets the same variant (while the weights stay), the choice for agents ' +
  'and conversations, where a user should keep one behaviour from turn to turn.';

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

  // After a save that was refused (by the form or by the API), focus the first field that says why;
  // only then: typing afterwards must never move the focus (it would send the next keys elsewhere).
  const [refusals, setRefusals] = useState(0);
  useEffect(() => {
    if (refusals === 0 || Object.keys(errors).length === 0 || !ref.current) return;
    const message = ref.current.querySelector('.field-error');
    const control = message?.closest('.field, fieldset')?.querySelector('input, select, textarea');
    (ref.current.querySelector('[aria-invalid="true"]') ?? control)?.focus();
  }, [refusals]);

  const submit = async (e) => {
    e.preventDefault();
    setFormError(null);
    setNote(null);
    setTries(tries + 1);
    if (Object.keys(own).length) {
      setRefusals(refusals + 1);
      return;
    }

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
      if (field && error.status !== 401) {
        setRefused({ [field]: error.message });
        setRefusals((n) => n + 1);
      } else setFormError(error);
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
