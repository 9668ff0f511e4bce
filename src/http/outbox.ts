// Answers the fast path has ready, written together once the event loop has handled every request
// that arrived with them (ADR 0010).
//
// Written one by one, each answer on loopback wakes its client at once; a client that is quicker than
// the server goes back to sleep after each one, so every answer pays for a wake-up (an interrupt to
// another core, a VM exit on a virtual machine). Written at the end of the I/O phase, in a burst, the
// first answer wakes the client and the rest find it awake. Redis writes its replies the same way,
// before the event loop sleeps again.
import type { Server, ServerResponse } from 'node:http';

const CONTENT_TYPE = 'application/json; charset=utf-8';

export interface Outbox {
  /**
   * Queues an answer; it is written in the check phase of this turn of the event loop, or at once with
   * the others waiting when it is the `maxWaiting`th.
   */
  send(res: ServerResponse, status: number, body: string, retryAfter?: number): void;
  /** Writes an answer now (one that waited for a commit: those settle, and leave, together already). */
  write(res: ServerResponse, status: number, body: string, retryAfter?: number): void;
}

/**
 * Writes one JSON answer now, with its length (no chunked encoding). When the server has stopped
 * listening it is closing: the connection then closes after this answer. An answer made before the
 * close began but written after it would otherwise keep an idle keep-alive connection open, which the
 * close had no chance to reap (it skips connections whose response is unfinished), for the whole
 * keep-alive timeout.
 */
function writeAnswer(res: ServerResponse, status: number, body: string, retryAfter?: number): void {
  const server = (res.socket as { server?: Server } | null)?.server;
  if (server !== undefined && !server.listening) res.shouldKeepAlive = false;
  const headers = [
    'content-type',
    CONTENT_TYPE,
    'content-length',
    String(Buffer.byteLength(body)),
    // As on every answer (security-headers.ts).
    'x-content-type-options',
    'nosniff',
    'cache-control',
    'no-store',
  ];
  if (retryAfter !== undefined) headers.push('retry-after', String(retryAfter));
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * Most answers held at once: when this many wait, they are written there and then. Holding a whole
 * turn's answers (256 connections' worth) measured 30% slower than writing them 16 to 64 at a time:
 * the clients then sit idle for the whole turn and answer in one flood (ADR 0010).
 */
export const MAX_WAITING = 32;

/**
 * @param onError called when writing an answer throws (its connection is then dropped, and the others are
 *   still written); Node reports a client that went away through the response's events, not by
 *   throwing, so this is for the unexpected
 */
export function createOutbox(onError: (err: unknown) => void, maxWaiting = MAX_WAITING): Outbox {
  // Flat, four slots per answer: no object per answer.
  let queued: Array<ServerResponse | number | string | undefined> = [];
  let scheduled = false;

  /** Writes an answer now; one that throws is reported and its connection dropped (no client waits forever). */
  function write(res: ServerResponse, status: number, body: string, retryAfter?: number): void {
    try {
      writeAnswer(res, status, body, retryAfter);
    } catch (err) {
      onError(err);
      res.destroy();
    }
  }

  function flush(): void {
    const answers = queued;
    queued = [];
    for (let i = 0; i < answers.length; i += 4) {
      write(
        answers[i] as ServerResponse,
        answers[i + 1] as number,
        answers[i + 2] as string,
        answers[i + 3] as number | undefined,
      );
    }
  }

  return {
    send(res, status, body, retryAfter) {
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          flush();
        });
      }
      queued.push(res, status, body, retryAfter);
      if (queued.length >= 4 * maxWaiting) flush();
    },
    write,
  };
}
