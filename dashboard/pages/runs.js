// An experiment's offline runs (issue 40), newest first (GET /experiment/:slug/runs): each a run of some of
// its variants over one version of a dataset, linking to its comparison (pages/run.js).
import { useState } from 'preact/hooks';
import { experimentPath, withQuery } from '../api.js';
import { formatCount, formatTime } from '../format.js';
import { href, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading } from '../parts/common.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import { datasetHref, Pager } from './datasets.js';

/** The dashboard link to a run's comparison. */
export function runHref(slug, id, query = {}) {
  return href(`/experiment/${slug}/runs/${id}`, query);
}

function Runs({ experiment }) {
  const { api } = useSession();
  const [trail, setTrail] = useState([]);
  const cursor = trail.at(-1);
  const state = useLoad(
    () => api.get(withQuery(experimentPath(experiment.slug, '/runs'), { limit: 50, cursor })),
    [experiment.slug, cursor],
  );
  if (state.error) return html`<${ErrorNote} error=${state.error} />`;
  if (!state.data) return html`<${Loading} what="Loading the offline runs" />`;
  const runs = state.data.runs;
  const pager =
    (trail.length > 0 || state.data.nextCursor) &&
    html`<${Pager} trail=${trail} setTrail=${setTrail} next=${state.data.nextCursor} label="Pages of runs"
      testid="runs" />`;
  return html`<section aria-labelledby="runs-title" data-testid="runs-list">
    <h2 id="runs-title">Offline runs</h2>
    <p class="muted small">
      Each run answers every item of a dataset version with some of the variants, before (or beside) the online
      experiment; its results never count online. Open one to compare its variants item by item.
    </p>
    ${
      runs.length === 0
        ? html`<p class="empty" data-testid="no-runs">
            No offline runs yet: open one with <code>${`POST ${experimentPath(experiment.slug, '/runs')} {"dataset": "…"}`}</code>,
            then log each answer with its <code>runId</code>, <code>itemId</code> and <code>trial</code>.
          </p>`
        : html`<div class="table-wrap">
            <table class="stack compact" data-testid="runs-table">
              <caption class="visually-hidden">Offline runs, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Dataset</th>
                  <th scope="col">Variants</th>
                  <th scope="col" class="num">Items</th>
                  <th scope="col" class="num">Trials</th>
                </tr>
              </thead>
              <tbody>
                ${runs.map(
                  (r) => html`<tr key=${r.id} data-testid="run-row" data-run-id=${r.id}>
                    <td data-label="Run">
                      <a class="strong" href=${runHref(experiment.slug, r.id)} data-testid="run-link">Compare</a>
                      <span class="small"> · ${formatTime(r.createdAt)}</span>
                      <div class="muted mono small">${r.id}</div>
                    </td>
                    <td data-label="Dataset">
                      <a class="mono" href=${datasetHref(r.dataset, r.version)}>${r.dataset}</a>
                      <span class="muted small"> v${r.version}</span>
                    </td>
                    <td data-label="Variants" class="mono" data-testid="run-variants">${r.variants.join(', ')}</td>
                    <td data-label="Items" class="num">${formatCount(r.items)}</td>
                    <td data-label="Trials" class="num">${r.trials}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${pager}
  </section>`;
}

export function RunsPage({ slug }) {
  return html`<${ExperimentFrame} slug=${slug} tab="runs"
    >${(experiment) => html`<${Runs} experiment=${experiment} />`}</${ExperimentFrame}
  >`;
}
