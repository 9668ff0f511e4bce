// The results list's search box (issue 36): text found in an input, an output or a feedback comment, through
// the API's `q` (3 to 200 characters; the server answers 400 otherwise, so shorter text is not sent).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';

/** The shortest and longest text the API searches for. */
export const SEARCH_MIN = 3;
export const SEARCH_MAX = 200;

/** A search form: Enter or "Search" applies the text, "Clear" removes it; `onSearch(text | '')`. */
export function ResultSearch({ value, onSearch }) {
  const [text, setText] = useState(value ?? '');
  useEffect(() => setText(value ?? ''), [value]);
  const trimmed = text.trim();
  const tooShort = trimmed.length > 0 && [...trimmed].length < SEARCH_MIN;
  const submit = (e) => {
    e.preventDefault();
    if (!tooShort) onSearch(trimmed);
  };
  return html`<form class="toolbar result-search" role="search" onSubmit=${submit} data-testid="result-search">
    <label class="field inline grow">
      <span>Search</span>
      <input
        type="search"
        value=${text}
        maxlength=${SEARCH_MAX}
        placeholder="text in inputs, outputs or comments"
        aria-describedby="result-search-hint"
        onInput=${(e) => setText(e.currentTarget.value)}
        data-testid="result-search-input"
      />
    </label>
    <button type="submit" disabled=${tooShort} data-testid="result-search-go">Search</button>
    ${value && html`<button type="button" onClick=${() => onSearch('')} data-testid="result-search-clear">Clear</button>`}
    <span id="result-search-hint" class="muted small" data-testid="result-search-hint">
      ${tooShort ? `at least ${SEARCH_MIN} characters` : value ? `results holding “${value}”` : ''}
    </span>
  </form>`;
}
