// A webhook's signing secret (issue 27; rotation, issue 34): the note that shows a secret once, and the
// form that rotates it through POST /webhooks/:id/secret/rotate?graceSeconds=.
import { useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { formatTime } from '../format.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';

/** The server's default and longest grace periods (src/services/webhooks.ts), in hours. */
const DEFAULT_GRACE_HOURS = 24;
const MAX_GRACE_HOURS = 7 * 24;

/** A secret the API answers once (creation, rotation): shown here, and never again. */
export function SecretNote({ url, secret, testid, children }) {
  return html`<p class="hint secret-note" role="status" data-testid=${testid}>
    Signing secret for ${url}, shown only now: <code data-testid="secret-value">${secret}</code>
    ${children}
  </p>`;
}

/** What a rotation left signing beside the new secret. */
export function RotatedNote({ webhook }) {
  const until = webhook.previousSecretUntil;
  return html`<${SecretNote} url=${webhook.url} secret=${webhook.secret} testid="rotated-secret">
    <br />${
      until
        ? `The previous secret keeps signing beside it until ${formatTime(until)}: switch your receiver before then.`
        : 'The previous secret no longer signs: switch your receiver now.'
    }
  <//>`;
}

/**
 * Asks how long the current secret keeps signing beside the new one, then rotates; `onRotated(answer)`
 * gets the endpoint with its new secret.
 */
export function RotateForm({ webhook, onRotated, onCancel }) {
  const { api } = useSession();
  const [hours, setHours] = useState(String(DEFAULT_GRACE_HOURS));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const id = `grace-${webhook.id}`;
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const path = `/webhooks/${encodeURIComponent(webhook.id)}/secret/rotate`;
      const graceSeconds = Math.round(Number(hours) * 3600);
      onRotated(await api.post(withQuery(path, { graceSeconds }), {}));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="confirm" aria-label="Rotate the signing secret" onSubmit=${submit} data-testid="rotate-form">
    <p>A new signing secret replaces the current one; receivers must switch to it. Meanwhile the current
      secret keeps signing beside it (deliveries carry both signatures) for the grace period.</p>
    <div class="field">
      <label for=${id}>Grace period (hours)</label>
      <input id=${id} type="number" min="0" max=${MAX_GRACE_HOURS} step="1" inputmode="numeric" required
        value=${hours} onInput=${(e) => setHours(e.currentTarget.value)} aria-describedby=${`${id}-hint`}
        data-testid="rotate-grace" />
      <p class="hint small" id=${`${id}-hint`}>0: the current secret stops signing at once; at most ${MAX_GRACE_HOURS} (7 days).</p>
    </div>
    <${ErrorNote} error=${error} testid="rotate-error" />
    <button type="submit" class="danger" disabled=${busy} data-testid="rotate-confirm">
      ${busy ? 'Rotating…' : 'Rotate secret'}
    </button>
    <button type="button" onClick=${onCancel}>Cancel</button>
  </form>`;
}
