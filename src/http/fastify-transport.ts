// Fastify serves every declared route: parsing, validation and answers through the shared functions
// (body.ts, errors.ts, compile.ts), and the same request log line as the fast transport.
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../core/errors.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import { ROOT } from '../core/keys.js';
import type { IdempotencyService } from '../services/idempotency.js';
import { type Authenticate, principalOfRequest, type RouteAccess, UNAUTHORIZED } from './auth.js';
import { contentTypeProblem, parseJsonBody } from './body.js';
import type { CompiledRoute } from './compile.js';
import { errorAnswer, errorBody, tooLargeMessage } from './errors.js';
import { IDEMPOTENCY_HEADER, noteBody, runIdempotently } from './idempotency.js';
import type { RequestLog } from './request-log.js';
import { JsonText, PlainText, Stream, Tagged } from './route.js';
import { sendTagged } from './tagged.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** What made each failed request fail (for its log line), by the Node request. */
const failures = new WeakMap<IncomingMessage, unknown>();

export function sendAnswer(reply: FastifyReply, compiled: CompiledRoute, value: unknown): FastifyReply {
  if (value instanceof Stream) return reply.headers(value.headers).send(value.body);
  if (value instanceof PlainText) return reply.code(compiled.status).type(value.contentType).send(value.text);
  if (value instanceof Tagged) {
    // Returning the reply (a thenable) makes Fastify wait for the answer sent here.
    sendTagged(reply, compiled.status, value).catch((err: unknown) => reply.send(err));
    return reply;
  }
  reply.code(compiled.status);
  if (compiled.status === 204) return reply.send();
  const text = value instanceof JsonText ? value.text : compiled.serialize(value);
  return reply.type(JSON_TYPE).send(text);
}

export function registerRoutes(
  app: FastifyInstance,
  routes: CompiledRoute[],
  idempotency: IdempotencyService,
): void {
  for (const compiled of routes) {
    const { route } = compiled;
    const access: RouteAccess = { scope: route.scope, everyExperiment: route.everyExperiment };
    app.route({
      method: route.method,
      url: route.url,
      schema: route.schema,
      config: access as never,
      preParsing: compiled.admission?.preParsing,
      handler: async (request, reply) => {
        const principal = principalOfRequest(request) ?? ROOT;
        const run = (record?: (answer: unknown) => IdempotencyRecord) => {
          const answer = route.handle({
            params: request.params as never,
            query: request.query as never,
            body: request.body as never,
            principal,
            idempotency: record,
          });
          // The parsed body is the handler's now: a large batch can be collected while its commit is awaited.
          (request as { body: unknown }).body = undefined;
          return answer;
        };
        if (route.idempotent && request.headers[IDEMPOTENCY_HEADER] !== undefined) {
          return runIdempotently(
            idempotency,
            request,
            reply,
            compiled,
            principal,
            async (record) => run(record),
            (value) => sendAnswer(reply, compiled, value),
          );
        }
        return sendAnswer(reply, compiled, await run());
      },
    });
  }
}

/** JSON bodies in UTF-8 only, through the same parser as the fast transport; anything else is a 400. */
export function registerJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const problem = contentTypeProblem(request.headers['content-type']);
    if (problem !== null) {
      done(new ValidationError(problem), undefined);
      return;
    }
    try {
      noteBody(request.raw, request.url, body as Buffer);
      done(null, parseJsonBody(body as Buffer));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(new ValidationError(contentTypeProblem(request.headers['content-type']) ?? 'bad body'), undefined);
  });
}

export function registerErrorHandling(app: FastifyInstance, bodyLimit: number, log: RequestLog): void {
  app.setErrorHandler((error, request, reply) => {
    const answer = errorAnswer(error, bodyLimit);
    if (answer.status >= 500) failures.set(request.raw, error);
    if (answer.retryAfter !== undefined) reply.header('retry-after', String(answer.retryAfter));
    return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .type(JSON_TYPE)
      .send(errorBody(`no route ${request.method} ${request.url.split('?')[0]}`));
  });
  // An answer sent before the body has arrived (a 401, a 404) closes the connection: the rest of that
  // body would otherwise be awaited on a connection the client considers answered, and end in a 408.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    log.answered(
      request.raw,
      request.id,
      reply.statusCode,
      reply.elapsedTime,
      failures.get(request.raw),
      request.routeOptions.url,
    );
    done();
  });
}

/**
 * Fastify's own pre-routing errors (an undecodable URL, an over-long slug) never reach the auth hook,
 * so the key is checked here first; then the same body shape as every other error, and never 414.
 * `countFailure` counts a 401 as a failed authentication (ADR 0017): these answers run no hooks.
 */
export function createFrameworkErrorHandler(
  authenticate: Authenticate,
  countFailure?: (request: FastifyRequest) => Promise<void>,
) {
  return (error: { code?: string }, request: FastifyRequest, reply: FastifyReply): void => {
    reply.type(JSON_TYPE);
    if (!request.raw.complete) reply.header('connection', 'close');
    if (authenticate(request.headers['x-api-key']) === null) {
      const unauthorized = () => reply.code(401).send(UNAUTHORIZED);
      if (countFailure === undefined) unauthorized();
      else countFailure(request).then(unauthorized, unauthorized);
      return;
    }
    const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 404 : 400;
    const message =
      status === 404 ? 'no experiment with a slug that long' : 'the URL is not valid percent-encoding';
    reply.code(status).send(errorBody(message));
  };
}

/** What Node's HTTP parser refused, in this API's words. */
function clientErrorAnswer(
  err: { code?: string; reason?: string },
  bodyTimeoutMs: number,
  bodyLimit: number,
): [number, string] {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, `the request did not arrive within ${bodyTimeoutMs} ms`];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large'];
    case 'HPE_INVALID_METHOD':
      return [400, 'the request method is not valid HTTP'];
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return [400, 'the request has both or invalid Content-Length and Transfer-Encoding headers'];
    case 'HPE_INVALID_CHUNK_SIZE':
      // A chunk size past 2^64 − 1: far past any body limit.
      if (/overflow/i.test(err.reason ?? '')) return [413, tooLargeMessage(bodyLimit)];
      return [400, 'the request body is not valid chunked encoding'];
    case 'HPE_INVALID_EOF_STATE':
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [400, 'the request body is not valid chunked encoding'];
    default:
      return [400, 'the request is not valid HTTP/1.1'];
  }
}

/**
 * Requests Node's parser refuses never reach a route: answered here in the same {"error"} shape, then
 * the connection is closed (the parser cannot resync after a broken request).
 */
export function createClientErrorHandler(bodyTimeoutMs: number, bodyLimit: number) {
  return (err: Error & { code?: string; reason?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // An answer already under way on this connection (e.g. a 401 sent before the body broke) stands.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (socket.writable && !answering) {
      const [status, message] = clientErrorAnswer(err, bodyTimeoutMs, bodyLimit);
      const body = errorBody(message);
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: ${JSON_TYPE}\r\n` +
          'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}
