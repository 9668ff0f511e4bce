// The key prompt: the only way in. The key goes to sessionStorage once GET /keys/me accepts it.
import { useState } from 'preact/hooks';
import { html } from '../html.js';

export function Login({ onSubmit, error }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    if (!key.trim()) return;
    setBusy(true);
    await onSubmit(key.trim());
    setBusy(false);
  };
  return html`<main class="login" id="main">
    <form data-testid="login-form" onSubmit=${submit} aria-describedby="login-help">
      <h1>agentsplit</h1>
      <p id="login-help" class="muted">
        Paste an API key. It stays in this tab only (sessionStorage) and is sent to this server's API as${' '}
        <code>x-api-key</code>. A <code>read</code> key can look; an <code>admin</code> key can also change
        experiments.
      </p>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        name="key"
        type="password"
        autocomplete="off"
        spellcheck="false"
        required
        value=${key}
        onInput=${(e) => setKey(e.currentTarget.value)}
        aria-invalid=${error ? 'true' : 'false'}
        aria-errormessage=${error ? 'login-error' : undefined}
        data-testid="login-key"
      />
      <button type="submit" class="primary" disabled=${busy} data-testid="login-submit">
        ${busy ? 'Checking…' : 'Sign in'}
      </button>
      ${error && html`<p id="login-error" class="error-note" role="alert" data-testid="login-error">${error}</p>`}
    </form>
  </main>`;
}
