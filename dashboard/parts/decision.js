// What was decided when an experiment completed (issue 36, item 5): how the list and the head say it, and
// the fields the Complete confirmation asks for ("ship which variant, and why").
import { formatTime } from '../format.js';
import { html } from '../html.js';

/** "shipped B" / "no change shipped" (the core's wording, without the note). */
export function decisionWhat(decision) {
  return decision.variant === 'none' ? 'no change shipped' : `shipped ${decision.variant}`;
}

/** The head's line: what shipped, why, and when it was decided. */
export function DecisionLine({ decision }) {
  if (!decision) return null;
  return html`<p class="decision" data-testid="decision">
    <strong>Decision:</strong> <span data-testid="decision-what">${decisionWhat(decision)}</span>
    ${decision.note && html`<span>: </span><span data-testid="decision-note">${decision.note}</span>`}
    <span class="muted small"> · decided ${formatTime(decision.decidedAt)}</span>
  </p>`;
}

export const NOTE_MAX = 2000;

/** The variant select (every variant, 'none', or later) and the note, inside the Complete confirmation. */
export function DecisionFields({ experiment, value, onChange }) {
  const set = (field) => (e) => onChange({ ...value, [field]: e.currentTarget.value });
  return html`<div class="decision-fields">
    <label class="field">
      <span>What ships?</span>
      <select value=${value.variant} onChange=${set('variant')} data-testid="decision-variant">
        <option value="">not decided yet</option>
        ${experiment.variants.map((v) => html`<option value=${v.key}>ship ${v.key}</option>`)}
        <option value="none">none: no change shipped</option>
      </select>
    </label>
    <label class="field">
      <span>Why (optional)</span>
      <textarea rows="2" maxlength=${NOTE_MAX} value=${value.note} onInput=${set('note')}
        disabled=${value.variant === ''} placeholder="as good, 30% cheaper" data-testid="decision-note-input"></textarea>
    </label>
  </div>`;
}

/** The PATCH's decision, or undefined when none was chosen. */
export function decisionBody(value) {
  if (value.variant === '') return undefined;
  return { variant: value.variant, note: value.note.trim() };
}
