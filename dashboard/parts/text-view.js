// An input or an output as text to read (issue 36): a string as it is; an object by its usual text
// field (text, content, output, answer, …), else its string fields, else as JSON with numbers rounded.
// Long text shows its first lines, with "more" to read the rest.
import { useState } from 'preact/hooks';
import { readableJson } from '../format.js';
import { html } from '../html.js';

/** Fields agents usually put their text in, in the order they are looked for. */
const TEXT_FIELDS = [
  'text',
  'content',
  'output',
  'answer',
  'response',
  'message',
  'question',
  'prompt',
  'input',
];

/** Lines shown before "more". */
export const SHOWN_LINES = 3;
/** Characters shown before "more" (long lines wrap into several). */
const SHOWN_CHARS = 240;

/** The text of a logged input or output; '' for none. */
export function asText(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || Array.isArray(value)) return readableJson(value);
  for (const f of TEXT_FIELDS) if (typeof value[f] === 'string') return value[f];
  const entries = Object.entries(value);
  if (entries.length > 0 && entries.every(([, v]) => typeof v === 'string')) {
    return entries.length === 1 ? entries[0][1] : entries.map(([k, v]) => `${k}: ${v}`).join('\n');
  }
  return readableJson(value);
}

/** The first lines of `text` (and whether there is more). */
export function firstLines(text, lines = SHOWN_LINES, chars = SHOWN_CHARS) {
  const cut = text.split('\n').slice(0, lines).join('\n');
  const short = cut.length > chars ? `${cut.slice(0, chars)}…` : cut;
  return { text: short, more: short !== text };
}

/** `value` as text, its first lines shown, expandable. */
export function TextView({ value, label, testid }) {
  const [open, setOpen] = useState(false);
  const text = asText(value);
  if (text === '') return html`<span class="muted" data-testid=${testid}>—</span>`;
  const head = firstLines(text);
  return html`<div class="text-view" data-testid=${testid}>
    <pre class="text-body" aria-label=${label} data-open=${String(open)}>${open ? text : head.text}</pre>
    ${
      head.more &&
      html`<button type="button" class="link small" aria-expanded=${String(open)} onClick=${() => setOpen(!open)}
        data-testid="text-more">${open ? 'less' : 'more'}</button>`
    }
  </div>`;
}
