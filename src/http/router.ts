// The one router: every declared route by method and path (`/experiment/:slug/assign`), static segments
// before parameters (`/keys/me` before `/keys/:id`), HEAD served by the GET route. Parameters are
// percent-decoded; the raw path is matched as sent (case, slashes), as Fastify's router did.
import type { CompiledRoute } from './compile.js';

export interface Found {
  compiled: CompiledRoute;
  /** Decoded; shared by every request to the same URL, so copied before a validator may change it. */
  params: Readonly<Record<string, string>>;
  /**
   * Set when the path has this route's shape but a parameter cannot be used (then `params` is empty):
   * `bad-url` (not valid percent-encoding), `too-long` (over the limit). The route still shapes the refusal.
   */
  unfit?: 'bad-url' | 'too-long';
}

/** The route a path names, or null. */
export type Lookup = Found | null;

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

interface Matcher {
  compiled: CompiledRoute;
  /** The path's segments: a string to match as is, or null for a parameter. */
  segments: Array<string | null>;
  names: string[];
}

function matcher(compiled: CompiledRoute): Matcher {
  const parts = compiled.route.url.split('/');
  return {
    compiled,
    segments: parts.map((p) => (p.startsWith(':') ? null : p)),
    names: parts.filter((p) => p.startsWith(':')).map((p) => p.slice(1)),
  };
}

/** Static segments sort before parameters, position by position. */
function byPrecedence(a: Matcher, b: Matcher): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const sa = a.segments[i] === null;
    const sb = b.segments[i] === null;
    if (sa !== sb) return sa ? 1 : -1;
  }
  return 0;
}

/** The path of a request URL (before `?`). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export interface Router {
  find(method: string, url: string): Lookup;
}

/**
 * What each URL seen lately matched is kept: a service's clients call a handful of URLs (one per
 * experiment and route) over and over, so splitting each one again was garbage on every request.
 * Bounded: only short URLs that name a route are kept (anyone may send any URL before the key is
 * checked), and the map is emptied when full.
 */
const MATCHES_KEPT = 1024;
const LONGEST_KEPT = 256;

export function createRouter(routes: CompiledRoute[], maxParamLength: number): Router {
  const byMethod = new Map<string, Matcher[]>();
  for (const compiled of routes) {
    const list = byMethod.get(compiled.route.method) ?? [];
    list.push(matcher(compiled));
    byMethod.set(compiled.route.method, list);
  }
  for (const list of byMethod.values()) list.sort(byPrecedence);
  const matched = new Map<string, Lookup>();

  function matchOnce(matchers: Matcher[], path: string): Lookup {
    const parts = path.split('/');
    for (const m of matchers) {
      if (m.segments.length !== parts.length) continue;
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const want = m.segments[i];
        ok = want === null ? parts[i]!.length > 0 : parts[i] === want;
      }
      if (!ok) continue;
      const params: Record<string, string> = {};
      let n = 0;
      for (let i = 0; i < parts.length; i++) {
        if (m.segments[i] !== null) continue;
        const raw = parts[i]!;
        let value = raw;
        if (raw.includes('%')) {
          try {
            value = decodeURIComponent(raw);
          } catch {
            return { compiled: m.compiled, params: NO_PARAMS, unfit: 'bad-url' };
          }
        }
        if (value.length > maxParamLength)
          return { compiled: m.compiled, params: NO_PARAMS, unfit: 'too-long' };
        params[m.names[n++]!] = value;
      }
      return { compiled: m.compiled, params: Object.freeze(params) };
    }
    return null;
  }

  return {
    find(method, url) {
      const matchers = byMethod.get(method === 'HEAD' ? 'GET' : method);
      if (matchers === undefined) return null;
      const path = pathOf(url);
      const key = `${method} ${path}`;
      let found = matched.get(key);
      if (found === undefined) {
        found = matchOnce(matchers, path);
        if (found !== null && key.length <= LONGEST_KEPT) {
          if (matched.size >= MATCHES_KEPT) matched.clear();
          matched.set(key, found);
        }
      }
      return found;
    },
  };
}
