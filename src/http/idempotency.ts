// Idempotency-Key at the edge (ADR 0016): requests that carry one are served by Fastify only (the fast
// transport hands them over), so there is one implementation. The body's fingerprint is taken where
// its bytes are parsed; the answer is recorded by the service in the transaction of its data.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, UnprocessableError, ValidationError } from '../core/errors.js';
import { fingerprint, MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey } from '../core/idempotency.js';
import type { Principal } from '../core/keys.js';
import type { IdempotencyService } from '../services/idempotency.js';
import type { CompiledRoute } from './compile.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

const fingerprints = new WeakMap<IncomingMessage, string>();

/** Called by the JSON body parser: remembers the fingerprint of a body that came with the header. */
export function noteBody(req: IncomingMessage, url: string, body: Buffer): void {
  if (req.headers[IDEMPOTENCY_HEADER] === undefined) return;
  const q = url.indexOf('?');
  fingerprints.set(req, fingerprint(req.method ?? '', q === -1 ? url : url.slice(0, q), body));
}

function keyOf(request: FastifyRequest): string {
  const header = request.headers[IDEMPOTENCY_HEADER];
  const key = typeof header === 'string' ? parseIdempotencyKey(header) : null;
  if (key === null) {
    throw new ValidationError(
      `Idempotency-Key must be one value of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (a UUID is a good choice)`,
    );
  }
  return key;
}

/**
 * Runs an idempotent route's request that carries the header: replays a stored answer, refuses a
 * reused key (422) or one still in flight (409), or runs `execute` with the function that records its
 * answer, releasing the key if it fails.
 */
export async function runIdempotently(
  service: IdempotencyService,
  request: FastifyRequest,
  reply: FastifyReply,
  compiled: CompiledRoute,
  principal: Principal,
  execute: (record: (answer: unknown) => ReturnType<IdempotencyService['record']>) => Promise<unknown>,
  send: (value: unknown) => FastifyReply,
): Promise<FastifyReply> {
  const key = keyOf(request);
  const print =
    fingerprints.get(request.raw) ??
    fingerprint(request.method, request.url.split('?')[0] ?? request.url, Buffer.alloc(0));
  const arrival = await service.arrive(principal.id, key, print);
  if (arrival.kind === 'replay') {
    return reply
      .code(arrival.status)
      .header('idempotent-replayed', 'true')
      .type('application/json; charset=utf-8')
      .send(arrival.answer);
  }
  if (arrival.kind === 'mismatch') {
    throw new UnprocessableError(
      `Idempotency-Key '${key}' was already used with a different request (method, path or body); use a new key for a new request`,
    );
  }
  if (arrival.kind === 'in-flight') {
    throw new ConflictError(
      `a request with Idempotency-Key '${key}' is still being processed; retry once it has been answered`,
      1,
    );
  }
  let succeeded = false;
  try {
    const value = await execute((answer) =>
      service.record(principal.id, key, print, compiled.status, compiled.serialize(answer)),
    );
    succeeded = true;
    return send(value);
  } finally {
    await service.leave(principal.id, key, succeeded);
  }
}
