// Answers the fast path has ready, written together once the event loop has handled every request
// that arrived with them (ADR 0010).
//
// Written one by one, each answer on loopback wakes its client at once; a client that is quicker than
// the server goes back to sleep after each one, so every answer pays for a wake-up (an interrupt to
// another core, a VM exit on a virtual machine). Written at the end of the I/O phase, in a burst, the
// first answer wakes the client and the rest find it awake. Redis writes its replies the same way,
// before the event loop sleeps again.
import type { ServerResponse } from 'node:http';
import { type Answer, writeAnswer } from './writer.js';

export interface Outbox {
  /**
   * Queues an answer; it is written in the check phase of this turn of the event loop, or at once with
   * the others waiting when it is the `maxWaiting`th.
   */
  send(res: ServerResponse, status: number, body: string, retryAfter?: number): void;
  /** Writes an answer now (one that waited for a commit: those settle, and leave, together already). */
  write(res: ServerResponse, status: number, body: string, retryAfter?: number): void;
  /** `send` for any answer. */
  queue(res: ServerResponse, answer: Answer): void;
  /** `write` for any answer. */
  writeNow(res: ServerResponse, answer: Answer): void;
}

function jsonAnswer(status: number, body: string, retryAfter?: number): Answer {
  return {
    status,
    body,
    headers: retryAfter === undefined ? undefined : { 'retry-after': String(retryAfter) },
  };
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
  // Flat, two slots per answer.
  let queued: Array<ServerResponse | Answer> = [];
  let scheduled = false;

  /** Writes an answer now; one that throws is reported and its connection dropped (no client waits forever). */
  function writeNow(res: ServerResponse, answer: Answer): void {
    try {
      writeAnswer(res, answer);
    } catch (err) {
      onError(err);
      res.destroy();
    }
  }

  function flush(): void {
    const answers = queued;
    queued = [];
    for (let i = 0; i < answers.length; i += 2) {
      writeNow(answers[i] as ServerResponse, answers[i + 1] as Answer);
    }
  }

  function queue(res: ServerResponse, answer: Answer): void {
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        flush();
      });
    }
    queued.push(res, answer);
    if (queued.length >= 2 * maxWaiting) flush();
  }

  return {
    send: (res, status, body, retryAfter) => queue(res, jsonAnswer(status, body, retryAfter)),
    write: (res, status, body, retryAfter) => writeNow(res, jsonAnswer(status, body, retryAfter)),
    queue,
    writeNow,
  };
}
