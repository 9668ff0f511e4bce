// The analysis split by a declared segment (GET analysis?segment=key): the exploratory note first, then per
// value its results per variant and the same scorecard as the whole experiment's, with no verdict.
import { formatCount } from '../format.js';
import { html } from '../html.js';
import { Scorecard } from './scorecard.js';

/** 'A 120, B 118': a segment's results per variant. */
function resultsText(results) {
  return Object.entries(results)
    .map(([k, n]) => `${k} ${formatCount(n)}`)
    .join(', ');
}

export function Segments({ analysis, declared }) {
  if (!analysis.segments) return null;
  const { segment, segments } = analysis;
  return html`<section class="segments" data-testid="segments" data-segment=${segment} aria-labelledby="segments-title">
    <h2 id="segments-title">By ${segment}</h2>
    <p class="banner" role="note" data-testid="segment-note">${analysis.segmentNote}</p>
    ${
      analysis.withoutSegment > 0 &&
      html`<p class="muted small" data-testid="without-segment">
        ${formatCount(analysis.withoutSegment)} results have no ${segment} (none in their context or their assign's): in no segment.
      </p>`
    }
    ${segments.length === 0 && html`<p class="empty" data-testid="segments-empty">No results with a ${segment} yet.</p>`}
    ${segments.map(
      (s) => html`<div class="segment" data-testid="segment" data-value=${s.value}>
        <h3>
          <span data-testid="segment-value">${s.value}</span>
          ${s.mergedValues !== undefined && html` <span class="muted small">(${s.mergedValues} values merged)</span>`}
          <span class="muted small" data-testid="segment-results"> · results ${resultsText(s.results)}</span>
          ${s.unit === 'user' && html`<span class="muted small" data-testid="segment-unit"> · users as units</span>`}
        </h3>
        <${Scorecard} analysis=${{ ...analysis, metrics: s.metrics }} declared=${declared} />
      </div>`,
    )}
  </section>`;
}
