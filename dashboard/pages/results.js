// Results: a paged table of what the agents logged, oldest first as the API pages it; a row opens to its
// JSON. Filters by variant and time; exports everything as CSV or NDJSON (with the key, hence fetch).
import { useState } from 'preact/hooks';
import { experimentPath, withQuery } from '../api.js';
import { formatTime, formatValue } from '../format.js';
import { navigate, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, errorText, Json } from '../parts/common.js';
import { ExperimentFrame } from '../parts/experiment-head.js';

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

function metricText(metrics) {
  if (!metrics) return '';
  return Object.entries(metrics)
    .map(
      ([k, v]) =>
        `${k}: ${typeof v === 'number' ? formatValue(v) : typeof v === 'object' ? JSON.stringify(v) : v}`,
    )
    .join(' · ');
}

function Flags({ result: r }) {
  return html`${
    !r.knownVariant &&
    html`<span class="chip bad" data-testid="flag-unknown" title="variantKey named no variant when logged: stored, not analysed"
      >unknown variant</span
    >`
  }${
    r.assignedVariant &&
    html`<span class="chip warn" data-testid="flag-assigned" title=${`The assignmentId was issued for ${r.assignedVariant}, not ${r.variantKey}`}
      >assigned ${r.assignedVariant}</span
    >`
  }`;
}

function ResultRow({ result: r, open, onToggle }) {
  const flagged = !r.knownVariant || Boolean(r.assignedVariant);
  const detail = `result-${r.logId}`;
  return html`<tr class=${flagged ? 'flagged' : ''} data-testid="result-row" data-log-id=${r.logId} data-flagged=${String(flagged)}>
      <td data-label="Time" title=${`stored ${r.createdAt}${r.timestamp ? `; client time ${r.timestamp}` : ''}`}>
        ${formatTime(r.createdAt)}
      </td>
      <td data-label="Variant"><span class="mono strong">${r.variantKey}</span> <${Flags} result=${r} /></td>
      <td data-label="User" class="mono">${r.userId ?? html`<span class="muted">—</span>`}</td>
      <td data-label="Metrics" class="metrics-cell small wide">${metricText(r.metrics)}</td>
      <td data-label="">
        <button
          type="button"
          class="small"
          aria-expanded=${String(open)}
          aria-controls=${detail}
          onClick=${onToggle}
          data-testid="expand-result"
        >
          ${open ? 'Hide' : 'Details'}
        </button>
      </td>
    </tr>
    ${
      open &&
      html`<tr class="detail-row" id=${detail} data-testid="result-detail">
        <td colspan="5" class="wide">
          <div class="detail-grid">
            <div><h4>Input</h4><${Json} value=${r.input} label="Input" /></div>
            <div><h4>Output</h4><${Json} value=${r.output} label="Output" /></div>
            <div><h4>Context</h4><${Json} value=${r.context} label="Context" /></div>
            <div><h4>Metrics</h4><${Json} value=${r.metrics} label="Metrics" /></div>
          </div>
          <dl class="ids small">
            <dt>logId</dt><dd class="mono">${r.logId}</dd>
            <dt>assignmentId</dt><dd class="mono">${r.assignmentId ?? '—'}</dd>
            <dt>client time</dt><dd class="mono">${r.timestamp ?? '—'}</dd>
            <dt>version</dt><dd>${r.experimentVersion}</dd>
          </dl>
        </td>
      </tr>`
    }`;
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

function Results({ experiment, query }) {
  const { api } = useSession();
  const size = SIZES.includes(query.limit) ? query.limit : '25';
  const filters = { variant: query.variant, since: query.since, until: query.until, limit: size };
  // The cursors of the pages before this one, so "Previous" can go back.
  const [trail, setTrail] = useState([]);
  const cursor = trail.at(-1);
  const [open, setOpen] = useState(() => new Set());
  const page = useLoad(
    () => api.get(withQuery(experimentPath(experiment.slug, '/results'), { ...filters, cursor })),
    [experiment.slug, query.variant, query.since, query.until, size, cursor],
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
  // Any key can be typed: results logged under a key that names no variant are stored too (flagged).
  const variants = experiment.variants.map((v) => v.key);
  // A known key (or none) applies at once; any other key on Enter or when the field is left.
  const pickVariant = (e) => {
    const value = e.currentTarget.value.trim();
    if (value === '' || variants.includes(value)) setFilter('variant', value);
  };
  const submitVariant = (e) => {
    e.preventDefault();
    setFilter('variant', e.currentTarget.elements.variant.value.trim());
  };
  const results = page.data?.results ?? [];

  return html`<div class="results">
    <form class="toolbar" role="group" aria-label="Filters" onSubmit=${submitVariant}>
      <label class="field inline">
        <span>Variant</span>
        <input
          name="variant"
          list="variant-keys"
          size="10"
          placeholder="all"
          value=${query.variant ?? ''}
          onInput=${pickVariant}
          onChange=${(e) => setFilter('variant', e.currentTarget.value.trim())}
          data-testid="variant-filter"
        />
        <datalist id="variant-keys">${variants.map((k) => html`<option value=${k}></option>`)}</datalist>
      </label>
      <label class="field inline">
        <span>From</span>
        <input type="datetime-local" step="1" value=${toLocal(query.since)} onChange=${(e) => setFilter('since', toIso(e.currentTarget.value))} data-testid="since" />
      </label>
      <label class="field inline">
        <span>Until</span>
        <input type="datetime-local" step="1" value=${toLocal(query.until)} onChange=${(e) => setFilter('until', toIso(e.currentTarget.value))} data-testid="until" />
      </label>
      <label class="field inline">
        <span>Per page</span>
        <select value=${size} onChange=${(e) => setFilter('limit', e.currentTarget.value)} data-testid="page-size">
          ${SIZES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
    </form>
    <${ExportButtons} slug=${experiment.slug} />
    <${ErrorNote} error=${page.error} />
    ${
      page.data && results.length === 0
        ? html`<p class="empty" data-testid="no-results">No results${query.variant || query.since || query.until ? ' match these filters' : ' yet'}.</p>`
        : html`<div class="table-wrap">
            <table class="stack compact results-table" data-testid="results-table" aria-busy=${String(page.loading)}>
              <caption class="visually-hidden">Results, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Variant</th>
                  <th scope="col">User</th>
                  <th scope="col">Metrics</th>
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
    </nav>
  </div>`;
}

export function ResultsPage({ slug, query }) {
  return html`<${ExperimentFrame} slug=${slug} tab="results"
    >${(experiment) => html`<${Results} experiment=${experiment} query=${query} />`}</${ExperimentFrame}
  >`;
}
