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
      // 'close' comes once the response is sent or the connection is gone, whatever happened in between.
      if (res.closed || res.req.destroyed) handOver();
      else res.once('close', handOver);
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
