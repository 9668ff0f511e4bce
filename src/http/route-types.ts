// The parts of a route declaration: its method, scope, schemas, the input its handler gets and the kinds
// of answer a handler may return besides a value. route.ts declares routes from them; answer-check.ts
// checks a handler's answer against them (both import this file, neither the other).
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Static, TSchema } from 'typebox';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { Principal } from '../core/keys.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What a key must hold to call a route (ADR 0015): `assign` (POST assign), `log` (POST log and logs),
 * `read` (every GET of experiments, results, exports, analyses and metrics), `admin` (everything,
 * including managing experiments and keys). `public` routes need no key at all; `any` routes need a valid key
 * of any scope (MCP: each tool's own call to the API then needs its route's scope).
 */
export type Scope = 'assign' | 'log' | 'read' | 'admin' | 'any' | 'public';

export interface RouteSchema {
  tags: string[];
  summary: string;
  description?: string;
  /** `[]` for routes that need no key (the OpenAPI document then shows no lock). */
  security?: Array<Record<string, string[]>>;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** By status code: what the OpenAPI document shows; the success status's schema serializes answers. */
  response: Record<number, unknown>;
  /** Kept out of the OpenAPI document (answers no operation documents: GET /mcp's 405). */
  hide?: boolean;
}

type In<T> = T extends TSchema ? Static<T> : undefined;

export interface RouteInput<S extends RouteSchema> {
  params: In<S['params']>;
  query: In<S['querystring']>;
  body: In<S['body']>;
  /** Who is calling (the root principal on routes that need no key). */
  principal: Principal;
  /** The request's headers as sent (the key it presented, Host, Origin): for routes that pass them on. */
  headers: IncomingHttpHeaders;
  /**
   * Present when the request carries an Idempotency-Key on an `idempotent` route: turns the success
   * answer into the record the service commits with the request's data (ADR 0016).
   */
  idempotency?: (answer: unknown) => IdempotencyRecord;
  /** On routes that take their body as bytes (`bytes`): its media type (lowercase) and bytes, inflated. */
  raw?: RawBody;
}

/** A body taken as bytes (OTLP): its media type, lowercase without parameters, and its bytes. */
export interface RawBody {
  type: string;
  bytes: Buffer;
}

/** A route that takes its body as bytes (not JSON): which media types, whether gzip, and its limit. */
export interface BytesBody {
  /** Media types taken (lowercase, without parameters); any other is a 415. */
  types: readonly string[];
  /** Content-Encoding: gzip is inflated (past `limit` inflated: 413). */
  gzip: boolean;
  /** Most bytes, as sent and once inflated; chunked bodies too. */
  limit: number;
}

/** A JSON answer serialized already (e.g. assign's, built from a prefix compiled per experiment). */
export class JsonBody {
  constructor(readonly text: string) {}
}

/** Bytes made ahead and sent as they are, without copying: `chunks` in order, `length` bytes in all. */
export interface Prepared {
  chunks: readonly Buffer[];
  length: number;
}

/**
 * JSON with a strong entity tag: answered 304 with no body when the request's If-None-Match names the
 * tag (clients polling for changes). The body is text, or bytes made ahead (called only when sent).
 * `gzip`, when given, makes the same JSON gzip-compressed: sent with Content-Encoding: gzip to requests
 * whose Accept-Encoding allows it, under the tag with `-gzip` inside its quotes; either tag answers 304.
 */
export class Tagged {
  constructor(
    readonly etag: string,
    readonly body: string | (() => Prepared),
    readonly gzip?: () => Promise<Prepared>,
  ) {}
}

/** A streamed answer (exports): not JSON, with its own content type and headers. */
export class Stream {
  constructor(
    readonly body: Readable,
    readonly headers: Record<string, string>,
  ) {}
}

/** An answer that is not JSON (the Prometheus metrics' text, OTLP's protobuf), sent as it is with its content type. */
export class PlainText {
  constructor(
    readonly text: string | Buffer,
    readonly contentType: string,
  ) {}
}

/**
 * An answer made whole by someone else (the MCP transport's web Response): its own status, headers and
 * body, sent as they are.
 */
export class Relayed {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string,
  ) {}
}

/** What a handler returns: a value serialized by the route's success schema, JSON text, a stream, or nothing (204). */
export type Answer = unknown;
