// The top of every experiment tab: name, status, the status buttons an admin may press, and the tabs.
import { useEffect, useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { href, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, StatusBadge, TRANSITIONS } from './common.js';
import { DecisionFields, DecisionLine, decisionBody } from './decision.js';
import { StatusBanner } from './status-banner.js';
import { WhoEnters } from './who-summary.js';

/** GET /experiment/:slug, kept while reloading. */
export function useExperiment(slug) {
  const { api } = useSession();
  const state = useLoad(() => api.get(experimentPath(slug)), [slug]);
  useEffect(() => {
    if (state.data) document.title = `${state.data.name} · agentsplit`;
  }, [state.data]);
  return state;
}

const VERB = { running: 'Start', paused: 'Pause', completed: 'Complete', archived: 'Archive' };
// These cannot be undone (completed leads only to archived; archived leads nowhere): ask first.
const FINAL = {
  completed: 'Completing stops assignment for good (it can only be archived afterwards).',
  archived: 'Archiving closes the experiment: its variants and results can no longer change.',
};

function StatusButtons({ experiment, onChanged }) {
  const { api } = useSession();
  const [busy, setBusy] = useState(null);
  const [confirming, setConfirming] = useState(null);
  const [error, setError] = useState(null);
  const [decision, setDecision] = useState({ variant: '', note: '' });
  const next = TRANSITIONS[experiment.status] ?? [];
  if (next.length === 0) return null;

  const change = async (to) => {
    setBusy(to);
    setError(null);
    setConfirming(null);
    try {
      const body = { status: to };
      // Completing says what was decided, when the admin chose it.
      if (to === 'completed' && decisionBody(decision)) body.decision = decisionBody(decision);
      onChanged(await api.patch(experimentPath(experiment.slug), body));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  const label = (to) => (to === 'running' && experiment.status === 'paused' ? 'Resume' : VERB[to]);
  return html`<div class="status-buttons" role="group" aria-label="Change status">
    ${next.map(
      (to) => html`<button
        type="button"
        class=${to === 'running' ? 'primary' : to === 'archived' ? 'danger' : ''}
        disabled=${busy !== null}
        aria-expanded=${FINAL[to] ? String(confirming === to) : undefined}
        onClick=${() => (FINAL[to] ? setConfirming(to) : change(to))}
        data-testid=${`status-${to}`}
      >
        ${busy === to ? `${label(to)}…` : label(to)}
      </button>`,
    )}
    ${
      confirming &&
      html`<div class="confirm" role="alertdialog" aria-label=${`${VERB[confirming]} this experiment?`}>
        <p>${FINAL[confirming]}</p>
        ${
          confirming === 'completed' &&
          html`<${DecisionFields} experiment=${experiment} value=${decision} onChange=${setDecision} />`
        }
        <button type="button" class="danger" onClick=${() => change(confirming)} data-testid="confirm-status">
          ${VERB[confirming]}
        </button>
        <button type="button" onClick=${() => setConfirming(null)}>Cancel</button>
      </div>`
    }
    <${ErrorNote} error=${error} testid="status-error" />
  </div>`;
}

const TABS = [
  ['overview', 'Overview', ''],
  ['charts', 'Charts', '/charts'],
  ['results', 'Results', '/results'],
  ['runs', 'Offline runs', '/runs'],
  ['edit', 'Edit', '/edit'],
];

export function ExperimentHead({ experiment, tab, onChanged }) {
  const { admin } = useSession();
  const base = `/experiment/${encodeURIComponent(experiment.slug)}`;
  const tabs = TABS.filter(([id]) => id !== 'edit' || (admin && experiment.status !== 'archived'));
  return html`<div class="experiment-head">
    <div class="title-row">
      <div>
        <p class="crumbs"><a href="#/">Experiments</a> / <span class="mono">${experiment.slug}</span></p>
        <h1>${experiment.name} <${StatusBadge} status=${experiment.status} /></h1>
        ${experiment.description && html`<p class="description">${experiment.description}</p>`}
        <p class="muted small">
          ${experiment.assignment} assignment · version ${experiment.version} · ${experiment.variants.length} variants
        </p>
        <${WhoEnters} experiment=${experiment} />
        <${DecisionLine} decision=${experiment.decision} />
      </div>
      ${admin && html`<${StatusButtons} experiment=${experiment} onChanged=${onChanged} />`}
    </div>
    <${StatusBanner} experiment=${experiment} />
    <nav class="tabs" aria-label="Experiment">
      ${tabs.map(
        ([id, label, rest]) =>
          html`<a href=${href(base + rest)} aria-current=${tab === id ? 'page' : undefined} data-testid=${`tab-${id}`}
            >${label}</a
          >`,
      )}
    </nav>
  </div>`;
}

/** The head, or the error or wait in its place; `children(experiment, setExperiment)` renders the tab. */
export function ExperimentFrame({ slug, tab, children }) {
  const { data, error, reload } = useExperiment(slug);
  const [override, setOverride] = useState(null);
  const experiment = override && data && override.updatedAt >= data.updatedAt ? override : data;
  if (!experiment) {
    return error ? html`<${ErrorNote} error=${error} />` : html`<p class="muted">Loading the experiment…</p>`;
  }
  const changed = (next) => {
    setOverride(next);
    reload();
  };
  return html`<section data-testid=${`experiment-${tab}`}>
    <${ExperimentHead} experiment=${experiment} tab=${tab} onChanged=${changed} />
    ${children(experiment, changed)}
  </section>`;
}
