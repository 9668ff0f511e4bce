// Answers the fast path has ready, written together once the event loop has handled every request
// that arrived with them (ADR 0010).
//
// Written one by one, each answer on loopback wakes its client at once; a client that is quicker than
// the server goes back to sleep after each one, so every answer pays for a wake-up (an interrupt to
// another core, a VM exit on a virtual machine). Written at the end of the I/O phase, in a burst, the
// first answer wakes the client and the rest find it awake. Redis writes its replies the same way,
// before the event loop sleeps again.
import type { ServerResponse } from 'node:http';

const CONTENT_TYPE = 'application/json; charset=utf-8';

export interface Outbox {
  /** Queues an answer; it is written in the check phase of this turn of the event loop. */
  send(res: ServerResponse, status: number, body: string, retryAfter?: number): void;
}

/** Writes one JSON answer now, with its length (no chunked encoding). */
export function writeAnswer(res: ServerResponse, status: number, body: string, retryAfter?: number): void {
  const headers = ['content-type', CONTENT_TYPE, 'content-length', String(Buffer.byteLength(body))];
  if (retryAfter !== undefined) headers.push('retry-after', String(retryAfter));
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * @param onError called when writing one answer throws (the others are still written); Node reports a
 *   client that went away through the response's events, not by throwing, so this is for the unexpected
 */
export function createOutbox(onError: (err: unknown) => void): Outbox {
  // Flat, four slots per answer: no object per answer.
  let queued: Array<ServerResponse | number | string | undefined> = [];

  function flush(): void {
    const answers = queued;
    queued = [];
    for (let i = 0; i < answers.length; i += 4) {
      try {
        writeAnswer(
          answers[i] as ServerResponse,
          answers[i + 1] as number,
          answers[i + 2] as string,
          answers[i + 3] as number | undefined,
        );
      } catch (err) {
        onError(err);
      }
    }
  }

  return {
    send(res, status, body, retryAfter) {
      if (queued.length === 0) setImmediate(flush);
      queued.push(res, status, body, retryAfter);
    },
  };
}
