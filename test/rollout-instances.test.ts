// Rollouts with two real server processes on one PostgreSQL (issue 38): one instance leads the monitor's
// rounds and moves the ramp; after the leader is killed (kill -9) mid-ramp the other takes over, and
// every step happens exactly once: none skipped, none repeated. Both instances serve each step's split.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'rollout-instances-key-0123456789';
const skip = !(await postgresReachable());
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-rollout-'));
let database: TestDatabase | undefined;
const servers: ServerProcess[] = [];

after(async () => {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function led(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { 'x-api-key': API_KEY } });
  const m = /^agentsplit_monitor_rounds_total\{outcome="led"\} (\d+)$/m.exec(await res.text());
  return Number(m?.[1] ?? 0);
}

let lastSeen: unknown;
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(lastSeen)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The share of 400 users each instance serves B. */
async function shareOfB(base: string, slug: string, users = 400): Promise<number> {
  let b = 0;
  for (let u = 0; u < users; u++) {
    const res = await call(base, 'POST', `/experiment/${slug}/assign`, { userId: `user-${u}` });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    if (res.body.variant === 'B') b++;
  }
  return b / users;
}

test('two instances: the leader moves the ramp, a killed leader is replaced, every step once', {
  skip,
}, async () => {
  database = await createTestDatabase('rollout');
  const env = { API_KEY, DATABASE_URL: database.url, DATA_DIR: dir, MONITOR_INTERVAL_SECONDS: '1' };
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  servers.push(a!, b!);
  const slug = 'ramp';
  const created = await call(a!.baseUrl, 'POST', '/experiments', {
    slug,
    status: 'running',
    assignment: 'sticky',
    variants: [
      { key: 'A', payload: { tone: 'formal' }, trafficPercent: 50 },
      { key: 'B', payload: { tone: 'friendly' }, trafficPercent: 50 },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // Steps of 3 seconds (minMinutes 0.05) and a 1-second round: the whole ramp in about 10 seconds.
  const started = await call(b!.baseUrl, 'POST', `/experiment/${slug}/rollout`, {
    variant: 'B',
    steps: [
      { percent: 10, minMinutes: 0.05 },
      { percent: 30, minMinutes: 0.05 },
      { percent: 60, minMinutes: 0.05 },
      { percent: 100 },
    ],
  });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  // The other instance serves the step too (it heard of the rollout through the database).
  await until('instance A serves the rollout', async () => (await shareOfB(a!.baseUrl, slug)) < 0.25);

  // Traffic while the ramp runs: a step with no calls since the monitor counted it is held.
  await until('the first step', async () => {
    await shareOfB(a!.baseUrl, slug, 100);
    lastSeen = (await call(a!.baseUrl, 'GET', `/experiment/${slug}/rollout`)).body;
    return (lastSeen as { step: number }).step === 1;
  });
  const [la, lb] = [await led(a!.baseUrl), await led(b!.baseUrl)];
  assert.ok(la > 0 !== lb > 0, JSON.stringify({ la, lb }));
  const [leader, other] = la > 0 ? [a!, b!] : [b!, a!];
  leader.child.kill('SIGKILL');
  await leader.exited;
  servers.splice(servers.indexOf(leader), 1);

  await until('the ramp completes on the other instance', async () => {
    await shareOfB(other.baseUrl, slug, 100);
    return (await call(other.baseUrl, 'GET', `/experiment/${slug}/rollout`)).body.state === 'completed';
  });
  assert.equal(await shareOfB(other.baseUrl, slug), 1);
  const r = (await call(other.baseUrl, 'GET', `/experiment/${slug}/rollout`)).body;
  assert.deepEqual(
    r.history.map((e: { type: string; data: { step: number; percent: number } }) => [
      e.type,
      e.data.step,
      e.data.percent,
    ]),
    [
      ['rollout.started', 0, 10],
      ['rollout.step_advanced', 1, 30],
      ['rollout.step_advanced', 2, 60],
      ['rollout.completed', 3, 100],
    ],
  );
  assert.ok((await led(other.baseUrl)) > 0);
});
