// Results: a paged table of what the agents logged, newest first (or oldest first, or worst/best first
// by any metric or feedback: the API's order, metric and sort=metric), each with its input and output as
// text, its score, the feedback and comments given on it and the context its assign received; a row opens
// to its JSON. Filters by variant (a select) and time; "Side by side" groups two variants' results by
// input (n, mean score, win rate, outputs as text). Exports everything as CSV or NDJSON (with the key,
// hence fetch).
import { useState } from 'preact/hooks';
import { experimentPath, withQuery } from '../api.js';
import { navigate, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, errorText } from '../parts/common.js';
import { ExperimentFrame } from '../parts/experiment-head.js';
import { ResultRow } from '../parts/result-row.js';
import { ResultSearch } from '../parts/result-search.js';
import { SideBySide } from '../parts/side-by-side.js';

const SIZES = ['25', '50', '100'];

/** A datetime-local value (the viewer's time) as ISO 8601 in UTC, or '' when empty or unreadable. */
function toIso(local) {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** ISO 8601 as a datetime-local value in the viewer's time. */
function toLocal(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function ExportButtons({ slug }) {
  const { api } = useSession();
  const [busy, setBusy] = useState(null);
  const [error, setError] = useState(null);
  const download = async (format) => {
    setBusy(format);
    setError(null);
    try {
      const blob = await api.blob(withQuery(experimentPath(slug, '/results/export'), { format }));
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = `${slug}-results.${format}`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  return html`<div class="export" role="group" aria-label="Export every result">
    <span class="muted small">Export all results:</span>
    ${['csv', 'ndjson'].map(
      (
        f,
      ) => html`<button type="button" onClick=${() => download(f)} disabled=${busy !== null} data-testid=${`export-${f}`}>
        ${busy === f ? 'Exporting…' : f.toUpperCase()}
      </button>`,
    )}
    ${error && html`<span class="error-note" role="alert">${errorText(error)}</span>`}
  </div>`;
}

/** How the list is ordered: the API's order, and sort=metric for worst and best first. */
const VIEWS = [
  ['newest', 'Newest first'],
  ['oldest', 'Oldest first'],
  ['worst', 'Worst first, by a metric'],
  ['best', 'Best first, by a metric'],
];

/**
 * Which end is worse for a metric: its declared direction (a metric that should increase is worst at its
 * lowest), else what the viewer picked (`worst=low|high`, lowest by default).
 */
function worstIsLow(direction, picked) {
  if (direction === 'increase') return true;
  if (direction === 'decrease') return false;
  return picked !== 'high';
}

/** The API query of the list: order, and the metric to sort by for worst and best first. */
function listQuery(query, metric, direction) {
  const view = query.view ?? 'newest';
  if (view === 'oldest') return { order: 'asc' };
  if ((view === 'worst' || view === 'best') && metric) {
    const lowFirst = worstIsLow(direction, query.worst) === (view === 'worst');
    return { metric, sort: 'metric', order: lowFirst ? 'asc' : 'desc' };
  }
  return { order: 'desc' };
}

/** Metric names to pick from: declared ones, then any the analysis counts (results' metrics and feedback). */
function useMetricNames(experiment) {
  const { api } = useSession();
  const analysis = useLoad(() => api.get(experimentPath(experiment.slug, '/analysis')), [experiment.slug]);
  const directions = new Map();
  for (const m of experiment.metrics ?? []) directions.set(m.name, m.direction);
  for (const m of analysis.data?.metrics ?? []) {
    if (!directions.has(m.name)) directions.set(m.name, m.direction);
  }
  const keys = Object.keys(analysis.data?.results ?? {});
  return { directions, keys };
}

function Results({ experiment, query }) {
  const { api } = useSession();
  const size = SIZES.includes(query.limit) ? query.limit : '25';
  const view = VIEWS.some(([v]) => v === query.view) ? query.view : 'newest';
  const compare = query.mode === 'compare';
  const { directions, keys } = useMetricNames(experiment);
  const names = [...directions.keys()];
  const byMetric = view === 'worst' || view === 'best';
  const metric = byMetric ? (query.metric ?? names[0]) : undefined;
  const direction = metric === undefined ? undefined : directions.get(metric);
  const order = listQuery({ ...query, view }, metric, direction);
  const filters = {
    q: query.q || undefined,
    variant: query.variant,
    since: query.since,
    until: query.until,
    limit: size,
    ...order,
  };
  // The cursors of the pages before this one, so "Previous" can go back.
  const [trail, setTrail] = useState([]);
  const cursor = trail.at(-1);
  const [open, setOpen] = useState(() => new Set());
  const waiting = byMetric && metric === undefined;
  const page = useLoad(
    () =>
      waiting
        ? Promise.resolve({ results: [], nextCursor: null })
        : api.get(withQuery(experimentPath(experiment.slug, '/results'), { ...filters, cursor })),
    [experiment.slug, JSON.stringify(filters), cursor, waiting],
  );
  const path = `/experiment/${experiment.slug}/results`;
  const setFilter = (name, value) => {
    setTrail([]);
    navigate(path, { ...query, [name]: value });
  };
  const toggle = (id) => {
    const next = new Set(open);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setOpen(next);
  };
  // The variants, and any other key results were logged under (stored, flagged): a select, not free text.
  const variants = experiment.variants.map((v) => v.key);
  const options = [...new Set([...variants, ...keys, ...(query.variant ? [query.variant] : [])])];
  const compareA = query.a && options.includes(query.a) ? query.a : variants[0];
  const compareB = query.b && options.includes(query.b) ? query.b : (variants[1] ?? variants[0]);
  // Side by side scores by the picked metric, else the primary one, else the first known.
  const primary = (experiment.metrics ?? []).find((m) => m.role === 'primary')?.name;
  const compareMetric = compare ? (query.metric ?? primary ?? names[0]) : undefined;
  const results = page.data?.results ?? [];
  const viewText = VIEWS.find(([v]) => v === view)[1];
  const declared = direction === 'increase' || direction === 'decrease';

  return html`<div class="results">
    <div class="toolbar" role="group" aria-label="Show">
      <button type="button" aria-pressed=${String(!compare)} onClick=${() => setFilter('mode', '')} data-testid="mode-list">List</button>
      <button type="button" aria-pressed=${String(compare)} onClick=${() => setFilter('mode', 'compare')} data-testid="mode-compare">
        Side by side
      </button>
    </div>
    ${!compare && html`<${ResultSearch} value=${query.q} onSearch=${(text) => setFilter('q', text)} />`}
    <form class="toolbar filters" role="group" aria-label="Filters" onSubmit=${(e) => e.preventDefault()}>
      ${
        compare
          ? html`<label class="field inline">
                <span>Left</span>
                <select value=${compareA} onChange=${(e) => setFilter('a', e.currentTarget.value)} data-testid="compare-a">
                  ${options.map((k) => html`<option value=${k}>${k}</option>`)}
                </select>
              </label>
              <label class="field inline">
                <span>Right</span>
                <select value=${compareB} onChange=${(e) => setFilter('b', e.currentTarget.value)} data-testid="compare-b">
                  ${options.map((k) => html`<option value=${k}>${k}</option>`)}
                </select>
              </label>
              <label class="field inline">
                <span>Score</span>
                <select value=${compareMetric ?? ''} onChange=${(e) => setFilter('metric', e.currentTarget.value)} data-testid="compare-metric">
                  ${names.length === 0 && html`<option value="">no metrics yet</option>`}
                  ${names.map((n) => html`<option value=${n}>${n}</option>`)}
                </select>
              </label>`
          : html`<label class="field inline">
                <span>Variant</span>
                <select value=${query.variant ?? ''} onChange=${(e) => setFilter('variant', e.currentTarget.value)} data-testid="variant-filter">
                  <option value="">all</option>
                  ${options.map((k) => html`<option value=${k}>${k}${variants.includes(k) ? '' : ' (not a variant)'}</option>`)}
                </select>
              </label>
              <label class="field inline">
                <span>Order</span>
                <select value=${view} onChange=${(e) => setFilter('view', e.currentTarget.value)} data-testid="results-view">
                  ${VIEWS.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
                </select>
              </label>
              ${
                byMetric &&
                html`<label class="field inline">
                  <span>Metric</span>
                  <select value=${metric ?? ''} onChange=${(e) => setFilter('metric', e.currentTarget.value)} data-testid="results-metric">
                    ${names.length === 0 && html`<option value="">no metrics yet</option>`}
                    ${names.map((n) => html`<option value=${n}>${n}</option>`)}
                  </select>
                </label>
                ${
                  declared
                    ? html`<span class="muted small" data-testid="worst-is">
                        worst is ${direction === 'increase' ? 'lowest' : 'highest'} (declared: should ${direction})
                      </span>`
                    : html`<label class="field inline">
                        <span>Worst is</span>
                        <select value=${query.worst === 'high' ? 'high' : 'low'} onChange=${(e) => setFilter('worst', e.currentTarget.value)} data-testid="worst-is">
                          <option value="low">lowest</option>
                          <option value="high">highest</option>
                        </select>
                      </label>`
                }`
              }`
      }
      <label class="field inline">
        <span>From</span>
        <input type="datetime-local" step="1" value=${toLocal(query.since)} onChange=${(e) => setFilter('since', toIso(e.currentTarget.value))} data-testid="since" />
      </label>
      <label class="field inline">
        <span>Until</span>
        <input type="datetime-local" step="1" value=${toLocal(query.until)} onChange=${(e) => setFilter('until', toIso(e.currentTarget.value))} data-testid="until" />
      </label>
      ${
        !compare &&
        html`<label class="field inline">
          <span>Per page</span>
          <select value=${size} onChange=${(e) => setFilter('limit', e.currentTarget.value)} data-testid="page-size">
            ${SIZES.map((s) => html`<option value=${s}>${s}</option>`)}
          </select>
        </label>`
      }
    </form>
    <${ExportButtons} slug=${experiment.slug} />
    ${
      compare
        ? html`<${SideBySide}
            key=${[compareA, compareB, compareMetric, query.since, query.until].join('\n')}
            experiment=${experiment} a=${compareA} b=${compareB} metric=${compareMetric}
            since=${query.since} until=${query.until} />`
        : html`<${ErrorNote} error=${page.error} />
    ${
      byMetric &&
      html`<p class="muted small">
        Only results with a value for ${metric ?? 'a metric'} (feedback on the result, else on its assignment, else its own
        metric; true/false as 1/0), ${view === 'worst' ? 'worst' : 'best'} first.
      </p>`
    }
    ${
      page.data && results.length === 0
        ? html`<p class="empty" data-testid="no-results">No results${query.q || query.variant || query.since || query.until || byMetric ? ' match these filters' : ' yet'}.</p>`
        : html`<div class="table-wrap">
            <table class="stack compact results-table" data-testid="results-table" aria-busy=${String(page.loading)}>
              <caption class="visually-hidden">Results, ${viewText.toLowerCase()}</caption>
              <thead>
                <tr>
                  <th scope="col">Result</th>
                  <th scope="col">Input</th>
                  <th scope="col">Output</th>
                  <th scope="col">Score</th>
                  <th scope="col">Assign context</th>
                  <th scope="col"><span class="visually-hidden">Details</span></th>
                </tr>
              </thead>
              <tbody>
                ${results.map(
                  (r) =>
                    html`<${ResultRow} key=${r.logId} result=${r} open=${open.has(r.logId)} onToggle=${() => toggle(r.logId)} />`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${trail.length === 0} onClick=${() => setTrail(trail.slice(0, -1))} data-testid="prev-page">
        Previous
      </button>
      <span class="muted small" data-testid="page-number">Page ${trail.length + 1}</span>
      <button
        type="button"
        disabled=${!page.data?.nextCursor}
        onClick=${() => setTrail([...trail, page.data.nextCursor])}
        data-testid="next-page"
      >
        Next
      </button>
    </nav>`
    }
  </div>`;
}

export function ResultsPage({ slug, query }) {
  return html`<${ExperimentFrame} slug=${slug} tab="results"
    >${(experiment) => html`<${Results} experiment=${experiment} query=${query} />`}</${ExperimentFrame}
  >`;
}
