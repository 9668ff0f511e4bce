// The trace a result was read from (issue 39; POST /v1/traces), shown when its row opens: the trace id
// (with a copy button), the models it called, its span count, and one row per span in start order,
// indented under its parent, with its operation, model, tokens, whether it failed (a word, not only a
// colour) and a bar placing it in the run: a mini waterfall scaled to the root span's duration.
import { useRef, useState } from 'preact/hooks';
import { formatCount, formatNumber } from '../format.js';
import { html } from '../html.js';

/** Indentation stops here, so a deep tree still fits a phone. */
const MAX_INDENT = 6;

/** Trace messages (JSON text) parsed, so the views pretty-print them; text that is not JSON as it is; null for none. */
export function traceMessages(text) {
  if (typeof text !== 'string' || text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Each span's depth (0: its parent is not among the spans shown) and its parent's name. */
export function spanTree(spans) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const tree = new Map();
  for (const s of spans) {
    let depth = 0;
    let up = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
    const seen = new Set([s.spanId]);
    while (up && !seen.has(up.spanId)) {
      seen.add(up.spanId);
      depth++;
      up = up.parentSpanId ? byId.get(up.parentSpanId) : undefined;
    }
    tree.set(s.spanId, { depth, parent: depth > 0 ? byId.get(s.parentSpanId).name : null });
  }
  return tree;
}

/** The waterfall's scale: the root span's end (every bar within it; a span ending later widens it). */
export function runSpan(trace) {
  const root = trace.spans.find((s) => s.spanId === trace.rootSpanId);
  const ends = trace.spans.map((s) => s.startMs + s.durationMs);
  return Math.max(root ? root.startMs + root.durationMs : 0, ...ends, 0);
}

const ms = (v) => `${formatNumber(v)} ms`;
const percent = (part, whole) => (whole > 0 ? Math.min(100, Math.max(0, (part / whole) * 100)) : 0);

function tokens(s) {
  const parts = [];
  if (s.inputTokens !== undefined) parts.push(`${formatCount(s.inputTokens)} in`);
  if (s.outputTokens !== undefined) parts.push(`${formatCount(s.outputTokens)} out`);
  return parts.join(' · ');
}

/** The trace id, and a button copying it (or selecting it where the clipboard is not available). */
function TraceId({ id }) {
  const code = useRef(null);
  const [copied, setCopied] = useState(null);
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(code.current);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    setCopied('selected');
  };
  const copy = async () => {
    if (!navigator.clipboard?.writeText) return select();
    try {
      await navigator.clipboard.writeText(id);
      setCopied('copied');
    } catch {
      select();
    }
  };
  return html`<code ref=${code} class="mono trace-id" data-testid="trace-id">${id}</code>
    <button type="button" class="small trace-copy" onClick=${copy} aria-label="Copy trace id" data-testid="trace-copy">Copy</button>
    <span class="small muted" role="status" data-testid="trace-copied"
      >${copied === 'copied' ? 'Copied.' : copied === 'selected' ? 'Selected: press Ctrl+C (⌘C) to copy.' : ''}</span
    >`;
}

function SpanRow({ span: s, depth, parent, total }) {
  const left = percent(s.startMs, total);
  const width = Math.min(percent(s.durationMs, total), 100 - left);
  const said = tokens(s);
  const dash = html`<span class="muted">—</span>`;
  return html`<tr class=${s.error ? 'span-error' : ''} data-testid="trace-span" data-span-id=${s.spanId} data-depth=${depth} data-error=${String(s.error)}>
    <th scope="row" class="span-name" style=${{ '--depth': Math.min(depth, MAX_INDENT) }}>
      ${depth > 0 && html`<span class="span-branch" aria-hidden="true">└ </span>`}<span class="mono" data-testid="span-name">${s.name}</span>
      ${parent !== null && html`<span class="visually-hidden"> (in ${parent})</span>`}
    </th>
    <td data-label="Operation" class="mono small">${s.operation ?? dash}</td>
    <td data-label="Model" class="mono small">${s.model ?? dash}</td>
    <td data-label="Time" class="span-time">
      <div class="span-track" role="img" aria-label=${`from ${ms(s.startMs)} to ${ms(s.startMs + s.durationMs)} of ${ms(total)}`}
        title=${`starts at ${ms(s.startMs)}`} data-testid="span-bar">
        <div class="span-bar" style=${{ left: `${left}%`, width: `${width}%` }}></div>
      </div>
      <span class="small num" data-testid="span-duration">${ms(s.durationMs)}</span>
    </td>
    <td data-label="Tokens" class="small" data-testid="span-tokens">${said || dash}</td>
    <td data-label="Status" class="small" data-testid="span-status">
      ${s.error ? html`<span class="chip bad">error</span>` : html`<span class="muted">ok</span>`}
    </td>
  </tr>`;
}

/** A result's `trace`: its facts and its spans. `id` names its heading (unique on the page). */
export function TraceSummary({ trace, id }) {
  const tree = spanTree(trace.spans);
  const total = runSpan(trace);
  const spans = [...trace.spans].sort((a, b) => a.startMs - b.startMs);
  const failed = spans.filter((s) => s.error).length;
  const shown = trace.spans.length < trace.spanCount ? ` (the first ${trace.spans.length} shown)` : '';
  return html`<section class="trace" aria-labelledby=${id} data-testid="result-trace">
    <h4 id=${id}>Trace</h4>
    <dl class="ids small trace-facts">
      <dt>trace id</dt><dd><${TraceId} id=${trace.traceId} /></dd>
      <dt>models</dt><dd class="mono" data-testid="trace-models">${trace.models.length > 0 ? trace.models.join(', ') : '—'}</dd>
      <dt>spans</dt><dd data-testid="trace-span-count">${formatCount(trace.spanCount)}${shown}${failed > 0 ? `, ${failed} failed` : ''}</dd>
    </dl>
    ${
      spans.length > 0 &&
      html`<div class="trace-wrap">
        <table class="trace-spans" data-testid="trace-spans">
          <caption>Spans in start order, each under its parent; bars place them in the run's ${ms(total)}.</caption>
          <thead>
            <tr>
              <th scope="col">Span</th>
              <th scope="col">Operation</th>
              <th scope="col">Model</th>
              <th scope="col">Time</th>
              <th scope="col">Tokens</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            ${spans.map((s) => {
              const { depth, parent } = tree.get(s.spanId);
              return html`<${SpanRow} key=${s.spanId} span=${s} depth=${depth} parent=${parent} total=${total} />`;
            })}
          </tbody>
        </table>
      </div>`
    }
  </section>`;
}
