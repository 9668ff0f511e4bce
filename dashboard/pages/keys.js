// API keys (issue 36): an admin lists the keys a page at a time, makes one (its secret shown once) and
// revokes one, through /keys. Any other key sees only itself, from GET /keys/me: GET /keys is admin
// only, and asking it with a read key would only earn a 403.
import { useEffect, useState } from 'preact/hooks';
import { withQuery } from '../api.js';
import { formatTime } from '../format.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Loading } from '../parts/common.js';
import { KeyForm, SecretKey } from '../parts/key-form.js';

/** Keys per page of GET /keys (the server allows 1 to 100). */
export const KEYS_PAGE = 20;

const experimentsText = (experiments) => (experiments === null ? 'all' : experiments.join(', '));

function KeyRow({ item, onRevoked }) {
  const { api } = useSession();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.del(`/keys/${encodeURIComponent(item.id)}`);
      onRevoked(item.id);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<tr data-testid="key-row" data-id=${item.id}>
    <td data-label="Name"><strong data-testid="key-row-name">${item.name}</strong></td>
    <td data-label="Prefix"><code>${item.prefix}…</code></td>
    <td data-label="Scopes" data-testid="key-row-scopes">${item.scopes.join(', ')}</td>
    <td data-label="Experiments" data-testid="key-row-experiments">${experimentsText(item.experiments)}</td>
    <td data-label="Rate limit" data-testid="key-row-rate">${item.rateLimitPerSecond === null ? 'default' : `${item.rateLimitPerSecond}/s`}</td>
    <td data-label="Created">${formatTime(item.createdAt)}</td>
    <td data-label="Last used">${item.lastUsedAt ? formatTime(item.lastUsedAt) : 'never'}</td>
    <td data-label="">
      ${
        confirming
          ? html`<div class="confirm" role="group" aria-label=${`Revoke ${item.name}`}>
              <p>Revoke ${item.name}? Requests with it are refused (401) from now on.</p>
              <button type="button" class="danger" disabled=${busy} onClick=${revoke} data-testid="key-revoke-confirm">
                ${busy ? 'Revoking…' : 'Revoke'}
              </button>
              <button type="button" onClick=${() => setConfirming(false)} data-testid="key-revoke-cancel">Cancel</button>
              <${ErrorNote} error=${error} testid="key-revoke-error" />
            </div>`
          : html`<button type="button" class="small danger" aria-label=${`Revoke ${item.name}`}
              onClick=${() => setConfirming(true)} data-testid="key-revoke">Revoke</button>`
      }
    </td>
  </tr>`;
}

function KeyTable({ keys, onRevoked }) {
  return html`<div class="table-wrap"><table class="stack compact" data-testid="keys-table">
    <caption class="visually-hidden">API keys, oldest first</caption>
    <thead><tr>
      <th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th>
      <th scope="col">Experiments</th><th scope="col">Rate limit</th><th scope="col">Created</th>
      <th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th>
    </tr></thead>
    <tbody>${keys.map((k) => html`<${KeyRow} key=${k.id} item=${k} onRevoked=${onRevoked} />`)}</tbody>
  </table></div>`;
}

function AdminKeys() {
  const { api } = useSession();
  // The pages read so far, in order; `next` is the cursor of the page after them (null: all read).
  const [list, setList] = useState({ keys: [], next: null, read: false });
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState(null);
  const [created, setCreated] = useState(null);
  const load = async (cursor) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.get(withQuery('/keys', { limit: KEYS_PAGE, cursor }));
      setList((l) => {
        const before = cursor ? l.keys : [];
        const seen = new Set(before.map((k) => k.id));
        return {
          keys: [...before, ...page.keys.filter((k) => !seen.has(k.id))],
          next: page.nextCursor,
          read: true,
        };
      });
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    load(undefined);
  }, []);
  const onCreated = (answer) => {
    setCreated(answer);
    // Oldest first: a new key is the list's last. Shown now if every page is read, else it comes with "More".
    const { key: _secret, ...shown } = answer;
    setList((l) => (l.next === null ? { ...l, keys: [...l.keys, shown] } : l));
  };
  const onRevoked = (id) => setList((l) => ({ ...l, keys: l.keys.filter((k) => k.id !== id) }));
  return html`<section data-testid="keys-page">
    <div class="page-head"><h1>API keys</h1></div>
    <${KeyForm} onCreated=${onCreated} />
    ${created && html`<${SecretKey} key=${created.id} created=${created} onDismiss=${() => setCreated(null)} />`}
    <h2>Keys</h2>
    <p class="hint small">The root key (API_KEY) is not listed: it is set in the environment, not here.</p>
    <${ErrorNote} error=${error} testid="keys-error" />
    ${loading && !list.read && html`<${Loading} what="Loading keys" />`}
    ${
      list.read &&
      (list.keys.length === 0 && list.next === null
        ? html`<p class="empty" data-testid="no-keys">No keys yet besides the root key.</p>`
        : html`<${KeyTable} keys=${list.keys} onRevoked=${onRevoked} />`)
    }
    ${
      list.next !== null &&
      html`<div class="form-buttons">
        <button type="button" disabled=${loading} onClick=${() => load(list.next)} data-testid="keys-more">
          ${loading ? 'Loading…' : `More (next ${KEYS_PAGE})`}
        </button>
      </div>`
    }
  </section>`;
}

/** A key without the admin scope: itself, as GET /keys/me answered at sign-in. */
function OwnKey() {
  const { me } = useSession();
  return html`<section data-testid="keys-own">
    <div class="page-head"><h1>API keys</h1></div>
    <p data-testid="keys-admin-only">Managing keys (listing, creating, revoking) needs an admin key. This is the key you signed in with:</p>
    <div class="table-wrap"><table class="stack compact">
      <caption class="visually-hidden">The key of this session</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Experiments</th></tr></thead>
      <tbody><tr data-testid="own-key">
        <td data-label="Name"><strong data-testid="own-key-name">${me.name}</strong></td>
        <td data-label="Scopes" data-testid="own-key-scopes">${me.scopes.join(', ')}</td>
        <td data-label="Experiments" data-testid="own-key-experiments">${experimentsText(me.experiments)}</td>
      </tr></tbody>
    </table></div>
  </section>`;
}

export function KeysPage() {
  const { admin } = useSession();
  return admin ? html`<${AdminKeys} />` : html`<${OwnKey} />`;
}
