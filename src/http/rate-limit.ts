// Rate limits at the edge (ADR 0017), the same for both transports: the decisions of RateLimits
// (src/services/rate-limits.ts) as 429 answers and as the RateLimit / RateLimit-Policy headers of
// draft-ietf-httpapi-ratelimit-headers-11 (structured fields: `"per-key";q=100;w=1`, `"per-key";r=0;t=1`).
//
// Where each check runs:
// - an address refused for failed authentications: the server's own handler, ahead of both transports
//   (app.ts), so it costs no key work; asked only while some address is refused;
// - a key's limit: right after authentication and the scope check, in the fast transport and in the
//   Fastify hook below; asked only when the key has a limit;
// - failed authentications are counted where the 401 is answered (always by Fastify): the hook below.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateDecision, RateLimits } from '../services/rate-limits.js';
import { isPublicPath, principalOfRequest } from './auth.js';
import { errorBody } from './errors.js';

export const RATELIMIT_POLICY_HEADER = 'ratelimit-policy';
export const RATELIMIT_HEADER = 'ratelimit';

/** `"per-key";q=100;w=1`: the policy's quota and window (seconds). */
export function policyField(v: RateDecision): string {
  return `"${v.policy}";q=${v.quota};w=${v.windowSeconds}`;
}

/** `"per-key";r=42;t=1`: what is left of the quota, and the seconds until it resets. */
export function limitField(v: RateDecision): string {
  return `"${v.policy}";r=${v.remaining};t=${v.resetSeconds}`;
}

/** The 429's message: which limit, and when to retry. */
export function tooManyMessage(v: RateDecision): string {
  const wait = `retry in ${v.resetSeconds} s`;
  if (v.policy === 'failed-auth') {
    return (
      `too many failed authentications from this address (${v.quota} within ${v.windowSeconds} s): ` +
      `requests from it are refused; ${wait}`
    );
  }
  return `rate limit exceeded: this key may make ${v.quota} requests per second; ${wait}`;
}

/** The 429's headers: Retry-After (not earlier than the window's end) and the two RateLimit fields. */
export function tooManyHeaders(v: RateDecision): Record<string, string> {
  return {
    'retry-after': String(v.resetSeconds),
    [RATELIMIT_POLICY_HEADER]: policyField(v),
    [RATELIMIT_HEADER]: limitField(v),
  };
}

/**
 * For the server's handler, ahead of both transports: the 429 an address gets while refused for failed
 * authentications (public paths such as /healthz stay open), or null.
 */
export function refusedAddressAnswer(
  limits: RateLimits,
  req: IncomingMessage,
): { message: string; headers: Record<string, string> } | null {
  if (!limits.anyBlocked || isPublicPath(req.url ?? '')) return null;
  const decision = limits.refusedAddress(req.socket.remoteAddress);
  if (decision === null) return null;
  return { message: tooManyMessage(decision), headers: tooManyHeaders(decision) };
}

/** The fast transport: a request allowed under a limit carries the two RateLimit fields. */
export function setLimitHeaders(res: ServerResponse, v: RateDecision): void {
  res.setHeader(RATELIMIT_POLICY_HEADER, policyField(v));
  res.setHeader(RATELIMIT_HEADER, limitField(v));
}

/**
 * Fastify's onRequest hook, registered after the auth hook (which stops the chain on a 401 or 403): a
 * key with a limit is counted; over it, 429.
 */
export function createKeyLimitHook(limits: RateLimits) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const principal = principalOfRequest(request);
    const limit = principal === undefined ? 0 : limits.limitOf(principal);
    if (limit === 0) {
      done();
      return;
    }
    limits.consume(principal!, limit).then(
      (decision) => {
        if (decision.allowed) {
          reply.header(RATELIMIT_POLICY_HEADER, policyField(decision));
          reply.header(RATELIMIT_HEADER, limitField(decision));
          done();
          return;
        }
        reply
          .code(429)
          .headers(tooManyHeaders(decision))
          .type('application/json; charset=utf-8')
          .send(errorBody(tooManyMessage(decision)));
      },
      // Counting never fails (Redis errors fall back to memory); if it did, the request is served.
      () => done(),
    );
  };
}

/**
 * Fastify's onSend hook: every 401 (the auth hook's, and the one for malformed URLs) counts as a failed
 * authentication from its address, before the answer leaves, so the next request already sees a refusal.
 */
export function createFailedAuthHook(limits: RateLimits) {
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (err: null, payload: unknown) => void,
  ): void => {
    if (reply.statusCode !== 401 || isPreflight(request)) {
      done(null, payload);
      return;
    }
    limits.failedAuthentication(request.raw.socket.remoteAddress).then(
      () => done(null, payload),
      () => done(null, payload),
    );
  };
}

/**
 * A browser's CORS preflight: an OPTIONS that carries no key (browsers never send one with it). Its 401
 * is no guess at a key, so it never counts toward the lockout: otherwise any page on an unlisted origin,
 * opened behind the same address, could lock everyone there out. An OPTIONS with a key counts as usual.
 */
export function isPreflight(request: FastifyRequest): boolean {
  const h = request.headers;
  return request.method === 'OPTIONS' && h['x-api-key'] === undefined && h.authorization === undefined;
}
