// The x-api-key check: runs before anything else, compares in constant time, answers exactly the spec's 401.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Paths anyone may read: liveness, readiness and the API documentation (no data). */
const PUBLIC_EXACT = new Set(['/healthz', '/readyz', '/openapi.json', '/docs']);
const PUBLIC_PREFIX = '/docs/';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export function isPublicPath(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return PUBLIC_EXACT.has(path) || path.startsWith(PUBLIC_PREFIX);
}

/** Hashing both sides first makes the comparison constant-time whatever the lengths. */
export function createKeyCheck(apiKey: string): (candidate: unknown) => boolean {
  const expected = digest(apiKey);
  return (candidate) => typeof candidate === 'string' && timingSafeEqual(digest(candidate), expected);
}

export function createAuthHook(apiKey: string) {
  const matches = createKeyCheck(apiKey);
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (matches(request.headers['x-api-key']) || isPublicPath(request.url)) {
      done();
      return;
    }
    reply.code(401).send({ error: 'Unauthorized' });
  };
}
