// The guardrail monitor with two real server processes on one PostgreSQL (issue 27): exactly one of them
// runs the rounds (the other counts them as a follower), a harmful guardrail pauses the experiment once
// with one guardrail.failed event; after the leader is killed (kill -9) the other takes over and pauses
// the next harmful experiment.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'monitor-instances-key-0123456789';
const skip = !(await postgresReachable());
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-monitor-'));
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

/** This instance's monitor rounds by outcome, from its /metrics. */
async function rounds(base: string): Promise<Record<string, number>> {
  const res = await fetch(`${base}/metrics`, { headers: { 'x-api-key': API_KEY } });
  const text = await res.text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^agentsplit_monitor_rounds_total\{outcome="(\w+)"\} (\d+)$/gm)) {
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A running experiment pausing on cost_usd, with 200 results per variant, B's cost 30% higher. */
async function harmful(base: string, slug: string): Promise<void> {
  const created = await call(base, 'POST', '/experiments', {
    slug,
    status: 'running',
    guardrailAction: 'pause',
    minimumUnits: 20,
    variants: [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
    ],
    metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const results = [];
  for (let i = 0; i < 200; i++) {
    for (const key of ['A', 'B']) {
      const cost = (1 + (i % 10) / 10) * (key === 'B' ? 1.3 : 1);
      results.push({ variantKey: key, metrics: { cost_usd: cost } });
    }
  }
  const logged = await call(base, 'POST', `/experiment/${slug}/logs`, { results });
  assert.equal(logged.status, 200, JSON.stringify(logged.body));
}

async function history(
  base: string,
  slug: string,
): Promise<Array<{ type: string; actor: { kind: string } }>> {
  const res = await call(base, 'GET', `/experiment/${slug}/events?limit=100`);
  assert.equal(res.status, 200);
  return res.body.events;
}

test('two instances: one leads the rounds, the pause happens once, a killed leader is replaced', {
  skip,
}, async () => {
  database = await createTestDatabase('monitor');
  const env = { API_KEY, DATABASE_URL: database.url, DATA_DIR: dir, MONITOR_INTERVAL_SECONDS: '1' };
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  servers.push(a!, b!);

  await harmful(a!.baseUrl, 'first');
  await until(
    'the pause',
    async () => (await call(b!.baseUrl, 'GET', '/experiment/first')).body.status === 'paused',
  );
  // A few more rounds on both: still one finding and one pause.
  const before = await rounds(a!.baseUrl);
  await until('three more rounds', async () => {
    const now = await rounds(a!.baseUrl);
    return (now.led ?? 0) + (now.follower ?? 0) >= (before.led ?? 0) + (before.follower ?? 0) + 3;
  });
  const events = await history(a!.baseUrl, 'first');
  assert.equal(events.filter((e) => e.type === 'guardrail.failed').length, 1, JSON.stringify(events));
  const changes = events.filter((e) => e.type === 'experiment.status_changed');
  assert.equal(changes.length, 1, JSON.stringify(events));
  assert.deepEqual(changes[0]!.actor, { kind: 'monitor' });

  // Exactly one instance led; the other followed.
  const [ra, rb] = [await rounds(a!.baseUrl), await rounds(b!.baseUrl)];
  assert.ok(ra.led! > 0 !== rb.led! > 0, JSON.stringify({ ra, rb }));
  const [leader, other] = ra.led! > 0 ? [a!, b!] : [b!, a!];
  assert.ok((ra.led! > 0 ? rb : ra).follower! > 0, JSON.stringify({ ra, rb }));

  // The leader dies without a word: the other takes the rounds over and pauses the next one.
  leader.child.kill('SIGKILL');
  await leader.exited;
  servers.splice(servers.indexOf(leader), 1);
  await harmful(other.baseUrl, 'second');
  await until(
    'the pause by the other instance',
    async () => (await call(other.baseUrl, 'GET', '/experiment/second')).body.status === 'paused',
  );
  assert.ok(((await rounds(other.baseUrl)).led ?? 0) > 0);
  const second = await history(other.baseUrl, 'second');
  assert.equal(second.filter((e) => e.type === 'experiment.status_changed').length, 1);
});
