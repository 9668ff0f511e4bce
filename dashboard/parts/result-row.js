// One result in the results table: when, which variant (flagged when it named none, or another than its
// assignment), the user, its metrics, the feedback given on it and the context its assign received; a
// row opens to its JSON.
import { formatTime, formatValue } from '../format.js';
import { html } from '../html.js';
import { Json } from './common.js';

/** `{name: value}` as one line: numbers formatted, true/false as they are, objects as JSON. */
export function pairsText(values) {
  if (!values) return '';
  return Object.entries(values)
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

const dash = html`<span class="muted">—</span>`;

export function ResultRow({ result: r, open, onToggle }) {
  const flagged = !r.knownVariant || Boolean(r.assignedVariant);
  const detail = `result-${r.logId}`;
  const said = r.feedback && Object.keys(r.feedback).length > 0;
  return html`<tr class=${flagged ? 'flagged' : ''} data-testid="result-row" data-log-id=${r.logId} data-flagged=${String(flagged)}>
      <td data-label="Time" title=${`stored ${r.createdAt}${r.timestamp ? `; client time ${r.timestamp}` : ''}`}>
        ${formatTime(r.createdAt)}
      </td>
      <td data-label="Variant"><span class="mono strong" data-testid="result-variant">${r.variantKey}</span> <${Flags} result=${r} /></td>
      <td data-label="User" class="mono">${r.userId ?? dash}</td>
      <td data-label="Metrics" class="metrics-cell small wide">${pairsText(r.metrics)}</td>
      <td data-label="Feedback" class="metrics-cell small" data-testid="result-feedback">${said ? pairsText(r.feedback) : dash}</td>
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
        <td colspan="7" class="wide">
          <div class="detail-grid">
            <div><h4>Input</h4><${Json} value=${r.input} label="Input" /></div>
            <div><h4>Output</h4><${Json} value=${r.output} label="Output" /></div>
            <div><h4>Context</h4><${Json} value=${r.context} label="Context" /></div>
            <div><h4>Metrics</h4><${Json} value=${r.metrics} label="Metrics" /></div>
            <div><h4>Feedback</h4><${Json} value=${said ? r.feedback : null} label="Feedback" /></div>
            <div><h4>Assign context</h4><${Json} value=${r.assignmentContext} label="Assign context" /></div>
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
