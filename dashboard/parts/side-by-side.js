// Two variants side by side, input by input (issue 36), from GET /results/compare: every result of
// each (the newest 20,000 at most) grouped by input (the same JSON, whatever its key order), inputs with
// the most results first. Per input: n, mean score and win rate of each variant, and their newest
// outputs as text.
import { useState } from 'preact/hooks';
import { experimentPath, withQuery } from '../api.js';
import { formatChance, formatCount, formatNumber } from '../format.js';
import { useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading } from './common.js';
import { TextView } from './text-view.js';

/** Inputs per page. */
const SHOWN = 20;

/** The win rate of `which` on an input: a's as answered, b's its complement. */
function winOf(item, which) {
  if (item.winRate === null) return null;
  return which === 'a' ? item.winRate : 1 - item.winRate;
}

function Stats({ item, keys, metric }) {
  return html`<table class="compact compare-stats" data-testid="compare-stats">
    <thead>
      <tr>
        <th scope="col">Variant</th>
        <th scope="col">n</th>
        <th scope="col">${metric ? `Mean ${metric}` : 'Mean score'}</th>
        <th scope="col" title="Share of pairs (one result of each, both scored) this variant wins; ties count half">Win rate</th>
      </tr>
    </thead>
    <tbody>
      ${['a', 'b'].map(
        (w) => html`<tr data-testid=${`compare-side-${w}`}>
          <th scope="row" class="mono">${keys[w]}</th>
          <td data-testid="compare-n">${formatCount(item[w].n)}</td>
          <td data-testid="compare-mean" title=${`${item[w].scored} of ${item[w].n} scored`}>
            ${item[w].mean === null ? '—' : formatNumber(item[w].mean)}
          </td>
          <td data-testid="compare-win">${formatChance(winOf(item, w))}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function Outputs({ side, name }) {
  return html`<div data-testid="compare-outputs">
    <h4 class="mono">${name} <span class="muted small">(newest ${side.outputs.length} of ${side.n})</span></h4>
    ${
      side.outputs.length === 0
        ? html`<p class="muted small">No result for this input.</p>`
        : html`<ol>
            ${side.outputs.map(
              (o) => html`<li data-testid="compare-output" data-log-id=${o.logId}>
                <${TextView} value=${o.output} label=${`Output of ${name}`} testid="compare-output-text" />
              </li>`,
            )}
          </ol>`
    }
  </div>`;
}

export function SideBySide({ experiment, a, b, metric, since, until }) {
  const { api } = useSession();
  const [trail, setTrail] = useState([]);
  const cursor = trail.at(-1);
  const params = { a, b, metric, since, until, limit: String(SHOWN) };
  const loaded = useLoad(
    () =>
      a === b
        ? Promise.resolve(null)
        : api.get(withQuery(experimentPath(experiment.slug, '/results/compare'), { ...params, cursor })),
    [experiment.slug, JSON.stringify(params), cursor],
  );
  if (a === b) return html`<p class="empty">Pick two different variants.</p>`;
  if (loaded.error) return html`<${ErrorNote} error=${loaded.error} />`;
  const data = loaded.data;
  // Kept while another pair loads: shown only for the pair and metric it was read for.
  if (!data || data.a !== a || data.b !== b || (data.metric ?? undefined) !== (metric || undefined)) {
    return html`<${Loading} what="Reading both variants' results" />`;
  }
  if (data.total === 0) {
    return html`<p class="empty" data-testid="compare-none">No results from ${a} or ${b}${since || until ? ' in this time' : ''}.</p>`;
  }
  const keys = { a, b };
  return html`<div class="compare" data-testid="compare-list">
    <p class="muted small" data-testid="compare-count">
      ${`${formatCount(data.total)} input${data.total === 1 ? '' : 's'} from ${formatCount(data.scanned.a)} results of ${a} and ${formatCount(data.scanned.b)} of ${b}`}${data.truncated ? ' (the newest 20,000 of each: there are more)' : ''};
      most results first.${metric ? ` Score: ${metric} (feedback first, then the result's own value).` : ' Pick a metric to score them.'}
    </p>
    ${data.inputs.map(
      (item, i) => html`<section class="compare-input" data-testid="compare-row" data-index=${String(i)}>
        <h3 class="small muted">Input</h3>
        <${TextView} value=${item.input} label="Input" testid="compare-input" />
        <${Stats} item=${item} keys=${keys} metric=${metric} />
        <div class="compare-outputs">
          <${Outputs} side=${item.a} name=${a} />
          <${Outputs} side=${item.b} name=${b} />
        </div>
      </section>`,
    )}
    <nav class="pager" aria-label="Pages of inputs">
      <button type="button" disabled=${trail.length === 0} onClick=${() => setTrail(trail.slice(0, -1))} data-testid="compare-prev">
        Previous
      </button>
      <span class="muted small">Page ${trail.length + 1}</span>
      <button type="button" disabled=${!data.nextCursor} onClick=${() => setTrail([...trail, data.nextCursor])} data-testid="compare-next">
        Next
      </button>
    </nav>
  </div>`;
}
