// PostgreSQL goes down under load: assign keeps answering from memory, log answers 503 with
// Retry-After (never 500, never a 200 for an uncommitted row), and all recovers without a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { answerCall } from './helpers/call.js';
import {
  createPrivatePostgres,
  type PrivatePostgres,
  privatePostgresAvailable,
} from './helpers/private-postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'outage-test-key-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-outage-'));
let pg: PrivatePostgres | undefined;
let server: ServerProcess | undefined;

after(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  pg?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const call = answerCall(() => server!.baseUrl, API_KEY);

test('a PostgreSQL outage under load: assign serves, log says 503, everything recovers', {
  skip: !privatePostgresAvailable() && 'initdb/pg_ctl are not installed',
}, async (t) => {
  pg = await createPrivatePostgres();
  server = await startServer({ API_KEY, DATABASE_URL: pg.url, DATA_DIR: dir });
  const created = await call('POST', '/experiments', {
    slug: 'outage',
    status: 'running',
    variants: [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
    ],
  });
  assert.equal(created.status, 201);

  // Load: 16 clients log and assign until told to stop; every status is counted.
  const acked = new Set<string>();
  const statuses = new Map<string, number>();
  let running = true;
  const count = (what: string, status: number) =>
    statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
  const client = async (c: number) => {
    for (let i = 0; running; i++) {
      const log = await call('POST', '/experiment/outage/log', {
        variantKey: 'A',
        userId: `c${c}`,
        metrics: { i },
      });
      count('log', log.status);
      if (log.status === 200) acked.add(log.body.logId);
      else if (log.status === 503) {
        assert.ok(log.retryAfter, '503 carries Retry-After');
        assert.match(log.body.error, /unavailable/);
      }
      count('assign', (await call('POST', '/experiment/outage/assign', { userId: `c${c}-${i}` })).status);
      if (log.status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
  };
  const load = Promise.all(Array.from({ length: 16 }, (_, c) => client(c)));
  await new Promise((r) => setTimeout(r, 500));

  pg.stop();
  await t.test('while PostgreSQL is down: assign 200, log 503 with Retry-After, readyz 503', async () => {
    const assign = await call('POST', '/experiment/outage/assign', { userId: 'during' });
    assert.equal(assign.status, 200);
    const log = await call('POST', '/experiment/outage/log', { variantKey: 'A' });
    assert.equal(log.status, 503);
    assert.ok(Number(log.retryAfter) >= 1);
    const logs = await call('POST', '/experiment/outage/logs', { results: [{ variantKey: 'B' }] });
    assert.equal(logs.status, 503);
    const ready = await call('GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal((await call('GET', '/healthz')).status, 200);
    // The answers say the database is away, never where it lives (hole 7).
    const port = new URL(pg!.url).port;
    for (const [what, body] of [
      ['log', log.body],
      ['logs', logs.body],
      ['readyz', ready.body],
    ] as const) {
      const text = JSON.stringify(body);
      assert.deepEqual(Object.keys(body), ['error'], `${what}: ${text}`);
      for (const secret of ['127.0.0.1', port, 'ECONNREFUSED', 'connect ']) {
        assert.ok(!text.includes(secret), `${what}'s 503 reveals '${secret}': ${text}`);
      }
    }
  });
  await t.test('the outage is logged at warn with the driver error that caused it', async () => {
    // The server logs JSON lines on stdout (LOG_LEVEL=warn); outages at most one line a second.
    const deadline = Date.now() + 5000;
    let outageLines: Array<{ level: number; err?: { message?: string } }> = [];
    while (Date.now() < deadline) {
      outageLines = server!
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'database unavailable: answered 503');
      if (outageLines.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(outageLines.length > 0, `no outage line in the log:\n${server!.output().slice(-2000)}`);
    const causes = outageLines.map((l) => l.err?.message ?? '');
    assert.ok(
      causes.some(
        (m) => /ECONNREFUSED|ECONNRESET|terminat|connect|shutting down/i.test(m) && !/retry shortly/.test(m),
      ),
      `the log names the driver's error, not the client's message: ${JSON.stringify(causes)}`,
    );
    assert.ok(
      outageLines.every((l) => l.level === 40),
      'logged at warn',
    );
  });
  await new Promise((r) => setTimeout(r, 500));

  pg.start();
  await t.test('once PostgreSQL is back, logging resumes by itself and readyz passes', async () => {
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call('POST', '/experiment/outage/log', { variantKey: 'B' })).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 200, 'log did not recover within 30 s');
    assert.equal((await call('GET', '/readyz')).status, 200);
  });
  await new Promise((r) => setTimeout(r, 300));
  running = false;
  await load;
  t.diagnostic(`statuses under load: ${JSON.stringify(Object.fromEntries(statuses))}`);

  await t.test(
    'no 500 at any point, assign never failed, and every acknowledged result is stored',
    async () => {
      for (const key of statuses.keys())
        assert.match(key, /^(log (200|503)|assign 200)$/, `unexpected ${key}`);
      assert.ok((statuses.get('log 503') ?? 0) > 0, 'the outage was seen by the load');
      const res = await fetch(`${server!.baseUrl}/experiment/outage/results/export`, {
        headers: { 'x-api-key': API_KEY },
      });
      const stored = new Set(
        (await res.text())
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).logId as string),
      );
      const missing = [...acked].filter((id) => !stored.has(id));
      assert.deepEqual(missing, [], `${missing.length} of ${acked.size} acknowledged results were lost`);
    },
  );
});
