// One result in the results table: when, which variant (flagged when it named none, or another than its
// assignment), the user; its input and output as text (first lines, "more" to read on); its score (its
// metrics, the feedback given on it, the comments sent with that feedback) and the context its assign
// received; a row opens to its JSON and, for a result read from a trace, to that trace (trace-summary.js).
// A traced result without its own input or output shows its trace's messages instead.
import { formatNumber, formatTime, roundNumber } from '../format.js';
import { html } from '../html.js';
import { Json } from './common.js';
import { TextView } from './text-view.js';
import { TraceSummary, traceMessages } from './trace-summary.js';

/** `{name: value}` as one line: numbers rounded (format.js formatNumber), true/false as they are, objects as JSON. */
export function pairsText(values) {
  if (!values) return '';
  const shown = (v) =>
    typeof v === 'number'
      ? formatNumber(v)
      : v !== null && typeof v === 'object'
        ? JSON.stringify(v, (_k, x) => roundNumber(x))
        : v;
  return Object.entries(values)
    .map(([k, v]) => `${k}: ${shown(v)}`)
    .join(' · ');
}

/** The comments sent with feedback on a result (newest first; none when the server gives none). */
function Comments({ comments }) {
  if (!Array.isArray(comments) || comments.length === 0) return null;
  return html`<ul class="comments small" data-testid="result-comments">
    ${comments.map(
      (c) => html`<li data-testid="result-comment"><span class="comment-text">${c.text}</span>
        ${c.at && html` <span class="muted" title=${c.at}>${formatTime(c.at)}</span>`}</li>`,
    )}
  </ul>`;
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

const dash = html`<span class="muted">—</span>`;

/** The result's own input (or output), else its trace's: `[value, whether it is the trace's]`. */
function ownOrTraced(own, traced) {
  if (own !== null && own !== undefined) return [own, false];
  const t = traceMessages(traced);
  return [t, t !== null];
}

const fromTrace = html`<div class="muted small" data-testid="from-trace">from the trace</div>`;

export function ResultRow({ result: r, open, onToggle }) {
  const flagged = !r.knownVariant || Boolean(r.assignedVariant);
  const detail = `result-${r.logId}`;
  const said = r.feedback && Object.keys(r.feedback).length > 0;
  const [input, tracedInput] = ownOrTraced(r.input, r.trace?.input);
  const [output, tracedOutput] = ownOrTraced(r.output, r.trace?.output);
  return html`<tr class=${flagged ? 'flagged' : ''} data-testid="result-row" data-log-id=${r.logId} data-flagged=${String(flagged)}>
      <td data-label="Result" title=${`stored ${r.createdAt}${r.timestamp ? `; client time ${r.timestamp}` : ''}`}>
        <span class="nowrap">${formatTime(r.createdAt)}</span>
        <div><span class="mono strong" data-testid="result-variant">${r.variantKey}</span> <${Flags} result=${r} /></div>
        ${
          r.trace &&
          html`<div><span class="chip info" data-testid="result-trace-chip" title="Read from an OpenTelemetry trace: Details shows its spans"
            >trace · ${r.trace.spanCount} span${r.trace.spanCount === 1 ? '' : 's'}</span></div>`
        }
        <div class="mono small muted" data-testid="result-user">${r.userId ?? ''}</div>
      </td>
      <td data-label="Input" class="text-cell"><${TextView} value=${input} label="Input" testid="result-input" />${tracedInput && fromTrace}</td>
      <td data-label="Output" class="text-cell"><${TextView} value=${output} label="Output" testid="result-output" />${tracedOutput && fromTrace}</td>
      <td data-label="Score" class="metrics-cell small">
        <div data-testid="result-metrics">${pairsText(r.metrics)}</div>
        <div data-testid="result-feedback-line"><span class="muted">feedback: </span><span data-testid="result-feedback">${said ? pairsText(r.feedback) : dash}</span></div>
        <${Comments} comments=${r.comments ?? []} />
      </td>
      <td data-label="Assign context" class="metrics-cell small" data-testid="result-assign-context">
        ${r.assignmentContext ? pairsText(r.assignmentContext) : dash}
      </td>
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
        <td colspan="6" class="wide">
          <div class="detail-grid">
            <div><h4>Input${tracedInput ? ' (from the trace)' : ''}</h4><${Json} value=${input} label="Input" /></div>
            <div><h4>Output${tracedOutput ? ' (from the trace)' : ''}</h4><${Json} value=${output} label="Output" /></div>
            <div><h4>Context</h4><${Json} value=${r.context} label="Context" /></div>
            <div><h4>Metrics</h4><${Json} value=${r.metrics} label="Metrics" /></div>
            <div><h4>Feedback</h4><${Json} value=${said ? r.feedback : null} label="Feedback" /></div>
            <div><h4>Assign context</h4><${Json} value=${r.assignmentContext} label="Assign context" /></div>
          </div>
          ${r.trace && html`<${TraceSummary} trace=${r.trace} id=${`trace-${r.logId}`} />`}
          <dl class="ids small">
            <dt>user</dt><dd class="mono">${r.userId ?? '—'}</dd>
            <dt>logId</dt><dd class="mono">${r.logId}</dd>
            <dt>assignmentId</dt><dd class="mono">${r.assignmentId ?? '—'}</dd>
            <dt>client time</dt><dd class="mono">${r.timestamp ?? '—'}</dd>
            <dt>version</dt><dd>${r.experimentVersion}</dd>
          </dl>
        </td>
      </tr>`
    }`;
}
