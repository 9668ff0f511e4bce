// Small hooks the pages share: the hash route, data that keeps its last value while reloading, polling.
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { Session } from './html.js';

/** The session: { api, me, admin, signOut }. */
export function useSession() {
  return useContext(Session);
}

function readHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const at = raw.indexOf('?');
  // The path is decoded here, the query by URLSearchParams (a value may hold an encoded & or =).
  const path = decodeURIComponent(at === -1 ? raw : raw.slice(0, at));
  const query = Object.fromEntries(new URLSearchParams(at === -1 ? '' : raw.slice(at + 1)));
  return { path: path.startsWith('/') ? path : `/${path}`, query };
}

/** `#/experiment/x?method=bayesian` as `{ path: '/experiment/x', query: { method: 'bayesian' } }`. */
export function useRoute() {
  const [route, setRoute] = useState(readHash);
  useEffect(() => {
    const onChange = () => setRoute(readHash());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** The href of a route, for links. */
export function href(path, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export function navigate(path, query = {}) {
  location.hash = href(path, query);
}

/**
 * Loads with `load()` whenever `deps` change; `data` keeps its last value while a reload runs (no
 * flicker), and an answer that arrives after a newer request started is dropped.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true, at: 0 });
  const seq = useRef(0);
  const run = useCallback(async () => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === seq.current) setState({ data, error: null, loading: false, at: Date.now() });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ ...s, error, loading: false }));
    }
  }, deps);
  useEffect(() => {
    run();
  }, [run]);
  return { ...state, reload: run };
}

/** Calls `tick` every `ms` while `enabled` and the tab is visible. */
export function usePoll(tick, ms, enabled) {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!enabled) return undefined;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') latest.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms, enabled]);
}
