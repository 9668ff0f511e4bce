// Rate limits at the edge (ADR 0017), stages of the one pipeline (ADR 0022): the decisions of RateLimits
// (src/services/rate-limits.ts) as 429 answers and as the RateLimit / RateLimit-Policy headers of
// draft-ietf-httpapi-ratelimit-headers-11 (structured fields: `"per-key";q=100;w=1`, `"per-key";r=0;t=1`).
//
// Where each check runs (pipeline.ts):
// - the failed-authentication lockout (per address, per key prefix): once a key has failed, never before,
//   so a valid key is never refused for others' failures (issue 34); asked only while something is refused;
// - a key's limit: right after authentication and the scope check; asked only when the key has a limit;
// - failed authentications are counted where the 401 is answered, before it leaves.
import type { IncomingHttpHeaders } from 'node:http';
import type { RateDecision } from '../services/rate-limits.js';

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
      `wrong or missing keys from it are refused (valid keys are served); ${wait}`
    );
  }
  if (v.policy === 'failed-auth-prefix') {
    return (
      `too many failed authentications with keys that start as this one (${v.quota} within ` +
      `${v.windowSeconds} s): such wrong keys are refused from any address; ${wait}`
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

/** A request allowed under a limit carries the two RateLimit fields. */
export function limitHeaders(v: RateDecision): Record<string, string> {
  return { [RATELIMIT_POLICY_HEADER]: policyField(v), [RATELIMIT_HEADER]: limitField(v) };
}

/**
 * A browser's CORS preflight: an OPTIONS that carries no key (browsers never send one with it). Its 401
 * is no guess at a key, so it never counts toward the lockout: otherwise any page on an unlisted origin,
 * opened behind the same address, could lock everyone there out. An OPTIONS with a key counts as usual.
 */
export function isPreflight(method: string, headers: IncomingHttpHeaders): boolean {
  return method === 'OPTIONS' && headers['x-api-key'] === undefined && headers.authorization === undefined;
}
