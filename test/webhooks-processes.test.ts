// Webhook deliveries with real server processes: a pending delivery survives kill -9 and is delivered
// after the restart with the same webhook-id; two instances on one PostgreSQL make each attempt once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'webhook-process-key-0123456789';
const BACKEND = process.env.AGENTSPLIT_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
const reachable = await postgresReachable();
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-webhooks-'));
const databases: TestDatabase[] = [];
const servers: ServerProcess[] = [];
const receivers: Receiver[] = [];

after(async () => {
  for (const s of servers) s.child.kill('SIGKILL');
  for (const s of servers) await s.exited;
  for (const r of receivers) await r.close();
  for (const d of databases) await d.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function postgresUrl(name: string): Promise<string> {
  const database = await createTestDatabase(name);
  databases.push(database);
  return database.url;
}

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const s = await startServer({ API_KEY, DATA_DIR: dir, ...env });
  servers.push(s);
  return s;
}

function experiment(slug: string) {
  return { slug, variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] };
}

async function until(what: string, probe: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const startedAt = Date.now();
  while (!(await probe())) {
    if (Date.now() - startedAt > ms) assert.fail(`${what} did not happen within ${ms} ms`);
    await sleep(50);
  }
}

test(`a pending delivery survives kill -9 and is delivered after the restart (${BACKEND})`, {
  skip: BACKEND === 'postgres' && !reachable,
}, async () => {
  const env = {
    DATABASE_URL:
      BACKEND === 'postgres' ? await postgresUrl('webhook_crash') : `sqlite:${join(dir, 'crash.db')}`,
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
  };
  // Refuses (503) until the first server is gone, then takes it.
  let up = false;
  const r = await startReceiver(() => (up ? 200 : 503));
  receivers.push(r);
  const first = await start(env);
  const hook = await call(first.baseUrl, 'POST', '/webhooks', { url: r.url, events: ['experiment.created'] });
  assert.equal(hook.status, 201);
  assert.equal((await call(first.baseUrl, 'POST', '/experiments', experiment('survivor'))).status, 201);
  await r.waitFor(1);
  await until('the first attempt recorded', async () => {
    const d = (await call(first.baseUrl, 'GET', `/webhooks/${hook.body.id}/deliveries`)).body.deliveries;
    return d[0]?.attempts >= 1 && d[0]?.status === 'pending';
  });
  first.child.kill('SIGKILL');
  assert.equal(await first.exited, 'SIGKILL');
  const before = r.received.length;
  up = true;

  const second = await start(env);
  await r.waitFor(before + 1);
  const last = r.received.at(-1)!;
  assert.equal(last.headers['webhook-id'], r.received[0]!.headers['webhook-id']);
  const payload = new Webhook(hook.body.secret).verify(last.body, last.headers as Record<string, string>) as {
    type: string;
    data: { experiment: string };
  };
  assert.deepEqual([payload.type, payload.data.experiment], ['experiment.created', 'survivor']);
  await until('the delivery marked delivered', async () => {
    const d = (await call(second.baseUrl, 'GET', `/webhooks/${hook.body.id}/deliveries`)).body.deliveries;
    return d[0]?.status === 'delivered';
  });
  second.child.kill('SIGTERM');
  assert.equal(await second.exited, 0);
});

test('two instances on one PostgreSQL make each attempt once', { skip: !reachable }, async () => {
  const env = { DATABASE_URL: await postgresUrl('webhook_instances'), WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2' };
  // Each event's first attempt gets 500, its second 200: two attempts per event, claimed by either.
  const r = await startReceiver((got, before) =>
    before.some((b) => b.headers['webhook-id'] === got.headers['webhook-id']) ? 200 : 500,
  );
  receivers.push(r);
  const a = await start(env);
  const b = await start(env);
  const hook = await call(a.baseUrl, 'POST', '/webhooks', { url: r.url, events: ['experiment.created'] });
  assert.equal(hook.status, 201);
  const EVENTS = 20;
  for (let i = 0; i < EVENTS; i++) {
    const via = i % 2 === 0 ? a : b;
    assert.equal((await call(via.baseUrl, 'POST', '/experiments', experiment(`twice-${i}`))).status, 201);
  }
  await until('every event delivered', async () => {
    const d = (await call(b.baseUrl, 'GET', `/webhooks/${hook.body.id}/deliveries`)).body
      .deliveries as Array<{
      status: string;
    }>;
    return d.length === EVENTS && d.every((x) => x.status === 'delivered');
  });
  // Past both instances' next rounds: nothing more comes.
  await sleep(2500);
  const perId = new Map<string, number>();
  for (const g of r.received) {
    const id = String(g.headers['webhook-id']);
    perId.set(id, (perId.get(id) ?? 0) + 1);
  }
  assert.equal(perId.size, EVENTS);
  assert.deepEqual([...new Set(perId.values())], [2], JSON.stringify([...perId]));
  const d = (await call(a.baseUrl, 'GET', `/webhooks/${hook.body.id}/deliveries`)).body.deliveries;
  for (const x of d) assert.equal(x.attempts, 2);
});
