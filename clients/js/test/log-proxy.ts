// A proxy in front of the test server that fails chosen log requests once, by their Idempotency-Key's
// ending: `refuse` answers 503 without forwarding; `drop` forwards, lets the server commit, then cuts the
// connection instead of answering. It notes every keyed request: its status, whether the server replayed.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  status: number;
  replayed: boolean;
  forwarded: boolean;
}

export interface LogProxy {
  url: string;
  /** Idempotency-Key → each request that carried it, in order. */
  seen: Map<string, Seen[]>;
  close(): void;
}

export function startLogProxy(upstream: string, fail: { refuse: string; drop: string }): Promise<LogProxy> {
  const seen = new Map<string, Seen[]>();
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = req.headers['idempotency-key'] as string | undefined;
      const first = key !== undefined && !seen.has(key);
      const note = (s: Seen) => key !== undefined && seen.set(key, [...(seen.get(key) ?? []), s]);
      if (first && key.endsWith(fail.refuse)) {
        note({ status: 503, replayed: false, forwarded: false });
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":"proxy: service unavailable"}');
        return;
      }
      const up = request(`${upstream}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          note({
            status: answer.statusCode ?? 0,
            replayed: answer.headers['idempotent-replayed'] === 'true',
            forwarded: true,
          });
          if (first && key.endsWith(fail.drop)) {
            req.socket.destroy(); // committed on the server; the client sees the connection cut
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(body));
        });
      });
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      up.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) =>
    proxy.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        seen,
        close: () => {
          proxy.closeAllConnections();
          proxy.close();
        },
      });
    }),
  );
}
