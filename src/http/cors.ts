// CORS for browsers calling the API from the origins CORS_ORIGINS lists (off when it is empty).
//
// @fastify/cors answers a preflight OPTIONS in its onRequest hook, registered ahead of the auth hook: a
// preflight never carries the x-api-key. A request without an Origin header, or from an origin not
// listed, gets no CORS headers and is handled as if CORS were off (an OPTIONS then gets 401 without a
// key, 404 with one, as without CORS). The fast transport hands requests with an Origin to Fastify when
// CORS is on, so these headers are added in one place.
import type { FastifyCorsOptions } from '@fastify/cors';

/** Request headers a browser may send: JSON bodies, the key, and Idempotency-Key. */
export const CORS_ALLOWED_HEADERS = ['content-type', 'x-api-key', 'idempotency-key'];
/** Response headers a browser's script may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = ['retry-after', 'ratelimit', 'ratelimit-policy', 'idempotent-replayed'];
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];
/** Seconds a browser may keep a preflight's answer (Chromium caps it at 7200). */
export const CORS_MAX_AGE = 600;

/** `origins`: exact origins as browsers send them, or `*` for any (see parseCorsOrigins in config.ts). */
export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return {
    // The allowed origin is echoed back (or `*` when any is allowed); false: no CORS for this request.
    origin: (origin, callback) => {
      if (origin === undefined) callback(null, false);
      else if (any) callback(null, '*');
      else callback(null, allowed.has(origin) ? origin : false);
    },
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // Keys travel in a header, never in cookies.
    credentials: false,
    maxAge: CORS_MAX_AGE,
    // An OPTIONS from an allowed origin without Access-Control-Request-Method gets 204 too, not the
    // plugin's text/plain 400 (every 4xx of this API is {"error"}).
    strictPreflight: false,
  };
}
