// The one writer of HTTP answers (ADR 0022): status, headers (the security headers on every answer) and
// body, to a ServerResponse, or as raw bytes to a socket for what Node's parser refuses before there is
// a response. Nothing else in src/http calls writeHead, write or end.
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { SECURITY_HEADERS } from './security-headers.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** An answer, whatever produced it: the pipeline's stages, a handler, the error mapper. */
export interface Answer {
  status: number;
  /** Content-Type; JSON when a body is given and none is. */
  type?: string;
  /** Headers besides Content-Type, Content-Length and the security headers (which these override). */
  headers?: Record<string, string>;
  /** Text or bytes (sent with their length), bytes made ahead (in order), a stream (chunked), or none. */
  body?: string | Buffer | readonly Buffer[] | Readable;
  /** Closes the connection after this answer. */
  close?: boolean;
}

/** A JSON answer. */
export function json(status: number, body: string, headers?: Record<string, string>): Answer {
  return { status, body, headers };
}

function isStream(body: Answer['body']): body is Readable {
  return typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function';
}

/**
 * When the server has stopped listening it is closing. An answer made before the close began but
 * written after it would otherwise keep an idle keep-alive connection open, which the close had no
 * chance to reap (it skips connections whose response is unfinished), for the whole keep-alive timeout.
 * A success closes its connection (ADR 0010: a request pipelined behind it is never read, so the client
 * sends it elsewhere); after a refusal the connection is reaped once idle, and a request already behind
 * it gets the pipeline's 503 with Retry-After.
 */
function whileClosing(res: ServerResponse, a: Answer): void {
  const server = (res.socket as { server?: Server } | null)?.server;
  if (server === undefined || server.listening) return;
  if (a.status < 400) res.shouldKeepAlive = false;
  else res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
}

/** Writes one answer now. */
export function writeAnswer(res: ServerResponse, a: Answer): void {
  if (a.close === true) res.shouldKeepAlive = false;
  else whileClosing(res, a);
  const body = a.body;
  // A flat list: no object per answer on the hot path. Content first, then the security headers (unless
  // the answer sets its own, e.g. a tagged answer's cache-control), then the answer's own.
  const headers: string[] = [];
  let chunks: readonly Buffer[] | undefined;
  if (body !== undefined) {
    headers.push('content-type', a.type ?? JSON_TYPE);
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      headers.push('content-length', String(Buffer.byteLength(body)));
    } else if (!isStream(body)) {
      chunks = body as readonly Buffer[];
      let length = 0;
      for (const c of chunks) length += c.length;
      headers.push('content-length', String(length));
    }
  }
  const own = a.headers;
  for (const name in SECURITY_HEADERS) {
    if (own === undefined || own[name] === undefined) headers.push(name, SECURITY_HEADERS[name]!);
  }
  if (own !== undefined) for (const name in own) headers.push(name, own[name]!);
  if (a.close === true) headers.push('connection', 'close');
  res.writeHead(a.status, headers);
  if (body === undefined) res.end();
  else if (chunks !== undefined) {
    for (let i = 0; i < chunks.length - 1; i++) res.write(chunks[i]);
    res.end(chunks[chunks.length - 1]);
  } else if (isStream(body)) {
    pipeline(body, res, (err) => {
      if (err) res.destroy();
    });
  } else res.end(body);
}

/**
 * An answer written straight to a socket (no ServerResponse exists: Node's parser refused the request,
 * or CONNECT took the socket over), then the socket closes.
 */
export function writeToSocket(
  socket: Socket,
  status: number,
  body: string,
  headers: Record<string, string> = {},
  /** Destroys the socket at once with this error (the parser cannot resync); else once it is written. */
  failed?: Error,
): void {
  const lines = { ...SECURITY_HEADERS, ...headers };
  const text =
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: ${JSON_TYPE}\r\n` +
    Object.entries(lines)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  if (failed === undefined) socket.end(text, () => socket.destroy());
  else {
    socket.write(text);
    socket.destroy(failed);
  }
}
