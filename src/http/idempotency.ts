// Idempotency-Key at the edge (ADR 0016), a stage of the one pipeline (ADR 0022): the fingerprint is
// of the body's bytes as received; the answer is recorded by the service in the transaction of its data.
import type { IncomingHttpHeaders } from 'node:http';
import { ConflictError, UnprocessableError, ValidationError } from '../core/errors.js';
import { fingerprint, MAX_IDEMPOTENCY_KEY_LENGTH, parseIdempotencyKey } from '../core/idempotency.js';
import type { Principal } from '../core/keys.js';
import type { IdempotencyService } from '../services/idempotency.js';
import type { CompiledRoute } from './compile.js';
import { pathOf } from './router.js';
import type { Answer } from './writer.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

function keyOf(headers: IncomingHttpHeaders): string {
  const header = headers[IDEMPOTENCY_HEADER];
  const key = typeof header === 'string' ? parseIdempotencyKey(header) : null;
  if (key === null) {
    throw new ValidationError(
      `Idempotency-Key must be one value of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (a UUID is a good choice)`,
    );
  }
  return key;
}

/** What a request brings to its idempotency check: its key header, and what its fingerprint is of. */
export interface IdempotentRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body's bytes as received (none: empty). */
  body: Buffer | undefined;
}

/**
 * Runs an idempotent route's request that carries the header: replays a stored answer, refuses a
 * reused key (422) or one still in flight (409), or runs `execute` with the function that records its
 * answer, releasing the key if it fails. Resolves to the replayed answer, or to what `execute` returned.
 */
export async function runIdempotently(
  service: IdempotencyService,
  request: IdempotentRequest,
  compiled: CompiledRoute,
  principal: Principal,
  execute: (record: (answer: unknown) => ReturnType<IdempotencyService['record']>) => Promise<unknown>,
): Promise<{ replay: Answer } | { value: unknown }> {
  const key = keyOf(request.headers);
  const print = fingerprint(request.method, pathOf(request.url), request.body ?? Buffer.alloc(0));
  const arrival = await service.arrive(principal.id, key, print);
  if (arrival.kind === 'replay') {
    return {
      replay: { status: arrival.status, headers: { 'idempotent-replayed': 'true' }, body: arrival.answer },
    };
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
    return { value };
  } finally {
    await service.leave(principal.id, key, succeeded);
  }
}
