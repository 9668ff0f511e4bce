// CORS for browsers calling the API from the origins CORS_ORIGINS lists (off when it is empty), a stage
// of the pipeline ahead of authentication (ADR 0022): a preflight never carries the x-api-key.
//
// A request without an Origin header gets no CORS header; with one, the answer says `Vary: Origin`. From
// an origin not listed it gets no other CORS header and is handled as if CORS were off (an OPTIONS then gets 401 without a key,
// 404 with one). From a listed origin: the allowed origin and the exposed headers; an OPTIONS from it is
// a preflight, answered 204 with the allowed methods and headers (with or without
// Access-Control-Request-Method: every 4xx of this API is {"error"}, so no 400 for a loose preflight).
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Request headers a browser may send: JSON bodies, the key, Idempotency-Key, and If-None-Match (the
 * OpenFeature web provider's bulk evaluation sends back the ETag it read).
 */
export const CORS_ALLOWED_HEADERS = [
  'content-type',
  'x-api-key',
  'authorization',
  'idempotency-key',
  'if-none-match',
];
/** Response headers a browser's script may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'idempotent-replayed',
  'etag',
];
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Seconds a browser may keep a preflight's answer (Chromium caps it at 7200). */
export const CORS_MAX_AGE = 600;

/** What CORS adds to one request's answer, and whether it is a preflight answered there and then. */
export interface CorsVerdict {
  headers: Record<string, string> | undefined;
  preflight: boolean;
}

export type Cors = (method: string, headers: IncomingHttpHeaders) => CorsVerdict;

/** A request without an Origin header: no browser's, so no CORS header at all. */
const NONE: CorsVerdict = Object.freeze({ headers: undefined, preflight: false });

/** `origins`: exact origins as browsers send them, or `*` for any (see parseCorsOrigins in config.ts). */
export function createCors(origins: readonly string[]): Cors {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const exposed = CORS_EXPOSED_HEADERS.join(', ');
  return (method, headers) => {
    const origin = headers.origin;
    if (origin === undefined) return NONE;
    const own: Record<string, string> = { vary: 'Origin' };
    if (!any && !allowed.has(origin)) return { headers: own, preflight: false };
    // The allowed origin is echoed back (or `*` when any is allowed). Keys travel in a header, never in
    // cookies: no credentials.
    own['access-control-allow-origin'] = any ? '*' : origin;
    own['access-control-expose-headers'] = exposed;
    if (method !== 'OPTIONS') return { headers: own, preflight: false };
    own['access-control-allow-methods'] = CORS_METHODS.join(', ');
    own['access-control-allow-headers'] = CORS_ALLOWED_HEADERS.join(', ');
    own['access-control-max-age'] = String(CORS_MAX_AGE);
    return { headers: own, preflight: true };
  };
}
