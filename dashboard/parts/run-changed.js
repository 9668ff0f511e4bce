// The items whose score changed most in an offline run (issue 40): per item its id, the metric, the
// variant against the control and the difference, the item's input (read from the run's dataset version)
// and the two outputs side by side, each with its score (the item's mean over its trials). Laid out as
// the results' "Side by side" (parts/side-by-side.js) lays out two variants' outputs; text by TextView.
import { withQuery } from '../api.js';
import { formatNumber } from '../format.js';
import { useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { TextView } from './text-view.js';

/** Pages of 1,000 items read at most to find the inputs of the items shown. */
const MOST_PAGES = 10;

/** itemId → input, for `ids`, from the run's dataset version; empty when it cannot be read (deleted). */
function useInputs(run, ids) {
  const { api } = useSession();
  const key = ids.join('\n');
  return useLoad(async () => {
    const wanted = new Set(ids);
    const found = new Map();
    let cursor;
    for (let i = 0; i < MOST_PAGES && wanted.size > 0; i++) {
      const path = `/datasets/${encodeURIComponent(run.dataset)}/items`;
      const page = await api.get(withQuery(path, { version: run.version, limit: 1000, cursor }));
      for (const item of page.items) {
        if (wanted.delete(item.id)) found.set(item.id, item.input);
      }
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    return found;
  }, [run.dataset, run.version, key]);
}

function signed(x) {
  return x > 0 ? `+${formatNumber(x)}` : formatNumber(x);
}

/** 'good' when the change goes the metric's declared way, 'bad' against it, '' with no direction. */
function toneOf(comparison, c) {
  const direction = comparison.metrics.find((m) => m.name === c.metric)?.direction;
  if (!direction) return '';
  return c.difference > 0 === (direction === 'increase') ? 'good' : 'bad';
}

function Side({ variant, side, metric, role }) {
  return html`<div data-testid="changed-side" data-variant=${variant}>
    <h4>
      <span class="mono">${variant}</span> <span class="muted small">(${role})</span>${' · '}<span class="small">${metric} <strong data-testid="changed-score">${formatNumber(side.mean)}</strong></span>
    </h4>
    <${TextView} value=${side.output} label=${`Output of ${variant}`} testid="changed-output" />
  </div>`;
}

export function ChangedItems({ comparison, run }) {
  const changed = comparison.changed;
  const inputs = useInputs(
    run,
    changed.map((c) => c.itemId),
  );
  return html`<section aria-labelledby="changed-title" data-testid="changed-items">
    <h2 id="changed-title">The items that changed most</h2>
    ${
      changed.length === 0
        ? html`<p class="empty" data-testid="changed-none">
            No item scored differently under another variant than under ${comparison.control}.
          </p>`
        : html`<p class="muted small">
              By ${changed[0].metric}: each item's mean over its trials, the variant minus ${comparison.control}, largest
              changes first, with one output of each.
            </p>
            ${changed.map(
              (
                c,
              ) => html`<article class="compare-input changed-item" data-testid="changed-item" data-item-id=${c.itemId}
                data-variant=${c.variant}>
                <h3 class="changed-head">
                  <span class="mono" data-testid="changed-id">${c.itemId}</span>
                  <span class="small">
                    ${`${c.metric}, ${c.variant} vs ${comparison.control}: `}<strong
                      class=${`lift ${toneOf(comparison, c)}`} data-testid="changed-difference"
                      >${signed(c.difference)}</strong
                    >
                  </span>
                </h3>
                ${
                  inputs.data?.has(c.itemId) &&
                  html`<${TextView} value=${inputs.data.get(c.itemId)} label="Input" testid="changed-input" />`
                }
                <div class="compare-outputs">
                  <${Side} variant=${comparison.control} side=${c.control} metric=${c.metric} role="control" />
                  <${Side} variant=${c.variant} side=${c.treatment} metric=${c.metric} role="treatment" />
                </div>
              </article>`,
            )}`
    }
  </section>`;
}
