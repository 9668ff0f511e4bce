// Small pieces every page uses: badges, error notes, JSON blocks.
import { readableJson } from '../format.js';
import { html } from '../html.js';

export const STATUSES = ['draft', 'running', 'paused', 'completed', 'released', 'archived'];

/** Which statuses each status may move to: the server's rule (src/core/experiment.ts TRANSITIONS). */
export const TRANSITIONS = {
  draft: ['running', 'archived'],
  running: ['paused', 'completed', 'archived'],
  paused: ['running', 'completed', 'archived'],
  completed: ['archived'],
  // Running again takes new variants (the edit form); the buttons offer archiving.
  released: ['archived'],
  archived: [],
};

export function StatusBadge({ status }) {
  return html`<span class=${`badge status-${status}`} data-testid="status-badge">${status}</span>`;
}

const VERDICT_WORDS = {
  winner: 'winner',
  'no-winner-yet': 'no winner yet',
  'guardrail-failed': 'guardrail failed',
  'sample-ratio-mismatch': 'sample ratio mismatch',
  'not-enough-data': 'not enough data',
};

export function VerdictBadge({ verdict }) {
  if (!verdict) return null;
  const words = VERDICT_WORDS[verdict.status] ?? verdict.status;
  const who = verdict.status === 'winner' && verdict.variant ? `: ${verdict.variant}` : '';
  return html`<span class=${`badge verdict-${verdict.status}`} title=${verdict.summary} data-testid="verdict-badge"
    >${words}${who}</span
  >`;
}

/** An ApiError or any error, as a sentence a person can act on. */
export function errorText(error) {
  if (!error) return '';
  if (error.status === 401) return 'The key was not accepted (401). Sign in again.';
  if (error.status === 403) return `This key may not do that: ${error.message}`;
  if (error.status === 404) return `Not found: ${error.message}`;
  if (error.status === 429 && error.retryAfter) return `${error.message} (retry in ${error.retryAfter} s)`;
  return error.message || String(error);
}

export function ErrorNote({ error, testid = 'error' }) {
  if (!error) return null;
  return html`<p class="error-note" role="alert" data-testid=${testid}>${errorText(error)}</p>`;
}

/** JSON as readable, indented text, numbers rounded (format.js readableJson); null shows as a dash. */
export function Json({ value, label }) {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  return html`<pre class="json" aria-label=${label} tabindex="0">${readableJson(value)}</pre>`;
}

export function Loading({ what = 'Loading' }) {
  return html`<p class="muted" aria-live="polite">${what}…</p>`;
}
