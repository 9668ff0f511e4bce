// A real webhook receiver for the tests: a node:http server on 127.0.0.1 that records every request and
// answers the statuses it is told, in turn (the last one from then on), or what a function decides;
// status 0 never answers (a receiver that hangs).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests arrived (rejects after `ms`). */
  waitFor(count: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Decides the status of a request, given the ones received before it. */
export type Answer = (got: Received, before: readonly Received[]) => number;

export async function startReceiver(statuses: number[] | Answer = [200]): Promise<Receiver> {
  const received: Received[] = [];
  let waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const status =
        typeof statuses === 'function'
          ? statuses(got, received)
          : statuses[Math.min(received.length, statuses.length - 1)]!;
      received.push(got);
      if (status !== 0) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    waitFor(count, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length >= count) {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== check);
            resolve(received);
          }
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== check);
          reject(new Error(`the receiver got ${received.length} requests, not ${count}, within ${ms} ms`));
        }, ms);
        waiters.push(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
