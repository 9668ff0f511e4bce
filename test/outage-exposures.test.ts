// PostgreSQL cannot take writes for a while, three ways: it refuses connections (ALLOW_CONNECTIONS
// false, backends terminated), its backends are terminated again and again, and it restarts. Under load
// throughout: every answer is 200 or 503 with Retry-After (never 500), and afterwards every acknowledged
// assign's exposure and every acknowledged result is stored, counted before and after.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../src/store/index.js';
import { answerCall } from './helpers/call.js';
import {
  createPrivatePostgres,
  type PrivatePostgres,
  privatePostgresAvailable,
} from './helpers/private-postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'outage-exposures-key-0123456789';
const DATABASE = 'agentsplit_outage';
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-outage-exposures-'));
let server: ServerProcess | undefined;
let pgServer: PrivatePostgres | undefined;

after(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  pgServer?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const call = answerCall(() => server!.baseUrl, API_KEY);

/** An administrator's connection to the server's maintenance database (not the one under test). */
async function admin(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  return client;
}

async function terminateBackends(client: pg.Client): Promise<number> {
  const { rowCount } = await client.query(
    'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [DATABASE],
  );
  return rowCount ?? 0;
}

test('PostgreSQL refuses, drops and restarts under load: no 500, every acknowledged exposure and result stored', {
  skip: !privatePostgresAvailable() && 'initdb/pg_ctl are not installed',
}, async (t) => {
  pgServer = await createPrivatePostgres();
  const maintenance = pgServer.url;
  const serviceUrl = maintenance.replace(/\/postgres$/, `/${DATABASE}`);
  let root = await admin(maintenance);
  await root.query(`create database ${DATABASE}`);
  server = await startServer({ API_KEY, DATABASE_URL: serviceUrl, DATA_DIR: dir });
  for (const [slug, assignment] of [
    ['refused', 'random'],
    ['refused-sticky', 'sticky'],
  ] as const) {
    const created = await call('POST', '/experiments', {
      slug,
      status: 'running',
      assignment,
      variants: [
        { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
      ],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  }

  // Load: 12 clients assign (alternating the two experiments) and log until told to stop.
  const assigned = new Map<string, Set<string>>([
    ['refused', new Set()],
    ['refused-sticky', new Set()],
  ]);
  const logged = new Set<string>();
  const statuses = new Map<string, number>();
  const count = (what: string, status: number) =>
    statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
  const missingRetryAfter: string[] = [];
  let running = true;
  const client = async (c: number) => {
    for (let i = 0; running; i++) {
      const slug = i % 2 === 0 ? 'refused' : 'refused-sticky';
      const assign = await call('POST', `/experiment/${slug}/assign`, { userId: `u${c}-${i % 50}` });
      count('assign', assign.status);
      if (assign.status === 200) assigned.get(slug)!.add(assign.body.assignmentId);
      const log = await call('POST', `/experiment/${slug}/log`, {
        variantKey: assign.body?.variant ?? 'A',
        userId: `u${c}-${i % 50}`,
        metrics: { i },
      });
      count('log', log.status);
      if (log.status === 200) logged.add(log.body.logId);
      if (log.status === 503 && !log.retryAfter) missingRetryAfter.push('log');
      if (i % 10 === 0) {
        const read = await call('GET', `/experiment/${slug}/analysis`);
        count('analysis', read.status);
        if (read.status === 503 && !read.retryAfter) missingRetryAfter.push('analysis');
      }
      if (log.status !== 200) await sleep(20);
    }
  };
  const load = Promise.all(Array.from({ length: 12 }, (_, c) => client(c)));
  await sleep(500);

  await t.test('refused connections: writes and reads answer 503 with Retry-After, assign 200', async () => {
    await root.query(`alter database ${DATABASE} allow_connections false`);
    await terminateBackends(root);
    const deadline = Date.now() + 10_000;
    let log = await call('POST', '/experiment/refused/log', { variantKey: 'A' });
    while (log.status === 200 && Date.now() < deadline) {
      await terminateBackends(root);
      log = await call('POST', '/experiment/refused/log', { variantKey: 'A' });
    }
    assert.equal(log.status, 503, JSON.stringify(log.body));
    assert.ok(Number(log.retryAfter) >= 1, 'Retry-After on the 503');
    assert.deepEqual(Object.keys(log.body), ['error']);
    const analysis = await call('GET', '/experiment/refused/analysis');
    assert.equal(analysis.status, 503, JSON.stringify(analysis.body));
    assert.ok(Number(analysis.retryAfter) >= 1);
    assert.equal((await call('POST', '/experiment/refused/assign', { userId: 'during' })).status, 200);
    await sleep(2500);
    await root.query(`alter database ${DATABASE} allow_connections true`);
  });

  await t.test('the pool recovers by itself once connections are allowed again', async () => {
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call('POST', '/experiment/refused/log', { variantKey: 'B' })).status;
      if (status === 200) break;
      await sleep(100);
    }
    assert.equal(status, 200, 'log did not recover within 30 s');
  });

  await t.test('backends terminated again and again: only 200 or 503', async () => {
    const until = Date.now() + 3000;
    let terminated = 0;
    while (Date.now() < until) {
      terminated += await terminateBackends(root);
      await sleep(150);
    }
    assert.ok(terminated > 0, 'no backend was terminated');
  });

  await t.test('a restart of PostgreSQL', async () => {
    await root.end();
    pgServer!.stop();
    await sleep(1500);
    pgServer!.start();
    root = await admin(maintenance);
  });

  await sleep(1000);
  running = false;
  await load;
  t.diagnostic(`statuses under load: ${JSON.stringify(Object.fromEntries(statuses))}`);

  await t.test('no 500 at any point, assign never failed, and every 503 said when to retry', () => {
    for (const key of statuses.keys()) {
      assert.match(key, /^((log|analysis) (200|503)|assign 200)$/, `unexpected ${key}`);
    }
    assert.ok((statuses.get('log 503') ?? 0) > 0, 'the outage was seen by the load');
    assert.deepEqual(missingRetryAfter, []);
  });

  await t.test('every acknowledged assign has its exposure stored, once', async () => {
    // The buffered exposures are written within a retry or two once the database is back.
    const store = await openStore({ kind: 'postgres', url: serviceUrl, poolSize: 2 });
    try {
      for (const [slug, ids] of assigned) {
        const experiment = await store.findExperiment(slug);
        assert.ok(experiment);
        let missing: string[] = [];
        let stored: string[] = [];
        const deadline = Date.now() + 30_000;
        do {
          stored = (await store.listExposures(experiment.id)).map((e) => e.assignmentId);
          const have = new Set(stored);
          missing = [...ids].filter((id) => !have.has(id));
          if (missing.length > 0) await sleep(250);
        } while (missing.length > 0 && Date.now() < deadline);
        t.diagnostic(`${slug}: ${ids.size} acknowledged assigns, ${stored.length} exposures stored`);
        assert.deepEqual(missing, [], `${slug}: ${missing.length} of ${ids.size} exposures lost`);
        assert.equal(new Set(stored).size, stored.length, `${slug}: an exposure is stored twice`);
      }
    } finally {
      await store.close();
    }
  });

  await t.test('every acknowledged result is stored', async () => {
    const stored = new Set<string>();
    for (const slug of assigned.keys()) {
      // The server's pool may still hold connections the restart broke: a read on one answers 503
      // (with Retry-After), and the export is asked again, as a client would.
      let res: Response;
      const deadline = Date.now() + 30_000;
      for (;;) {
        res = await fetch(`${server!.baseUrl}/experiment/${slug}/results/export`, {
          headers: { 'x-api-key': API_KEY },
        });
        if (res.status !== 503 || Date.now() > deadline) break;
        await res.text();
        await sleep(500);
      }
      const text = await res.text();
      assert.equal(res.status, 200, `export of ${slug}: ${text.slice(0, 300)}`);
      for (const line of text.split('\n').filter(Boolean)) stored.add(JSON.parse(line).logId);
    }
    const missing = [...logged].filter((id) => !stored.has(id));
    assert.deepEqual(missing, [], `${missing.length} of ${logged.size} acknowledged results were lost`);
  });

  await t.test('no exposure was dropped or lost, by the server’s own count', async () => {
    const metrics = await fetch(`${server!.baseUrl}/metrics`, { headers: { 'x-api-key': API_KEY } });
    const text = await metrics.text();
    const dropped = /^agentsplit_exposures_dropped_total (\d+)/m.exec(text);
    assert.equal(Number(dropped?.[1] ?? 0), 0, 'exposures dropped');
    assert.ok(!/exposures could not be written/.test(server!.output()), server!.output().slice(-2000));
  });
  await root.end();
});
