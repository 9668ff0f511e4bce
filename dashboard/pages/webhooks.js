// Webhooks (issue 27, admin only): add an endpoint (its signing secret shown once), send it a test
// event, rotate its secret, delete it, and read its deliveries (retrying a failed one), through /webhooks;
// each endpoint's health, enable/disable switch and description (issue 36).
import { useState } from 'preact/hooks';
import { formatTime } from '../format.js';
import { useLoad, usePoll, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading } from '../parts/common.js';
import { DescriptionForm, EnabledSwitch, WebhookHealth } from '../parts/webhook-health.js';
import { RotatedNote, RotateForm, SecretNote } from '../parts/webhook-secret.js';

/** How often open deliveries are read again while one of them is pending (ms). */
const PENDING_REFRESH_MS = 2000;

/** A delivery worth sending again: given up (failed), or pending after a failed attempt. */
const retriable = (d) => d.status === 'failed' || (d.status === 'pending' && d.attempts > 0);

function Deliveries({ webhook }) {
  const { api } = useSession();
  const path = `/webhooks/${encodeURIComponent(webhook.id)}/deliveries`;
  const { data, error, reload } = useLoad(() => api.get(path), [path]);
  const [retrying, setRetrying] = useState(null);
  const [retryError, setRetryError] = useState(null);
  const [note, setNote] = useState(null);
  usePoll(reload, PENDING_REFRESH_MS, Boolean(data?.deliveries.some((d) => d.status === 'pending')));
  const retry = async (d) => {
    setRetrying(d.eventId);
    setRetryError(null);
    setNote(null);
    try {
      await api.post(`${path}/${encodeURIComponent(d.eventId)}/retry`, {});
      setNote(`${d.type} (${d.eventId}) is due again: its next attempt comes within seconds.`);
      reload();
    } catch (e) {
      setRetryError(e);
    } finally {
      setRetrying(null);
    }
  };
  return html`<div data-testid="deliveries">
    <${ErrorNote} error=${error} testid="deliveries-error" />
    <${ErrorNote} error=${retryError} testid="retry-error" />
    ${note && html`<p class="hint" role="status" data-testid="retry-note">${note}</p>`}
    <button type="button" class="link" onClick=${reload} data-testid="deliveries-reload">Refresh</button>
    ${
      data &&
      (data.deliveries.length === 0
        ? html`<p class="muted" data-testid="no-deliveries">No deliveries yet.</p>`
        : html`<div class="table-wrap"><table class="stack compact">
            <caption class="visually-hidden">Deliveries, newest first</caption>
            <thead><tr>
              <th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th>
              <th scope="col">Last answer</th><th scope="col">Next attempt</th><th scope="col">Delivered</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr></thead>
            <tbody>
              ${data.deliveries.map(
                (d) => html`<tr key=${d.eventId} data-testid="delivery" data-status=${d.status}>
                  <td data-label="Event"><code title=${d.eventId}>${d.type}</code></td>
                  <td data-label="Status">${d.status}</td>
                  <td data-label="Attempts" class="num">${d.attempts}</td>
                  <td data-label="Last answer" data-testid="delivery-answer">${
                    d.lastError
                      ? html`<code class="webhook-error" data-testid="delivery-error">${d.lastError}</code>`
                      : (d.lastResponseStatus ?? (d.attempts > 0 ? 'no answer' : '—'))
                  }</td>
                  <td data-label="Next attempt">${d.nextAttemptAt ? formatTime(d.nextAttemptAt) : '—'}</td>
                  <td data-label="Delivered">${d.deliveredAt ? formatTime(d.deliveredAt) : '—'}</td>
                  <td data-label="">
                    ${
                      retriable(d) &&
                      html`<button type="button" disabled=${retrying !== null || !webhook.enabled}
                        title=${webhook.enabled ? 'Send this event to the endpoint again' : 'Enable the endpoint first'}
                        aria-label=${`Retry ${d.type} ${d.eventId}`} onClick=${() => retry(d)} data-testid="delivery-retry">
                        ${retrying === d.eventId ? 'Retrying…' : 'Retry'}
                      </button>`
                    }
                  </td>
                </tr>`,
              )}
            </tbody>
          </table></div>`)
    }
  </div>`;
}

