// API keys and what they may do: scopes, experiment limits, and the 403 message when a key falls short.
import { ValidationError } from './errors.js';
import { someOf } from './messages.js';

/** What a managed key can be given (the route declarations also use `public`: no key needed). */
export const SCOPES = ['assign', 'log', 'read', 'admin'] as const;
export type KeyScope = (typeof SCOPES)[number];

/** A managed key as listed: never its secret. */
export interface ApiKey {
  id: string;
  name: string;
  scopes: KeyScope[];
  /** The slugs it may touch; null: every experiment. */
  experiments: string[] | null;
  /** The first characters of the key, to tell keys apart. */
  prefix: string;
  /** Requests per second this key may make; null: the service's default (RATE_LIMIT_PER_SECOND). */
  rateLimitPerSecond: number | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** Who is calling: the root key (API_KEY) or a managed key. */
export interface Principal {
  /** `root` for API_KEY, else the key's id: what rate limits and Idempotency-Keys are counted under. */
  id: string;
  scopes: ReadonlySet<KeyScope>;
  experiments: ReadonlySet<string> | null;
  rateLimitPerSecond: number | null;
}

export const ROOT: Principal = {
  id: 'root',
  scopes: new Set(SCOPES),
  experiments: null,
  rateLimitPerSecond: null,
};

export function principalOf(key: ApiKey): Principal {
  return {
    id: key.id,
    scopes: new Set(key.scopes),
    experiments: key.experiments === null ? null : new Set(key.experiments),
    rateLimitPerSecond: key.rateLimitPerSecond,
  };
}

/** What a route asks of its caller. */
export interface Need {
  scope: KeyScope;
  /** The experiment the request names, if any. */
  slug?: string;
  /** True for routes that act on every experiment at once (managing keys): refused to limited keys. */
  everyExperiment?: boolean;
}

/** Null when the principal may make the request, else the 403 message. `admin` implies every scope. */
export function forbidden(p: Principal, need: Need): string | null {
  if (!p.scopes.has(need.scope) && !p.scopes.has('admin')) {
    const held = someOf([...p.scopes]);
    return `this key lacks the '${need.scope}' scope (it has: ${held})`;
  }
  if (p.experiments !== null) {
    if (need.everyExperiment) {
      return 'this key is limited to some experiments; this needs a key for every experiment';
    }
    if (need.slug !== undefined && !p.experiments.has(need.slug)) {
      return `this key is limited to experiments ${someOf([...p.experiments])}; not '${need.slug}'`;
    }
  }
  return null;
}

/** Whether the principal may see an experiment at all (lists are filtered by this). */
export function mayTouch(p: Principal, slug: string): boolean {
  return p.experiments === null || p.experiments.has(slug);
}

export interface NewKeyInput {
  name: string;
  scopes: string[];
  experiments?: string[];
  rateLimitPerSecond?: number;
}

/** Checks a key request beyond its schema: known scopes, no duplicates. Returns the scopes, sorted. */
export function checkedScopes(scopes: string[]): KeyScope[] {
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new ValidationError(
      `unknown scope ${someOf(unknown)}: a key's scopes are ${SCOPES.map((s) => `'${s}'`).join(', ')}`,
    );
  }
  if (scopes.length === 0) throw new ValidationError('scopes must name at least one scope');
  return SCOPES.filter((s) => scopes.includes(s));
}
