// The form that makes an API key (POST /keys) and the note that shows its secret the one time the API
// answers it, with a Copy button.
import { useRef, useState } from 'preact/hooks';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { useSettings } from './settings.js';

/** The rate field's hint, with the server's default (RATE_LIMIT_PER_SECOND) when known. */
function rateHint(settings) {
  if (!settings) return "Empty: the service's default (RATE_LIMIT_PER_SECOND).";
  const n = settings.rateLimitPerSecond;
  return n === 0
    ? "Empty: the service's default, which on this server is no limit (RATE_LIMIT_PER_SECOND=0)."
    : `Empty: the service's default, ${n} requests per second on this server (RATE_LIMIT_PER_SECOND).`;
}

/** The scopes a key may hold (src/core/keys.ts SCOPES), with what each allows. */
export const SCOPES = [
  ['assign', 'POST assign, OpenFeature evaluations'],
  ['log', 'POST log and logs'],
  ['read', 'every GET: experiments, results, exports'],
  ['admin', 'everything, keys included'],
];

/**
 * The secret of a key just made. The API never answers it again, so it is shown here once and
 * forgotten when the note is dismissed or the page left.
 */
export function SecretKey({ created, onDismiss }) {
  const code = useRef(null);
  const [copied, setCopied] = useState(null);
  // Without the Clipboard API (an http origin other than localhost, a refused permission) the text is
  // selected instead, so a keyboard shortcut copies it.
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
      await navigator.clipboard.writeText(created.key);
      setCopied('copied');
    } catch {
      select();
    }
  };
  return html`<div class="hint secret-note" role="status" data-testid="key-secret">
    <p><strong>Key ${created.name} created.</strong> Its secret is shown only now: it will not be shown
      again. Store it before you leave this page.</p>
    <p><code ref=${code} data-testid="key-secret-value">${created.key}</code></p>
    <div class="form-buttons">
      <button type="button" onClick=${copy} data-testid="key-copy">Copy</button>
      <button type="button" class="link" onClick=${onDismiss} data-testid="key-secret-done">I stored it</button>
    </div>
    ${copied === 'copied' && html`<p class="ok" data-testid="key-copied">Copied to the clipboard.</p>`}
    ${copied === 'selected' && html`<p data-testid="key-selected">The clipboard is not available here: the secret is selected, press Ctrl+C (⌘C) to copy it.</p>`}
  </div>`;
}

const words = (text) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** `onCreated(answer)` gets the API's 201 answer, secret included. */
export function KeyForm({ onCreated }) {
  const { api } = useSession();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState(['read']);
  const [experiments, setExperiments] = useState('');
  const [rate, setRate] = useState('');
  const settings = useSettings();
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const toggle = (scope) =>
    setScopes(scopes.includes(scope) ? scopes.filter((s) => s !== scope) : [...scopes, scope]);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    if (scopes.length === 0) {
      setError(new Error('Pick at least one scope.'));
      return;
    }
    setBusy(true);
    try {
      const body = { name, scopes: SCOPES.map(([s]) => s).filter((s) => scopes.includes(s)) };
      const slugs = words(experiments);
      if (slugs.length > 0) body.experiments = slugs;
      if (rate.trim() !== '') body.rateLimitPerSecond = Number(rate);
      const answer = await api.post('/keys', body);
      // Kept on an error (the person fixes what the server named); cleared once the key exists.
      setName('');
      setScopes(['read']);
      setExperiments('');
      setRate('');
      onCreated(answer);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form onSubmit=${submit} data-testid="key-form">
    <h2>Create a key</h2>
    <div class="field"><label for="key-name">Name</label>
      <input id="key-name" required maxlength="200" value=${name} onInput=${(e) => setName(e.currentTarget.value)}
        aria-describedby="key-name-hint" data-testid="key-name" />
      <p class="hint small" id="key-name-hint">Who holds it, e.g. the agent or the colleague.</p></div>
    <fieldset>
      <legend>Scopes</legend>
      <div class="checks">
        ${SCOPES.map(
          ([scope, what]) => html`<label key=${scope}>
            <input type="checkbox" checked=${scopes.includes(scope)} onChange=${() => toggle(scope)}
              data-testid=${`key-scope-${scope}`} />
            ${scope} <span class="muted small">(${what})</span>
          </label>`,
        )}
      </div>
    </fieldset>
    <div class="field"><label for="key-experiments">Experiments (optional)</label>
      <input id="key-experiments" value=${experiments} onInput=${(e) => setExperiments(e.currentTarget.value)}
        aria-describedby="key-experiments-hint" data-testid="key-experiments" />
      <p class="hint small" id="key-experiments-hint">Comma-separated slugs the key may touch; empty: every experiment.</p></div>
    <div class="field"><label for="key-rate">Rate limit per second (optional)</label>
      <input id="key-rate" type="number" min="1" max="1000000" step="1" inputmode="numeric" value=${rate}
        onInput=${(e) => setRate(e.currentTarget.value)} aria-describedby="key-rate-hint" data-testid="key-rate" />
      <p class="hint small" id="key-rate-hint" data-testid="key-rate-hint">${rateHint(settings)}</p></div>
    <${ErrorNote} error=${error} testid="key-form-error" />
    <div class="form-buttons">
      <button type="submit" class="primary" disabled=${busy} data-testid="key-create">${busy ? 'Creating…' : 'Create key'}</button>
    </div>
  </form>`;
}
