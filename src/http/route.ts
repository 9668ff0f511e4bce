// A route declared once: method, path, schemas and handler. The one pipeline serves every declared route
// (ADR 0022); the OpenAPI document is made from the same declarations.

import type { IncomingHttpHeaders } from 'node:http';
import type { AnswerCheck } from './answer-check.js';
import type { Answer, BytesBody, Method, RouteInput, RouteSchema, Scope } from './route-types.js';

export * from './route-types.js';

/** An error answer of a route's own stages, for a route that shapes its error bodies itself. */
export interface RouteFailure {
  status: number;
  /** What is wrong, in words (the `error` of the usual body). */
  message: string;
  /** Where it failed: a path parameter that cannot be used, reading or parsing the body, the route's schemas, or the handler. */
  stage: 'url' | 'body' | 'validation' | 'handle';
  /** What was thrown. */
  error: unknown;
  /** The path parameters. */
  params: Record<string, string>;
  /** The request's headers (an error answered in the request's own encoding). */
  headers: IncomingHttpHeaders;
}

/** An error body with its own media type (OTLP's google.rpc.Status in protobuf). */
export interface TypedBody {
  type: string;
  body: string | Buffer;
}

export interface Route<S extends RouteSchema = RouteSchema> {
  method: Method;
  /** Fastify's syntax: `/experiment/:slug/assign`. */
  url: string;
  schema: S;
  /** The scope a key needs to call it. */
  scope: Scope;
  /** Acts on every experiment at once (managing keys): refused to keys limited to some experiments. */
  everyExperiment?: boolean;
  /** Honours Idempotency-Key: a retry gets the first answer again and writes nothing new (ADR 0016). */
  idempotent?: boolean;
  /** The success status (default 200). */
  status?: number;
  /** No effect since ADR 0022 (every route takes the one pipeline); kept so declarations stay as they are. */
  fast?: boolean;
  /**
   * Most requests of this route whose bodies are being read or handled at once; more wait before
   * their bodies are read, so memory stays flat and TCP pushes back on the clients.
   */
  concurrency?: number;
  /** This route's body limit in bytes, when above the server's (saved groups' long lists); Content-Length bodies only. */
  bodyLimit?: number;
  /** The path parameter naming the experiment a key must be allowed (default `slug`). */
  experimentParam?: string;
  /**
   * The JSON body of this route's error answers from its own stages (body, schemas, handler), for
   * routes speaking another protocol (OFREP); absent: `{"error": message}`. Key, scope and rate-limit
   * refusals keep the pipeline's bodies.
   */
  errorBody?: (failure: RouteFailure) => string | TypedBody;
  /**
   * The body is taken as bytes of these media types (OTLP/HTTP), not as JSON: handed to the handler as
   * `raw`, gzip inflated when allowed, within its own limit (chunked bodies too); no body schema.
   */
  bytes?: BytesBody;
  handle(input: RouteInput<S>): Answer | Promise<Answer>;
}

/**
 * Declares a route with its handler's input typed from its schemas, and its answer checked against its
 * success response schema at compile time (answer-check.ts): the Static type of that schema, no field
 * the schema lacks (the serializer would drop it silently).
 */
export function route<S extends RouteSchema, R, const St extends number = 200>(
  r: Route<S> & { status?: St; handle(input: RouteInput<S>): R } & NoInfer<AnswerCheck<S, St, R>>,
): Route {
  return r as unknown as Route;
}