function Endpoint({ webhook, onChanged }) {
  const { api } = useSession();
  const [open, setOpen] = useState(false);
  const [rotating, setRotating] = useState(false);
  const [describing, setDescribing] = useState(false);
  const [rotated, setRotated] = useState(null);
  const [note, setNote] = useState(null);
  const [error, setError] = useState(null);
  const previousSigns = webhook.previousSecretUntil && Date.parse(webhook.previousSecretUntil) > Date.now();
  const path = `/webhooks/${encodeURIComponent(webhook.id)}`;
  const act = async (work) => {
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    }
  };
  const test = () =>
    act(async () => {
      const { eventId } = await api.post(`${path}/test`, {});
      setNote(`Test event ${eventId} queued.`);
      setOpen(true);
    });
  const remove = () =>
    act(async () => {
      if (!window.confirm(`Delete the webhook to ${webhook.url}? Its deliveries go with it.`)) return;
      await api.del(path);
      onChanged();
    });
  const onRotated = (answer) => {
    setRotating(false);
    setRotated(answer);
    onChanged();
  };
  return html`<li data-testid="webhook" data-id=${webhook.id}>
    <p><strong data-testid="webhook-url">${webhook.url}</strong>
      ${!webhook.enabled && html` <span class="badge" data-testid="webhook-disabled">disabled</span>`}
      <${EnabledSwitch} webhook=${webhook} onChanged=${onChanged} /></p>
    ${webhook.description && html`<p class="webhook-description" data-testid="webhook-description">${webhook.description}</p>`}
    <${WebhookHealth} webhook=${webhook} />
    <p class="muted small">
      events: ${webhook.events.join(', ')} · format: ${webhook.format} · added ${formatTime(webhook.createdAt)}
      ${previousSigns && html` · <span data-testid="previous-secret">previous secret signs until ${formatTime(webhook.previousSecretUntil)}</span>`}
    </p>
    <${ErrorNote} error=${error} testid="webhook-error" />
    ${note && html`<p class="hint" role="status" data-testid="webhook-note">${note}</p>`}
    ${rotated && html`<${RotatedNote} webhook=${rotated} />`}
    <div class="form-buttons">
      <button type="button" onClick=${test} disabled=${!webhook.enabled} data-testid="webhook-test">Send test event</button>
      <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)} data-testid="webhook-deliveries">
        ${open ? 'Hide deliveries' : 'Deliveries'}
      </button>
      <button type="button" aria-expanded=${rotating} onClick=${() => setRotating(!rotating)} data-testid="webhook-rotate">
        Rotate secret
      </button>
      <button type="button" aria-expanded=${describing} onClick=${() => setDescribing(!describing)} data-testid="webhook-describe">
        Edit description
      </button>
      <button type="button" onClick=${remove} data-testid="webhook-delete">Delete</button>
    </div>
    ${
      describing &&
      html`<${DescriptionForm} webhook=${webhook}
        onDone=${() => {
          setDescribing(false);
          onChanged();
        }} onCancel=${() => setDescribing(false)} />`
    }
    ${rotating && html`<${RotateForm} webhook=${webhook} onRotated=${onRotated} onCancel=${() => setRotating(false)} />`}
    ${open && html`<${Deliveries} webhook=${webhook} />`}
  </li>`;
}

function AddForm({ onAdded }) {
  const { api } = useSession();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [format, setFormat] = useState('standard');
  const [description, setDescription] = useState('');
  const [error, setError] = useState(null);
  const [created, setCreated] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      const list = events
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const answer = await api.post('/webhooks', {
        url,
        events: list.length ? list : undefined,
        format,
        description: description.trim() || undefined,
      });
      setCreated(answer);
      setUrl('');
      setDescription('');
      onAdded();
    } catch (err) {
      setError(err);
    }
  };
  return html`<form onSubmit=${submit} data-testid="webhook-form">
    <h2>Add an endpoint</h2>
    <div class="field"><label for="wh-url">URL</label>
      <input id="wh-url" type="url" required value=${url} onInput=${(e) => setUrl(e.currentTarget.value)} data-testid="webhook-url-input" /></div>
    <div class="field"><label for="wh-description">Description <span class="muted">(optional)</span></label>
      <input id="wh-description" maxlength="1000" value=${description} onInput=${(e) => setDescription(e.currentTarget.value)}
        placeholder="release channel" data-testid="webhook-description-new" /></div>
    <div class="field"><label for="wh-events">Events</label>
      <input id="wh-events" value=${events} onInput=${(e) => setEvents(e.currentTarget.value)} data-testid="webhook-events-input" />
      <p class="hint small">Comma-separated: * (every event), a type (experiment.status_changed) or a prefix (experiment.*).</p></div>
    <div class="field"><label for="wh-format">Format</label>
      <select id="wh-format" value=${format} onChange=${(e) => setFormat(e.currentTarget.value)} data-testid="webhook-format">
        <option value="standard">Standard Webhooks (signed JSON)</option>
        <option value="slack">Slack incoming webhook</option>
      </select></div>
    <${ErrorNote} error=${error} testid="webhook-form-error" />
    <div class="form-buttons"><button type="submit" class="primary" data-testid="webhook-add">Add endpoint</button></div>
    ${created && html`<${SecretNote} url=${created.url} secret=${created.secret} testid="webhook-secret" />`}
  </form>`;
}

export function WebhooksPage() {
  const { api, admin } = useSession();
  const { data, error, loading, reload } = useLoad(() => (admin ? api.get('/webhooks') : null), [admin]);
  if (!admin) {
    return html`<section><h1>Webhooks</h1><p data-testid="webhooks-admin-only">Only an admin key manages webhooks.</p></section>`;
  }
  return html`<section data-testid="webhooks-page">
    <div class="page-head"><h1>Webhooks</h1></div>
    <${AddForm} onAdded=${reload} />
    <h2>Endpoints</h2>
    <${ErrorNote} error=${error} />
    ${loading && !data && html`<${Loading} what="Loading webhooks" />`}
    ${
      data &&
      (data.webhooks.length === 0
        ? html`<p class="empty" data-testid="no-webhooks">No endpoints yet.</p>`
        : html`<ul class="webhooks">${data.webhooks.map((w) => html`<${Endpoint} key=${w.id} webhook=${w} onChanged=${reload} />`)}</ul>`)
    }
  </section>`;
}
