// The two hottest routes, POST /experiment/:slug/assign and /log, answered on node:http directly, ahead
// of Fastify's router (ADR 0005).
//
// Fastify's per-request machinery (routing, hooks, the reply object, the body parser's async scope)
// costs more than an assignment does. This handler takes only requests whose headers are plainly
// well-formed (one of its routes, the right key, JSON, a content-length within the limit) and hands
// everything else to Fastify untouched, so every unusual request gets exactly the answer it always got.
// Once it has read a body it answers the body's problems itself, with the routes' own validators and
// the same messages and statuses as the error handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, UnavailableError } from '../core/errors.js';
import { findJsonProblem } from '../core/json.js';
import { describeValidation } from './errors.js';
import { createOutbox } from './outbox.js';

/** A compiled validator for a route's body (the route's own schema, compiled the route's way). */
export interface BodyValidator {
  (body: unknown): boolean;
  errors?: Array<{
    instancePath: string;
    message?: string;
    keyword: string;
    params: Record<string, unknown>;
  }> | null;
}

export interface FastRoute {
  validateBody: BodyValidator;
  /** May this route take a request for `slug` before its body is read? Otherwise Fastify answers. */
  accepts(slug: string): boolean;
  /**
   * The 200 body for a valid request body (`body`, parsed from `text`); throws (or rejects with) AppError
   * for the error answers.
   */
  handle(slug: string, body: unknown, text: string): string | Promise<string>;
}

export interface FastPathDeps {
  /** By the last URL segment: `assign` for /experiment/:slug/assign. */
  routes: Record<string, FastRoute>;
  keyMatches: (candidate: unknown) => boolean;
  bodyLimit: number;
  /** Unexpected failures: answered 500 when they come from a route, or the connection is dropped when
   * writing the answer itself failed. */
  onError: (err: unknown) => void;
}

/** Returns true when it took the request (and will answer it); false leaves it to Fastify. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const PREFIX = '/experiment/';
const MAX_SLUG = 1000;
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
const LENGTH = /^[1-9][0-9]{0,8}$/;

/** Slug and action of a plain `/experiment/<slug>/<action>[?query]` URL, or null for anything else. */
export function slugAndAction(url: string): [slug: string, action: string] | null {
  if (!url.startsWith(PREFIX)) return null;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const slash = path.indexOf('/', PREFIX.length);
  if (slash === -1) return null;
  const slug = path.slice(PREFIX.length, slash);
  const action = path.slice(slash + 1);
  // Percent-encoded, empty, nested or over-long: Fastify decodes and judges them.
  if (slug.length === 0 || slug.length > MAX_SLUG || slug.includes('%') || action.includes('/')) return null;
  return [slug, action];
}

export function createFastPath(deps: FastPathDeps): FastPath {
  const { routes, bodyLimit } = deps;
  // Answers made while handling a request's I/O leave at the end of the I/O phase (ADR 0010).
  const outbox = createOutbox(deps.onError);
  const answer = outbox.send;
  const fail = (res: ServerResponse, status: number, message: string, retryAfter?: number): void =>
    answer(res, status, JSON.stringify({ error: message }), retryAfter);

  function failWith(res: ServerResponse, err: unknown): void {
    if (err instanceof AppError) {
      fail(res, err.status, err.message, err instanceof UnavailableError ? err.retryAfterSeconds : undefined);
      return;
    }
    deps.onError(err);
    fail(res, 500, 'Internal Server Error');
  }

  function respond(res: ServerResponse, route: FastRoute, slug: string, text: string): void {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      fail(res, 400, `body is not valid JSON: ${(err as Error).message}`);
      return;
    }
    const problem = findJsonProblem(body, 'body');
    if (problem !== null) {
      fail(res, 400, problem);
      return;
    }
    if (!route.validateBody(body)) {
      fail(res, 400, describeValidation('body', route.validateBody.errors ?? []));
      return;
    }
    let result: string | Promise<string>;
    try {
      result = route.handle(slug, body, text);
    } catch (err) {
      failWith(res, err);
      return;
    }
    if (typeof result === 'string') answer(res, 200, result);
    else
      result.then(
        // Answers settled by one commit already leave together, in one run of microtasks.
        (json) => outbox.write(res, 200, json),
        (err) => failWith(res, err),
      );
  }

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const target = slugAndAction(req.url ?? '');
    if (target === null) return false;
    const [slug, action] = target;
    const route = Object.hasOwn(routes, action) ? routes[action]! : undefined;
    if (route === undefined) return false;
    const headers = req.headers;
    const type = headers['content-type'];
    const length = headers['content-length'];
    if (
      !deps.keyMatches(headers['x-api-key']) ||
      type === undefined ||
      !JSON_TYPES.has(type.toLowerCase()) ||
      length === undefined ||
      headers['transfer-encoding'] !== undefined ||
      !LENGTH.test(length) ||
      Number(length) > bodyLimit ||
      !route.accepts(slug)
    ) {
      return false;
    }

    const expected = Number(length);
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      // Node's parser delivers exactly content-length bytes; anything else is a broken request.
      if (received !== expected) {
        fail(res, 400, `body length ${received} does not match content-length ${expected}`);
        return;
      }
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      respond(res, route, slug, text);
    });
    // A client that goes away mid-body is simply not answered; the socket is already gone.
    req.on('error', () => undefined);
    return true;
  };
}
