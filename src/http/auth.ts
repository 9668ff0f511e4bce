// The x-api-key check: runs before anything else, compares in constant time, answers exactly the spec's 401.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Paths anyone may read: liveness, readiness and the API documentation (no data). */
const PUBLIC_EXACT = new Set(['/healthz', '/readyz', '/openapi.json', '/docs']);
const PUBLIC_PREFIX = '/docs/';

export function isPublicPath(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return PUBLIC_EXACT.has(path) || path.startsWith(PUBLIC_PREFIX);
}

/**
 * Constant time in the key's contents: every byte is compared whatever the first difference. A
 * candidate of another length is refused without comparing, which reveals only the key's length (a
 * generated key's length is public anyway), as Go's subtle.ConstantTimeCompare does. Hashing both
 * sides would hide the length too, at a SHA-256 per request on the hot path.
 */
export function createKeyCheck(apiKey: string): (candidate: unknown) => boolean {
  // Defence in depth: config and key file refuse short keys, and an empty key must never match ''.
  if (apiKey.length === 0) throw new Error('the API key must not be empty');
  const expected = Buffer.from(apiKey, 'utf8');
  return (candidate) => {
    if (typeof candidate !== 'string' || Buffer.byteLength(candidate, 'utf8') !== expected.length)
      return false;
    return timingSafeEqual(Buffer.from(candidate, 'utf8'), expected);
  };
}

export function createAuthHook(matches: (candidate: unknown) => boolean) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (matches(request.headers['x-api-key']) || isPublicPath(request.url)) {
      done();
      return;
    }
    reply.code(401).send({ error: 'Unauthorized' });
  };
}
