// Two variants' outputs side by side for the same input: the newest results of each variant (up to
// COMPARED), grouped by their input (the same JSON, whatever its key order); inputs both variants
// answered, most recently answered first.
import { experimentPath, withQuery } from '../api.js';
import { useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Json, Loading } from './common.js';
import { pairsText } from './result-row.js';

/** Results of each variant read (one page of the API, newest first). */
export const COMPARED = 500;
/** Inputs shown. */
const SHOWN = 25;

/** JSON text with object keys sorted, so the same input sent with its keys in another order matches. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The newest result of each input (results come newest first). */
function byInput(results) {
  const map = new Map();
  for (const r of results) {
    if (r.input === null) continue;
    const key = canonical(r.input);
    if (!map.has(key)) map.set(key, { result: r, count: 0 });
    map.get(key).count++;
  }
  return map;
}

function Side({ entry }) {
  const r = entry.result;
  const said = Object.keys(r.feedback ?? {}).length > 0;
  return html`<td data-label=${r.variantKey} data-testid="compare-output" data-log-id=${r.logId}>
    <${Json} value=${r.output} label=${`Output of ${r.variantKey}`} />
    ${r.metrics && html`<p class="small mono">${pairsText(r.metrics)}</p>`}
    ${said && html`<p class="small mono" data-testid="compare-feedback">feedback: ${pairsText(r.feedback)}</p>`}
    ${entry.count > 1 && html`<p class="small muted">${entry.count} results for this input; the newest shown</p>`}
  </td>`;
}

export function SideBySide({ experiment, a, b, since, until }) {
  const { api } = useSession();
  const read = (variant) =>
    api.get(
      withQuery(experimentPath(experiment.slug, '/results'), {
        variant,
        since,
        until,
        order: 'desc',
        limit: String(COMPARED),
      }),
    );
  const loaded = useLoad(async () => {
    const [left, right] = await Promise.all([read(a), read(b)]);
    return { a, b, since, until, left: byInput(left.results), right: byInput(right.results) };
  }, [experiment.slug, a, b, since, until]);
  if (a === b) return html`<p class="empty">Pick two different variants.</p>`;
  if (loaded.error) return html`<${ErrorNote} error=${loaded.error} />`;
  const data = loaded.data;
  // Kept while another pair loads: shown only for the pair and times it was read for.
  if (!data || data.a !== a || data.b !== b || data.since !== since || data.until !== until) {
    return html`<${Loading} what="Reading both variants' results" />`;
  }
  const { left, right } = data;
  const both = [...left.keys()].filter((k) => right.has(k));
  if (both.length === 0) {
    return html`<p class="empty" data-testid="compare-none">
      No input has results from both ${a} and ${b} among the newest ${COMPARED} of each.
    </p>`;
  }
  return html`<div class="table-wrap">
    <p class="muted small" data-testid="compare-count">
      ${both.length} input${both.length === 1 ? '' : 's'} answered by both (of the newest ${COMPARED} results of each)${both.length > SHOWN ? `; the ${SHOWN} most recent shown` : ''}.
    </p>
    <table class="stack compact compare-table" data-testid="compare-table">
      <caption class="visually-hidden">The same inputs, ${a} and ${b} side by side</caption>
      <thead><tr><th scope="col">Input</th><th scope="col">${a}</th><th scope="col">${b}</th></tr></thead>
      <tbody>
        ${both.slice(0, SHOWN).map(
          (k) => html`<tr data-testid="compare-row">
            <td data-label="Input"><${Json} value=${left.get(k).result.input} label="Input" /></td>
            <${Side} entry=${left.get(k)} />
            <${Side} entry=${right.get(k)} />
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
