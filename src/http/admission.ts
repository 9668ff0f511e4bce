// Bounded in-flight work for heavy routes: beyond the limit, requests wait before their body is read,
// so memory stays flat under any number of connections and TCP pushes back on the clients.
import type { preParsingHookHandler } from 'fastify';

export interface Admission {
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

  return {
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    preParsing: async (request, reply, payload) => {
      if (active < limit) active++;
      else await new Promise<void>((resolve) => queue.push(resolve));
      // 'close' comes once the response is sent or the connection is gone, whatever happened in between.
      if (reply.raw.closed || request.raw.destroyed) handOver();
      else reply.raw.once('close', handOver);
      return payload;
    },
  };
}
