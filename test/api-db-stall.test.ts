// Issue 34 item 4: every database wait ends. PostgreSQL reached through a TCP proxy on 127.0.0.1 that can
// stall: it keeps every connection open and forwards nothing (a stalled network path), then resumes. While
// it stalls, reads and writes answer 503 with Retry-After within the statement timeout plus a second (here
// 1 s + 1 s; waiting for a connection at most DATABASE's 3 s connect timeout), /readyz answers 503 within
// 1 s and /healthz 200; once it resumes, the pool has dropped the silent connections and requests succeed.
// Only timing bounds that are generous multiples are asserted (a busy 2-core machine).
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Runtime, startRuntime } from '../src/runtime.js';
import { API_KEY, Api, assertError, BACKEND, SKIP_BACKEND, send } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/postgres.js';

const STATEMENT_TIMEOUT_MS = 1000;
/** The documented bound for a request: the statement timeout + 1 s, or the 3 s wait for a connection. */
const BOUND_MS = 3000;

/** A TCP proxy whose every connection can stop forwarding (both ways, sockets kept open) and resume. */
class StallingProxy {
  private readonly server: Server;
  private stalled = false;
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    for (const flush of this.held.splice(0)) flush();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (this.stalled) this.held.push(() => to.destroyed || to.write(chunk));
        else if (!to.destroyed) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
  }
}

describe('a stalled database', {
  skip: SKIP_BACKEND || (BACKEND !== 'postgres' && 'PostgreSQL only'),
}, () => {
  let database: TestDatabase;
  let proxy: StallingProxy;
  let runtime: Runtime;
  let api: Api;
  const slug = 'stall';

  before(async () => {
    database = await createTestDatabase('stall');
    const real = new URL(database.url);
    proxy = new StallingProxy({ host: real.hostname, port: Number(real.port || 5432) });
    const through = new URL(database.url);
    through.hostname = '127.0.0.1';
    through.port = String(await proxy.listen());
    runtime = await startRuntime({
      apiKey: API_KEY,
      database: {
        kind: 'postgres',
        url: through.toString(),
        poolSize: 4,
        statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      },
    });
    await runtime.app.listen({ port: 0, host: '127.0.0.1' });
    api = new Api(runtime, true);
    const created = await api.call({
      method: 'POST',
      url: '/experiments',
      body: {
        slug,
        name: slug,
        status: 'running',
        variants: [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'B', payload: {}, trafficPercent: 50 },
        ],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
  });

  after(async () => {
    proxy?.resume();
    await runtime?.close();
    await proxy?.close();
    await database?.drop();
  });

  const log = () =>
    api.call({
      method: 'POST',
      url: `/experiment/${slug}/log`,
      body: { variantKey: 'A', metrics: { x: 1 } },
    });
  const timed = async <T>(work: Promise<T>): Promise<{ value: T; ms: number }> => {
    const started = performance.now();
    const value = await work;
    return { value, ms: performance.now() - started };
  };

  test('reads, writes and /readyz answer 503 with Retry-After in bounded time; /healthz 200', async () => {
    assert.equal((await log()).statusCode, 200);
    proxy.stall();
    const stallStarted = performance.now();
    const [read, write, ready, health] = await Promise.all([
      timed(api.call({ method: 'GET', url: `/experiment/${slug}/results?limit=5` })),
      timed(log()),
      timed(send(api.port, { method: 'GET', url: '/readyz', headers: {} })),
      timed(send(api.port, { method: 'GET', url: '/healthz', headers: {} })),
    ]);
    console.log(
      `# stalled: read ${Math.round(read.ms)} ms, write ${Math.round(write.ms)} ms, /readyz ${Math.round(ready.ms)} ms, /healthz ${Math.round(health.ms)} ms`,
    );
    assert.equal(health.value.statusCode, 200);
    assertError(ready.value, 503, /database is unreachable/);
    assert.ok(
      ready.ms < 3 * 1000,
      `/readyz answered in ${Math.round(ready.ms)} ms (bound 1 s, asserted 3 s)`,
    );
    for (const [name, r] of [
      ['read', read],
      ['write', write],
    ] as const) {
      assert.equal(r.value.statusCode, 503, `${name}: ${r.value.body}`);
      assert.ok(Number(r.value.headers['retry-after']) >= 1, `${name} has Retry-After`);
      assert.ok(
        r.ms < 3 * BOUND_MS,
        `${name} answered in ${Math.round(r.ms)} ms (bound ${BOUND_MS} ms, asserted 3×)`,
      );
    }
    assert.ok(performance.now() - stallStarted < 3 * BOUND_MS + 1000, 'all answered while the stall lasted');
  });

  test('once the path resumes, requests succeed again (no silent connection is handed out)', async () => {
    proxy.resume();
    let ok = 0;
    let tries = 0;
    // Ten writes in a row must succeed within a generous time: the pool opened fresh connections.
    const deadline = performance.now() + 20_000;
    while (ok < 10 && performance.now() < deadline) {
      tries++;
      const res = await log();
      ok = res.statusCode === 200 ? ok + 1 : 0;
    }
    assert.equal(ok, 10, `10 writes in a row succeeded (after ${tries} tries)`);
    const ready = await send(api.port, { method: 'GET', url: '/readyz', headers: {} });
    assert.equal(ready.statusCode, 200, ready.body);
    const results = await api.call({ method: 'GET', url: `/experiment/${slug}/results?limit=100` });
    assert.equal(results.statusCode, 200, results.body);
    assert.ok(results.json().results.length >= 11);
  });
});
