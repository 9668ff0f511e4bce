// The node:http adapter (ADR 0022): the server every request arrives on, handing each to the pipeline.
// What never becomes a request is answered here, in the same {"error"} shape, by the writer: what Node's
// parser refuses (clientError), an Expect it cannot meet, and CONNECT.
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { watchChunkedBody } from './chunked-limit.js';
import { errorBody, tooLargeMessage } from './errors.js';
import type { Pipeline } from './pipeline.js';
import type { RequestLog } from './request-log.js';
import { writeAnswer, writeToSocket } from './writer.js';

/** The options Fastify applies to the HTTP server it builds; `serverFactory` must apply them itself. */
export interface ServerTimeouts {
  http?: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

export interface NodeAdapterOptions {
  /** A request (headers and body) must arrive within this many ms, else 408. */
  bodyTimeoutMs: number;
  log: RequestLog;
}

/** Every request into the pipeline (the server's listener, and what inject() calls). */
export function createRequestListener(
  pipeline: Pipeline,
  bodyLimit: number,
  /** Paths whose routes take bytes with their own limit (OTLP): that limit, for chunked bodies too. */
  ownLimits: ReadonlyMap<string, number> = new Map(),
): RequestListener {
  return (req, res) => {
    // A chunked body's declared sizes are followed from here (the rest of this read is still in the
    // parser's buffer); the body stage answers 413 once they pass the limit.
    if (req.headers['transfer-encoding'] !== undefined) {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      watchChunkedBody(req, ownLimits.get(q === -1 ? url : url.slice(0, q)) ?? bodyLimit);
    }
    pipeline(req, res);
  };
}

/** The server: every request to `listener` (read as each arrives, so it may be set after the server). */
export function createNodeServer(
  listener: () => RequestListener,
  timeouts: ServerTimeouts,
  options: NodeAdapterOptions,
): Server {
  const { bodyTimeoutMs, log } = options;
  const server = createServer(
    {
      ...timeouts.http,
      // A missing Host is answered by the pipeline in this API's error shape, not with Node's empty 400.
      requireHostHeader: false,
      headersTimeout: bodyTimeoutMs,
      // How often the request deadline is checked (Node's default, 30 s, would let it slip that long).
      connectionsCheckingInterval: Math.min(1000, bodyTimeoutMs),
    },
    (req, res) => listener()(req, res),
  );
  // An Expect other than 100-continue: Node answers 417 with an empty body; this API's 4xx are JSON.
  server.on('checkExpectation', (req, res) => {
    const expect = String(req.headers.expect ?? '').slice(0, 40);
    const body = errorBody(`Expect '${expect}' is not supported (only 100-continue)`);
    writeAnswer(res, { status: 417, body, close: true });
    log.answered(req, undefined, 417, 0);
  });
  // CONNECT (a proxy tunnel): Node hands the socket over, or without a listener drops it unanswered.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    // Whatever the client sends after it is read and dropped; the socket closes once answered.
    socket.resume();
    writeToSocket(socket as Socket, 405, errorBody('CONNECT is not supported'), {
      allow: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
    });
    log.answered(req, undefined, 405, 0);
  });
  server.keepAliveTimeout = timeouts.keepAliveTimeout;
  server.requestTimeout = timeouts.requestTimeout;
  server.setTimeout(timeouts.connectionTimeout);
  if (timeouts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = timeouts.maxRequestsPerSocket;
  return server;
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
 * Requests Node's parser refuses never reach the pipeline: answered here in the same {"error"} shape,
 * then the connection is closed (the parser cannot resync after a broken request).
 */
export function createClientErrorHandler(bodyTimeoutMs: number, bodyLimit: number) {
  return (err: Error & { code?: string; reason?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    // An answer already under way on this connection (e.g. a 401 sent before the body broke) stands.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (socket.writable && !answering) {
      const [status, message] = clientErrorAnswer(err, bodyTimeoutMs, bodyLimit);
      writeToSocket(socket, status, errorBody(message), {}, err);
    } else socket.destroy(err);
  };
}
