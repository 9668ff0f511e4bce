// POST /experiment/:slug/assign on node:http directly, ahead of Fastify's router (ADR 0005).
//
// Fastify's per-request machinery (routing, hooks, the reply object, the body parser's async scope)
// costs more than the whole assignment. This handler takes only requests whose headers are plainly
// well-formed (right path, key, media type and length) and hands everything else to Fastify
// untouched, so every unusual request gets exactly the answer it always got. Once it has read a body it
// answers the body's problems itself, with the same validator and the same messages as the route.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../core/errors.js';
import { findJsonProblem, type JsonObject } from '../core/json.js';
import type { Assign } from '../services/assignments.js';
import { describeValidation } from './errors.js';

/** A compiled validator for the assign body (the route's own schema, compiled the route's way). */
export interface BodyValidator {
  (body: unknown): boolean;
  errors?: Array<{
    instancePath: string;
    message?: string;
    keyword: string;
    params: Record<string, unknown>;
  }> | null;
}

export interface AssignFastPathDeps {
  assign: Assign;
  keyMatches: (candidate: unknown) => boolean;
  /** Is a running experiment served under this slug? Others go to Fastify, which answers 404. */
  isRunning: (slug: string) => boolean;
  validateBody: BodyValidator;
  bodyLimit: number;
  /** Unexpected failures (answered 500). */
  onError: (err: unknown) => void;
}

/** Returns true when it took the request (and will answer it); false leaves it to Fastify. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const PREFIX = '/experiment/';
const SUFFIX = '/assign';
const MAX_SLUG = 1000;
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
const CONTENT_TYPE = 'application/json; charset=utf-8';

/** The slug of a plain `/experiment/<slug>/assign[?query]` URL, or null for anything else. */
export function assignSlug(url: string): string | null {
  if (!url.startsWith(PREFIX)) return null;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!path.endsWith(SUFFIX)) return null;
  const slug = path.slice(PREFIX.length, path.length - SUFFIX.length);
  // Percent-encoded, empty, nested or over-long slugs: Fastify decodes and judges them.
  if (slug.length === 0 || slug.length > MAX_SLUG || slug.includes('/') || slug.includes('%')) return null;
  return slug;
}

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, ['content-type', CONTENT_TYPE, 'content-length', String(Buffer.byteLength(body))]);
  res.end(body);
}

function fail(res: ServerResponse, status: number, message: string): void {
  answer(res, status, JSON.stringify({ error: message }));
}

export function createAssignFastPath(deps: AssignFastPathDeps): FastPath {
  const { assign, validateBody, bodyLimit } = deps;

  function respond(res: ServerResponse, slug: string, text: string): void {
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
    if (!validateBody(body)) {
      fail(res, 400, describeValidation('body', validateBody.errors ?? []));
      return;
    }
    const { userId, context } = body as { userId: string; context?: JsonObject };
    try {
      answer(res, 200, assign(slug, userId, context).json);
    } catch (err) {
      if (err instanceof AppError) {
        fail(res, err.status, err.message);
        return;
      }
      deps.onError(err);
      fail(res, 500, 'Internal Server Error');
    }
  }

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const slug = assignSlug(url);
    if (slug === null) return false;
    const headers = req.headers;
    const type = headers['content-type'];
    const length = headers['content-length'];
    if (
      !deps.keyMatches(headers['x-api-key']) ||
      type === undefined ||
      !JSON_TYPES.has(type.toLowerCase()) ||
      length === undefined ||
      headers['transfer-encoding'] !== undefined ||
      !/^[1-9][0-9]{0,8}$/.test(length) ||
      Number(length) > bodyLimit ||
      !deps.isRunning(slug)
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
      respond(res, slug, text);
    });
    // A client that goes away mid-body is simply not answered; the socket is already gone.
    req.on('error', () => undefined);
    return true;
  };
}
