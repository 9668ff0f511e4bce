// The shell: the key prompt, who the key belongs to, the hash router and the header.
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createApi } from './api.js';
import { useRoute } from './hooks.js';
import { html, Session } from './html.js';
import { ChartsPage } from './pages/charts.js';
import { DatasetPage, DatasetsPage } from './pages/datasets.js';
import { EditPage } from './pages/edit.js';
import { ExperimentPage } from './pages/experiment.js';
import { ExperimentsPage } from './pages/experiments.js';
import { KeysPage } from './pages/keys.js';
import { ResultsPage } from './pages/results.js';
import { RunPage, RunRedirect } from './pages/run.js';
import { RunsPage } from './pages/runs.js';
import { WebhooksPage } from './pages/webhooks.js';
import { Header } from './parts/header.js';
import { Login } from './parts/login.js';

// sessionStorage, never localStorage: the key leaves with the tab.
const STORAGE = 'agentsplit.key';

/** Checks a key with GET /keys/me; resolves to the session or rejects with the ApiError. */
async function open(key, onUnauthorized) {
  const raw = createApi(key);
  const me = await raw.get('/keys/me');
  // A key revoked while the page is open: back to the prompt, with the reason.
  const guard =
    (call) =>
    async (...args) => {
      try {
        return await call(...args);
      } catch (error) {
        if (error.status === 401) onUnauthorized();
        throw error;
      }
    };
  const api = Object.fromEntries(Object.entries(raw).map(([name, call]) => [name, guard(call)]));
  return { api, me, admin: me.scopes.includes('admin') };
}

function loginMessage(error) {
  if (error.status === 401) {
    return 'That key was not accepted (401 Unauthorized). Check it for a typo, or ask for a new key.';
  }
  if (error.status === 403) return `That key cannot read experiments: ${error.message}`;
  if (error.status === 429) {
    return `Too many failed attempts from this address; wait ${error.retryAfter ?? 10} s and try again.`;
  }
  return error.message;
}

function route(path, query) {
  const m = /^\/experiment\/([^/]+)(?:\/(charts|results|edit|runs))?$/.exec(path);
  if (m) {
    const slug = m[1];
    const tab = m[2] ?? 'overview';
    if (tab === 'charts') return html`<${ChartsPage} slug=${slug} query=${query} />`;
    if (tab === 'results') return html`<${ResultsPage} slug=${slug} query=${query} />`;
    if (tab === 'edit') return html`<${EditPage} slug=${slug} />`;
    if (tab === 'runs') return html`<${RunsPage} slug=${slug} />`;
    return html`<${ExperimentPage} slug=${slug} query=${query} />`;
  }
  // An offline run's comparison (issue 40), under its experiment; /runs/<id> finds the experiment.
  const run = /^\/experiment\/([^/]+)\/runs\/([^/]+)$/.exec(path);
  if (run) return html`<${RunPage} slug=${run[1]} id=${run[2]} query=${query} />`;
  const bare = /^\/runs\/([^/]+)$/.exec(path);
  if (bare) return html`<${RunRedirect} id=${bare[1]} query=${query} />`;
  const dataset = /^\/datasets\/([^/]+)$/.exec(path);
  if (dataset) return html`<${DatasetPage} name=${dataset[1]} query=${query} />`;
  if (path === '/datasets') return html`<${DatasetsPage} />`;
  if (path === '/new') return html`<${EditPage} />`;
  if (path === '/webhooks') return html`<${WebhooksPage} />`;
  if (path === '/keys') return html`<${KeysPage} />`;
  if (path === '/') return html`<${ExperimentsPage} query=${query} />`;
  return html`<section><h1>Not found</h1><p>No page at <code>${path}</code>. <a href="#/">All experiments</a></p></section>`;
}

function App() {
  const [session, setSession] = useState(null);
  const [checking, setChecking] = useState(() => sessionStorage.getItem(STORAGE) !== null);
  const [loginError, setLoginError] = useState(null);
  const { path, query } = useRoute();
  const main = useRef(null);

  const signOut = (reason = null) => {
    sessionStorage.removeItem(STORAGE);
    setSession(null);
    setLoginError(reason);
  };
  const expired = () => signOut('The key is no longer accepted (401). Sign in again.');

  const signIn = async (key) => {
    setLoginError(null);
    try {
      const next = await open(key, expired);
      sessionStorage.setItem(STORAGE, key);
      setSession(next);
    } catch (error) {
      setLoginError(loginMessage(error));
    }
  };

  useEffect(() => {
    const stored = sessionStorage.getItem(STORAGE);
    if (stored === null) return;
    open(stored, expired)
      .then(setSession, (error) => {
        sessionStorage.removeItem(STORAGE);
        setLoginError(loginMessage(error));
      })
      .finally(() => setChecking(false));
  }, []);

  // A new page: focus moves to it, so keyboard and screen-reader users start at its top.
  useEffect(() => {
    if (session && main.current) main.current.focus({ preventScroll: true });
  }, [path, session]);

  // The link's own target would change the hash (the router's); focus the page instead.
  const skip = (e) => {
    e.preventDefault();
    main.current?.focus();
  };
  const value = useMemo(() => session && { ...session, signOut: () => signOut() }, [session]);
  if (checking) return html`<p class="muted boot">Checking the key…</p>`;
  if (!session) return html`<${Login} onSubmit=${signIn} error=${loginError} />`;
  return html`<${Session.Provider} value=${value}>
    <a class="skip" href="#main" onClick=${skip}>Skip to content</a>
    <${Header} path=${path} />
    <main id="main" ref=${main} tabindex="-1" key=${path}>${route(path, query)}</main>
  </${Session.Provider}>`;
}

render(html`<${App} />`, document.getElementById('app'));
