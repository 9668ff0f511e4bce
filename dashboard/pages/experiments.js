// Experiments: every experiment the key may see, filtered by status and searched by name or slug. What was
// exposed (users or calls), the results and the verdict come from each experiment's analysis, fetched only
// once its row is in view.
import { useEffect, useRef, useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { formatCount, formatTime } from '../format.js';
import { href, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading, STATUSES, StatusBadge, VerdictBadge } from '../parts/common.js';
import { decisionWhat } from '../parts/decision.js';
import { ExposedCount, exposedOf, sum } from '../parts/exposed.js';

const PAGE = 100;
const MOST_PAGES = 20;

async function loadAll(api) {
  const all = [];
  let cursor = null;
  for (let i = 0; i < MOST_PAGES; i++) {
    const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await api.get(`/experiments?limit=${PAGE}${q}`);
    all.push(...page.experiments);
    cursor = page.nextCursor;
    if (!cursor) return { experiments: all, more: false };
  }
  return { experiments: all, more: true };
}

// At most a few analyses at once, so a long list does not flood the server.
const queue = { running: 0, waiting: [] };
function limited(task) {
  return new Promise((resolve, reject) => {
    const start = () => {
      queue.running++;
      task()
        .then(resolve, reject)
        .finally(() => {
          queue.running--;
          queue.waiting.shift()?.();
        });
    };
    if (queue.running < 3) start();
    else queue.waiting.push(start);
  });
}

/** The analysis of one row (exposed, results, verdict), loaded when the row scrolls into view. */
function useRowAnalysis(slug, wanted) {
  const { api } = useSession();
  const ref = useRef(null);
  const [state, setState] = useState({ analysis: null, error: null, loaded: false });
  useEffect(() => {
    if (!wanted || !ref.current) return undefined;
    let live = true;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      limited(() => api.get(experimentPath(slug, '/analysis'))).then(
        (analysis) => live && setState({ analysis, error: null, loaded: true }),
        (error) => live && setState({ analysis: null, error, loaded: true }),
      );
    });
    observer.observe(ref.current);
    return () => {
      live = false;
      observer.disconnect();
    };
  }, [slug, wanted]);
  return { ref, ...state };
}

function Row({ experiment: e }) {
  // A draft was never running, so it has no exposures and no verdict to fetch.
  const wanted = e.status !== 'draft';
  const { ref, analysis, error, loaded } = useRowAnalysis(e.slug, wanted);
  const exposed = analysis ? exposedOf(analysis) : null;
  const results = analysis?.results ? sum(analysis.results) : null;
  const pending = wanted && !loaded;
  return html`<tr ref=${ref} data-testid="experiment-row" data-slug=${e.slug}>
    <td data-label="Experiment">
      <a href=${href(`/experiment/${encodeURIComponent(e.slug)}`)} class="strong">${e.name}</a>
      <div class="muted mono small">${e.slug}</div>
    </td>
    <td data-label="Status">
      <${StatusBadge} status=${e.status} />
      ${
        e.decision &&
        html`<div class="muted small" title=${e.decision.note} data-testid="row-decision">${decisionWhat(e.decision)}</div>`
      }
    </td>
    <td data-label="Assignment">${e.assignment}</td>
    <td data-label="Variants" class="num">${e.variants.length} <span class="muted small">v${e.version}</span></td>
    <td data-label="Exposed" class="num" data-testid="row-exposed-cell">
      ${
        !wanted
          ? '0'
          : pending
            ? html`<span class="muted">…</span>`
            : exposed === null
              ? '—'
              : html`<${ExposedCount} unit=${exposed.unit} units=${sum(exposed.counts)}
                  calls=${sum(analysis.exposures)} testid="row-exposed" callsTestid="row-exposures" />`
      }
    </td>
    <td data-label="Results" class="num" data-testid="row-results">
      ${!wanted ? '—' : pending ? html`<span class="muted">…</span>` : results === null ? '—' : formatCount(results)}
    </td>
    <td data-label="Verdict" data-testid="row-verdict">
      ${
        error
          ? html`<span class="muted" title=${error.message}>unavailable</span>`
          : analysis
            ? html`<${VerdictBadge} verdict=${analysis.verdict} />`
            : html`<span class="muted">${pending ? '…' : '—'}</span>`
      }
    </td>
    <td data-label="Updated" class="small">${formatTime(e.updatedAt)}</td>
  </tr>`;
}

export function ExperimentsPage() {
  const { api, admin } = useSession();
  const { data, error, loading } = useLoad(() => loadAll(api), []);
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    document.title = 'Experiments · agentsplit';
  }, []);

  const all = data?.experiments ?? [];
  const counts = Object.fromEntries(STATUSES.map((s) => [s, all.filter((e) => e.status === s).length]));
  const words = search.trim().toLowerCase();
  const shown = all
    .filter((e) => !status || e.status === status)
    .filter((e) => !words || `${e.name} ${e.slug} ${e.description}`.toLowerCase().includes(words))
    // Newest changes first: the experiment being worked on is the one wanted.
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1));

  return html`<section data-testid="experiments-page">
    <div class="page-head">
      <h1>Experiments</h1>
      ${admin && html`<a class="button primary" href="#/new" data-testid="new-experiment">New experiment</a>`}
    </div>
    <div class="toolbar" role="search">
      <label class="field inline">
        <span>Status</span>
        <select value=${status} onChange=${(e) => setStatus(e.currentTarget.value)} data-testid="status-filter">
          <option value="">all (${all.length})</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s} (${counts[s]})</option>`)}
        </select>
      </label>
      <label class="field inline grow">
        <span>Search</span>
        <input
          type="search"
          placeholder="name, slug or description"
          value=${search}
          onInput=${(e) => setSearch(e.currentTarget.value)}
          data-testid="search"
        />
      </label>
    </div>
    <${ErrorNote} error=${error} />
    ${loading && !data && html`<${Loading} what="Loading experiments" />`}
    ${
      data &&
      (shown.length === 0
        ? html`<p class="empty" data-testid="no-experiments">
            ${all.length === 0 ? 'No experiments yet.' : 'No experiment matches.'}
            ${all.length === 0 && admin && html` <a href="#/new">Create the first one</a>.`}
          </p>`
        : html`<div class="table-wrap">
            <table class="stack compact" data-testid="experiments-table">
              <caption class="visually-hidden">
                Experiments, most recently changed first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Experiment</th>
                  <th scope="col">Status</th>
                  <th scope="col">Assignment</th>
                  <th scope="col" class="num">Variants</th>
                  <th scope="col" class="num" title="Users in sticky experiments (with their assign calls), assign calls in random ones">Exposed</th>
                  <th scope="col" class="num">Results</th>
                  <th scope="col">Verdict</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                ${shown.map((e) => html`<${Row} key=${e.slug} experiment=${e} />`)}
              </tbody>
            </table>
          </div>`)
    }
    ${data?.more && html`<p class="muted">Showing the first ${formatCount(all.length)} experiments.</p>`}
  </section>`;
}
