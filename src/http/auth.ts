// The x-api-key check, before anything else: who is calling (401 with exactly the spec's body when
// nobody known), and whether that key may call this route on this experiment (403 naming what is missing).
import type { FastifyReply, FastifyRequest } from 'fastify';
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

/** Who presents an x-api-key: a principal, or null. */
export type Authenticate = (presented: unknown) => Principal | null;

/** What the route config carries for the auth hook (set by registerRoutes from the declaration). */
export interface RouteAccess {
  scope: Route['scope'];
  everyExperiment?: boolean;
}

/** Null when `principal` may call the route with these path parameters, else the 403 message. */
export function refusal(principal: Principal, access: RouteAccess, params: unknown): string | null {
  if (access.scope === 'public') return null;
  const slug = (params as { slug?: unknown } | undefined)?.slug;
  return forbidden(principal, {
    scope: access.scope,
    slug: typeof slug === 'string' ? slug : undefined,
    everyExperiment: access.everyExperiment,
  });
}

const principals = new WeakMap<FastifyRequest, Principal>();

/** The principal the auth hook found for this request (routes that need no key have none). */
export function principalOfRequest(request: FastifyRequest): Principal | undefined {
  return principals.get(request);
}

export function createAuthHook(authenticate: Authenticate) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const access = request.routeOptions.config as Partial<RouteAccess> | undefined;
    if (access?.scope === 'public' || isPublicPath(request.url)) {
      done();
      return;
    }
    const principal = authenticate(request.headers['x-api-key']);
    if (principal === null) {
      reply.code(401).type('application/json; charset=utf-8').send(UNAUTHORIZED);
      return;
    }
    principals.set(request, principal);
    // Routes not declared here (404s) need a valid key only.
    const problem =
      access?.scope === undefined ? null : refusal(principal, access as RouteAccess, request.params);
    if (problem !== null) {
      reply.code(403).type('application/json; charset=utf-8').send(errorBody(problem));
      return;
    }
    done();
  };
}
