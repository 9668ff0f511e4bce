// Datasets (issue 40): the list (name, items, version, when the current version was made), and a dataset's
// items a page at a time (GET /datasets/:name/items), any version of it (a picker; every version stays
// readable as it was), each item's input, expected answer and metadata as text.
import { useEffect, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { formatCount, formatTime } from '../format.js';
import { href, navigate, useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading } from '../parts/common.js';
import { TextView } from '../parts/text-view.js';

const SIZES = ['25', '100'];

/** `/datasets/<name>` with the name escaped. */
export function datasetPath(name, rest = '') {
  return `/datasets/${encodeURIComponent(name)}${rest}`;
}

/** The dashboard link to a dataset (a version, when given). */
export function datasetHref(name, version) {
  return href(`/datasets/${name}`, { version });
}

/** Previous / Next over cursors: `trail` holds the cursors of the pages before this one. */
export function Pager({ trail, setTrail, next, label, testid = 'datasets' }) {
  return html`<nav class="pager" aria-label=${label}>
    <button type="button" disabled=${trail.length === 0} onClick=${() => setTrail(trail.slice(0, -1))}
      data-testid=${`${testid}-prev`}>Previous</button>
    <span class="muted small" data-testid=${`${testid}-page`}>Page ${trail.length + 1}</span>
    <button type="button" disabled=${!next} onClick=${() => setTrail([...trail, next])} data-testid=${`${testid}-next`}>
      Next
    </button>
  </nav>`;
}

export function DatasetsPage() {
  const { api } = useSession();
  const [trail, setTrail] = useState([]);
  const cursor = trail.at(-1);
  const page = useLoad(() => api.get(withQuery('/datasets', { limit: 50, cursor })), [cursor]);
  useEffect(() => {
    document.title = 'Datasets · agentsplit';
  }, []);
  const datasets = page.data?.datasets ?? [];
  return html`<section data-testid="datasets-page">
    <div class="page-head"><h1>Datasets</h1></div>
    <p class="muted small">
      Fixed sets of items (an input, the expected answer, metadata) that offline runs answer with each variant
      before an experiment goes online. Every change of items makes a new version; every version stays readable.
    </p>
    <${ErrorNote} error=${page.error} />
    ${page.loading && !page.data && html`<${Loading} what="Loading datasets" />`}
    ${
      page.data &&
      (datasets.length === 0 && trail.length === 0
        ? html`<p class="empty" data-testid="no-datasets">
            No datasets yet: an admin creates one with <code>POST /datasets</code> (see the API docs).
          </p>`
        : html`<div class="table-wrap">
            <table class="stack compact" data-testid="datasets-table" aria-busy=${String(page.loading)}>
              <caption class="visually-hidden">Datasets, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Dataset</th>
                  <th scope="col" class="num">Items</th>
                  <th scope="col" class="num">Version</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                ${datasets.map(
                  (d) => html`<tr key=${d.id} data-testid="dataset-row" data-name=${d.name}>
                    <td data-label="Dataset">
                      <a class="strong mono" href=${datasetHref(d.name)} data-testid="dataset-link">${d.name}</a>
                      ${d.description && html`<div class="muted small">${d.description}</div>`}
                    </td>
                    <td data-label="Items" class="num" data-testid="dataset-items">${formatCount(d.items)}</td>
                    <td data-label="Version" class="num" data-testid="dataset-version">${d.version}</td>
                    <td data-label="Updated" class="small" data-testid="dataset-updated">${formatTime(d.updatedAt)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>
          <${Pager} trail=${trail} setTrail=${setTrail} next=${page.data.nextCursor} label="Pages of datasets" />`)
    }
  </section>`;
}

/** Metadata in one line: `topic: billing · lang: en`; values that are not text as JSON. */
export function metadataText(metadata) {
  if (!metadata || typeof metadata !== 'object') return '';
  return Object.entries(metadata)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
}

function Items({ dataset, version, size, total }) {
  const { api } = useSession();
  const [trail, setTrail] = useState([]);
  const cursor = trail.at(-1);
  const page = useLoad(
    () => api.get(withQuery(datasetPath(dataset.name, '/items'), { version, limit: size, cursor })),
    [dataset.name, version, size, cursor],
  );
  if (page.error) return html`<${ErrorNote} error=${page.error} />`;
  if (!page.data) return html`<${Loading} what="Loading the items" />`;
  const items = page.data.items;
  if (items.length === 0 && trail.length === 0) {
    return html`<p class="empty" data-testid="no-items">Version ${page.data.version} has no items.</p>`;
  }
  const first = trail.length * Number(size) + 1;
  return html`<p class="muted small" data-testid="items-shown">
      Items ${formatCount(first)}–${formatCount(first + items.length - 1)}${total === null ? '' : ` of ${formatCount(total)}`}${` in version ${page.data.version}, in the order first added.`}
    </p>
    <div class="table-wrap">
      <table class="stack compact items-table" data-testid="items-table" data-version=${page.data.version}
        aria-busy=${String(page.loading)}>
        <caption class="visually-hidden">Items of version ${page.data.version}</caption>
        <thead>
          <tr>
            <th scope="col">Item</th>
            <th scope="col">Input</th>
            <th scope="col">Expected</th>
            <th scope="col">Metadata</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (item) => html`<tr key=${item.id} data-testid="item-row" data-item-id=${item.id}>
              <td data-label="Item">
                <span class="mono" data-testid="item-id">${item.id}</span>
                <div class="muted small" title="The version that added it or last changed it">since v${item.since}</div>
              </td>
              <td data-label="Input" class="text-cell wide"><${TextView} value=${item.input} label="Input" testid="item-input" /></td>
              <td data-label="Expected" class="text-cell wide">
                <${TextView} value=${item.expected} label="Expected" testid="item-expected" />
              </td>
              <td data-label="Metadata" class="small" data-testid="item-metadata">
                ${metadataText(item.metadata) || html`<span class="muted">—</span>`}
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <${Pager} trail=${trail} setTrail=${setTrail} next=${page.data.nextCursor} label="Pages of items" testid="items" />`;
}

export function DatasetPage({ name, query }) {
  const { api } = useSession();
  const state = useLoad(() => api.get(datasetPath(name)), [name]);
  useEffect(() => {
    document.title = `${name} · Datasets · agentsplit`;
  }, [name]);
  const dataset = state.data;
  if (!dataset) {
    return state.error
      ? html`<${ErrorNote} error=${state.error} />`
      : html`<${Loading} what="Loading the dataset" />`;
  }
  const asked = Number(query.version);
  const version = Number.isInteger(asked) && asked >= 1 && asked <= dataset.version ? asked : dataset.version;
  const size = SIZES.includes(query.limit) ? query.limit : SIZES[0];
  const set = (field) => (e) => navigate(`/datasets/${name}`, { ...query, [field]: e.currentTarget.value });
  const versions = Array.from({ length: dataset.version }, (_, i) => dataset.version - i);
  return html`<section data-testid="dataset-page" data-name=${dataset.name}>
    <p class="crumbs"><a href="#/datasets">Datasets</a> / <span class="mono">${dataset.name}</span></p>
    <h1 class="mono">${dataset.name}</h1>
    ${dataset.description && html`<p class="description">${dataset.description}</p>`}
    <p class="muted small" data-testid="dataset-summary">
      Version ${dataset.version} · ${formatCount(dataset.items)} items · updated ${formatTime(dataset.updatedAt)} ·
      created ${formatTime(dataset.createdAt)}
    </p>
    <div class="toolbar" role="group" aria-label="Show">
      <label class="field inline">
        <span>Version</span>
        <select value=${String(version)} onChange=${set('version')} data-testid="version-picker">
          ${versions.map((v) => html`<option value=${String(v)}>${v === dataset.version ? `${v} (current)` : String(v)}</option>`)}
        </select>
      </label>
      <label class="field inline">
        <span>Per page</span>
        <select value=${size} onChange=${set('limit')} data-testid="items-size">
          ${SIZES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
    </div>
    <${Items} key=${`${version}/${size}`} dataset=${dataset} version=${version} size=${size}
      total=${version === dataset.version ? dataset.items : null} />
  </section>`;
}
