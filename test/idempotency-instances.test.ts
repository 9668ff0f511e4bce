// Idempotency-Key claims across instances on one PostgreSQL (ADR 0016, issue 24): a request in flight
// holds its key against retries through another live instance (409 with Retry-After), and its claim dies
// with its instance: after SIGKILL the retry runs at once, through another instance or the restarted one,
// with no fixed wait (IDEMPOTENCY_CLAIM_TIMEOUT_MS stays at its 60 s default here).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'claims-test-key-0123456789';
/** The instance locks' namespace (src/store/postgres.ts): pg_locks shows it as classid, the id as objid. */
const INSTANCE_LOCK_NAMESPACE = 0x61677372;
const skip = !(await postgresReachable());
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-claims-'));
let database: TestDatabase | undefined;
const servers: ServerProcess[] = [];
const clients: pg.Client[] = [];

after(async () => {
  for (const s of servers) {
    s.child.kill('SIGKILL');
    await s.exited;
  }
  for (const c of clients) await c.end().catch(() => {});
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function log(base: string, key: string, request: string) {
  const res = await fetch(`${base}/experiment/claims/log`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ variantKey: 'A', input: { request } }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Polls `probe` every 20 ms until it returns true (no deadline but the test's own timeout). */
async function until(probe: () => Promise<boolean>): Promise<void> {
  while (!(await probe())) await new Promise((r) => setTimeout(r, 20));
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  clients.push(client);
  return client;
}

test('an Idempotency-Key claim holds while its instance lives and dies with it (PostgreSQL)', {
  skip,
}, async () => {
  database = await createTestDatabase('claims');
  const env = { API_KEY, DATABASE_URL: database.url, DATA_DIR: dir };
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  servers.push(a!, b!);
  const sql = await connect(database.url);

  const created = await fetch(`${a!.baseUrl}/experiments`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      slug: 'claims',
      status: 'running',
      variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
    }),
  });
  assert.equal(created.status, 201);
  await until(async () => {
    const res = await fetch(`${b!.baseUrl}/experiment/claims`, { headers: { 'x-api-key': API_KEY } });
    await res.arrayBuffer();
    return res.status === 200;
  });

  // Results cannot be written while this transaction holds the table: A's two requests claim their
  // keys, then wait in the database, in flight, until A is killed.
  const blocker = await connect(database.url);
  await blocker.query('begin');
  await blocker.query('lock table results in share mode');
  const inFlight = [log(a!.baseUrl, 'dies-1', 'r1'), log(a!.baseUrl, 'dies-2', 'r2')].map((p) =>
    p.catch(() => 'no answer'),
  );
  let owner = 0;
  await until(async () => {
    const { rows } = await sql.query<{ state: string; instance: number | null }>(
      `select state, instance from idempotency_keys where key in ('dies-1', 'dies-2')`,
    );
    owner = Number(rows[0]?.instance ?? 0);
    return rows.length === 2 && rows.every((r) => r.state === 'pending' && r.instance !== null);
  });
  const lockHolders = async (instance: number) =>
    Number(
      (
        await sql.query<{ n: string }>(
          `select count(*) as n from pg_locks where locktype = 'advisory' and granted
             and classid = $1 and objid = $2 and objsubid = 2`,
          [INSTANCE_LOCK_NAMESPACE, instance],
        )
      ).rows[0]!.n,
    );
  assert.equal(await lockHolders(owner), 1, 'the claims name an instance that holds its lock');

  // B is another live instance: A's claim holds against it, and says when to retry.
  const held = await log(b!.baseUrl, 'dies-1', 'r1');
  assert.equal(held.status, 409, JSON.stringify(held.body));
  assert.match(held.body.error, /still being processed/);
  assert.equal(held.headers.get('retry-after'), '1');

  a!.child.kill('SIGKILL');
  assert.equal(await a!.exited, 'SIGKILL');
  assert.deepEqual(await Promise.all(inFlight), ['no answer', 'no answer']);
  await blocker.query('rollback');
  // The killed process's session ends with it, and its lock with the session.
  await until(async () => (await lockHolders(owner)) === 0);

  // The retry through B runs at once: no 409, no 60 s wait.
  const retried = await log(b!.baseUrl, 'dies-1', 'r1');
  assert.equal(retried.status, 200, JSON.stringify(retried.body));
  assert.equal(retried.headers.get('idempotent-replayed'), null);

  // So does the other key's retry through A restarted (a new process, a new instance).
  const restarted = await startServer(env);
  servers.push(restarted);
  const again = await log(restarted.baseUrl, 'dies-2', 'r2');
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.headers.get('idempotent-replayed'), null);

  // Both are stored once, and a further retry replays the answer.
  const replay = await log(restarted.baseUrl, 'dies-1', 'r1');
  assert.equal(replay.status, 200);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body.logId, retried.body.logId);
  const { rows } = await sql.query<{ request: string; n: string }>(
    `select r.input->>'request' as request, count(*) as n from results r
       join experiments e on e.id = r.experiment_id where e.slug = 'claims' group by 1 order by 1`,
  );
  assert.deepEqual(
    rows.map((r) => [r.request, Number(r.n)]),
    [
      ['r1', 1],
      ['r2', 1],
    ],
  );
});
