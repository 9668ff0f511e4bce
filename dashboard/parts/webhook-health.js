// An endpoint's health and switches (issue 36 item 3): its last attempt (when, ok or failing, the error
// in words), enable/disable (PATCH {enabled}), and its description (PATCH {description}).
import { useState } from 'preact/hooks';
import { formatAgo, formatTime } from '../format.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';

/** "failing · last attempt 2 min ago (…): getaddrinfo ENOTFOUND host"; "no delivery yet". */
export function WebhookHealth({ webhook }) {
  if (!webhook.lastDeliveryAt) {
    return html`<p class="muted small" data-testid="webhook-health" data-status="none">No delivery yet.</p>`;
  }
  const ok = webhook.lastStatus === 'ok';
  return html`<p class=${`webhook-health small ${ok ? 'ok' : 'failing'}`} data-testid="webhook-health" data-status=${webhook.lastStatus}>
    <strong>${ok ? 'ok' : 'failing'}</strong>
    <span> · last attempt ${formatAgo(Date.now() - Date.parse(webhook.lastDeliveryAt))}</span>
    <span class="muted"> (${formatTime(webhook.lastDeliveryAt)})</span>
    ${!ok && webhook.lastError && html`<span>: <code class="webhook-error" data-testid="webhook-last-error">${webhook.lastError}</code></span>`}
  </p>`;
}

/** The enable/disable switch: a disabled endpoint is queued no new deliveries; queued ones wait. */
export function EnabledSwitch({ webhook, onChanged }) {
  const { api } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.patch(`/webhooks/${encodeURIComponent(webhook.id)}`, { enabled: !webhook.enabled });
      onChanged();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return html`<span class="webhook-switch">
    <label>
      <input type="checkbox" role="switch" checked=${webhook.enabled} disabled=${busy} onChange=${toggle}
        aria-label=${`Enabled: ${webhook.url}`} data-testid="webhook-enabled" />
      ${webhook.enabled ? ' Enabled' : ' Disabled'}
    </label>
    <${ErrorNote} error=${error} testid="webhook-enabled-error" />
  </span>`;
}

/** Edits the description in place (empty: none shown). */
export function DescriptionForm({ webhook, onDone, onCancel }) {
  const { api } = useSession();
  const [text, setText] = useState(webhook.description ?? '');
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      await api.patch(`/webhooks/${encodeURIComponent(webhook.id)}`, { description: text.trim() });
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  return html`<form class="inline-form" onSubmit=${submit} data-testid="webhook-description-form">
    <div class="field"><label for=${`wh-desc-${webhook.id}`}>Description</label>
      <input id=${`wh-desc-${webhook.id}`} maxlength="1000" value=${text} onInput=${(e) => setText(e.currentTarget.value)}
        data-testid="webhook-description-input" /></div>
    <${ErrorNote} error=${error} testid="webhook-description-error" />
    <div class="form-buttons">
      <button type="submit" class="primary" data-testid="webhook-description-save">Save</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}
