// The key check (the pipeline's authenticate and authorize stages): who is calling (x-api-key, or
// Authorization: Bearer; 401 with exactly the spec's body when nobody known), and whether that key may
// call this route on this experiment (403 naming what is missing).
import type { IncomingHttpHeaders } from 'node:http';
import { forbidden, type Principal } from '../core/keys.js';
import { errorBody } from './errors.js';
import type { Route } from './route.js';

/**
 * Paths anyone may read: liveness, readiness, the API documentation and the dashboard's static files with
 * `/` redirecting to them (no data: the dashboard asks for a key and sends it to the API itself).
 */
const PUBLIC_EXACT = new Set(['/healthz', '/readyz', '/openapi.json', '/docs', '/', '/ui']);
const PUBLIC_PREFIXES = ['/docs/', '/ui/'];

export const UNAUTHORIZED = errorBody('Unauthorized');

export function isPublicPath(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return PUBLIC_EXACT.has(path) || PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/**
 * The key a request presents: its x-api-key header, else the token of `Authorization: Bearer <key>` (the
 * form OpenFeature's OFREP providers and MCP clients send). Undefined when neither is there.
 */
export function presentedKey(headers: IncomingHttpHeaders): string | string[] | undefined {
  const key = headers['x-api-key'];
  // An empty x-api-key (a client's unset variable) does not hide a Bearer token sent beside it.
  if (key !== undefined && key !== '') return key;
  const authorization = headers.authorization;
  if (authorization === undefined || authorization.length < 8) return undefined;
  if (authorization.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  return authorization.slice(7).trim();
}

/** Who presents a key: a principal, or null. */
export type Authenticate = (presented: unknown) => Principal | null;

/** What a route declares about who may call it. */
export interface RouteAccess {
  scope: Route['scope'];
  everyExperiment?: boolean;
  experimentParam?: string;
}

/** Null when `principal` may call the route with these path parameters, else the 403 message. */
export function refusal(principal: Principal, access: RouteAccess, params: unknown): string | null {
  if (access.scope === 'public' || access.scope === 'any') return null;
  const slug = (params as Record<string, unknown> | undefined)?.[access.experimentParam ?? 'slug'];
  return forbidden(principal, {
    scope: access.scope,
    slug: typeof slug === 'string' ? slug : undefined,
    everyExperiment: access.everyExperiment,
  });
}
