// Bounded in-flight work for heavy routes: beyond the limit, requests wait before their body is read,
// so memory stays flat under any number of connections and TCP pushes back on the clients.
import type { ServerResponse } from 'node:http';
import type { preParsingHookHandler } from 'fastify';

export interface Admission {
  /** Runs `read` once this request holds a slot; the slot comes back when `res` closes. */
  admit(res: ServerResponse, read: () => void): void;
  /** The same, as Fastify's preParsing hook. */
  preParsing: preParsingHookHandler;
  /** Requests holding a slot now. */
  readonly active: number;
  /** Requests waiting for one. */
  readonly waiting: number;
}

export function createAdmission(limit: number): Admission {
  let active = 0;
  const queue: Array<() => void> = [];

  /** Gives the slot to the next waiting request, or frees it. */
  const handOver = () => {
    const next = queue.shift();
    if (next) next();
    else active--;
  };

  const admit = (res: ServerResponse, read: () => void): void => {
    const enter = () => {
      // The slot comes back once, at the response's 'close' or the socket's, whichever is first: a
      // pipelined request queued behind an unfinished answer gets no 'close' of its own when the
      // connection dies (Node 20), and would keep its slot for good.
      const socket = res.req.socket;
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        res.off('close', release);
        socket?.off('close', release);
        handOver();
      };
      if (res.closed || res.req.destroyed || socket?.destroyed) release();
      else {
        res.once('close', release);
        socket?.once('close', release);
      }
      read();
    };
    if (active < limit) {
      active++;
      enter();
    } else queue.push(enter);
  };

  return {
    admit,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    preParsing: (_request, reply, payload, done) => {
      admit(reply.raw, () => done(null, payload));
    },
  };
}
