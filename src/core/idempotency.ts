// Idempotency-Key (IETF httpapi draft): the first answer to a key is stored with what the request wrote,
// and a retry with the same key and the same request gets that answer again (ADR 0016).
import { createHash } from 'node:crypto';

/** How long an answer is replayed: a retry after this is a new request. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Longest Idempotency-Key accepted (the draft leaves it to the server; Stripe allows 255). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** A stored answer: written in the same transaction as the request's data, so both exist or neither. */
export interface IdempotencyRecord {
  /** Whose key it is: `root` or a managed key's id (keys are scoped per API key). */
  owner: string;
  key: string;
  /** Of the method, path and body bytes: a reused key with another request is refused (422). */
  fingerprint: string;
  status: number;
  /** The answer's JSON text, replayed as is. */
  answer: string;
  createdAt: string;
}

/** What a request carrying an Idempotency-Key finds when it arrives. */
export type Arrival =
  | { kind: 'first' }
  | { kind: 'replay'; status: number; answer: string }
  /** The same key with another request: 422. */
  | { kind: 'mismatch' }
  /** The first request with this key is still running: 409. */
  | { kind: 'in-flight' };

export function fingerprint(method: string, path: string, body: Buffer | string): string {
  return createHash('sha256').update(`${method} ${path}\n`).update(body).digest('base64url');
}

/**
 * The draft's header is an RFC 8941 string: `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`.
 * Clients also send it bare, as Stripe's do; both are taken. Null when the value is not acceptable.
 */
export function parseIdempotencyKey(header: string): string | null {
  let value = header.trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (value.length === 0 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH) return null;
  // Printable ASCII without the quote and backslash an sf-string would need escaped.
  return /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/.test(value) ? value : null;
}
