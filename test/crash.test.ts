// kill -9 right after the last acknowledged log: every logId that got a 200 must survive the restart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { startServer } from './helpers/server.js';

const API_KEY = 'crash-test-key-0123456789';
const CLIENTS = 32;
const TARGET_ACKS = 1000;

const BACKEND = process.env.AGENTSPLIT_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-crash-'));
const databases: TestDatabase[] = [];
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const d of databases) await d.drop();
});

async function databaseUrl(): Promise<string> {
  if (BACKEND === 'sqlite') return `sqlite:${join(dir, 'crash.db')}`;
  const database = await createTestDatabase('crash');
  databases.push(database);
  return database.url;
}

function call(base: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const skip = BACKEND === 'postgres' && !(await postgresReachable());

test(`every acknowledged result survives SIGKILL of the server process (${BACKEND})`, { skip }, async () => {
  const env = { API_KEY, DATABASE_URL: await databaseUrl(), DATA_DIR: dir };
  const first = await startServer(env);
  const acked = new Set<string>();
  try {
    const created = await call(first.baseUrl, 'POST', '/experiments', {
      slug: 'crash',
      status: 'running',
      variants: [
        { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
      ],
    });
    assert.equal(created.status, 201);

    let killed = false;
    const client = async (c: number) => {
      for (let i = 0; !killed; i++) {
        let res: Response;
        try {
          res = await call(first.baseUrl, 'POST', '/experiment/crash/log', {
            variantKey: i % 2 ? 'A' : 'B',
            userId: `client-${c}`,
            input: { question: `q-${c}-${i}`, padding: 'x'.repeat(200) },
            output: { answer: `a-${c}-${i}` },
            metrics: { latency_ms: 100 + i, tokens: 42, ok: true },
          });
        } catch {
          return; // the server is gone
        }
        if (res.status !== 200) return;
        const { logId } = (await res.json()) as { logId: string };
        acked.add(logId);
        if (acked.size >= TARGET_ACKS && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    assert.equal(await first.exited, 'SIGKILL');
  } finally {
    first.child.kill('SIGKILL');
  }
  assert.ok(acked.size >= TARGET_ACKS, `only ${acked.size} results were acknowledged`);

  const second = await startServer(env);
  try {
    const res = await call(second.baseUrl, 'GET', '/experiment/crash/results/export?format=ndjson');
    assert.equal(res.status, 200);
    const stored = new Set(
      (await res.text())
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { logId: string }).logId),
    );
    const missing = [...acked].filter((id) => !stored.has(id));
    assert.deepEqual(missing, [], `${missing.length} of ${acked.size} acknowledged results were lost`);
  } finally {
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, 'SIGTERM shuts down cleanly with exit code 0');
  }
});

test(`after SIGKILL, requests retried with their Idempotency-Key exist exactly once (${BACKEND})`, {
  skip,
}, async () => {
  // A claim left pending by the killed process (PostgreSQL) dies with it: no fixed wait is configured
  // here (IDEMPOTENCY_CLAIM_TIMEOUT_MS keeps its 60 s default), and no retry may find it still held.
  const env = { API_KEY, DATABASE_URL: await databaseUrl(), DATA_DIR: dir };
  const slug = 'crash-retry';
  const bodyOf = (c: number, i: number) => ({
    variantKey: i % 2 ? 'A' : 'B',
    userId: `client-${c}`,
    input: { request: `r-${c}-${i}`, padding: 'x'.repeat(200) },
    metrics: { latency_ms: 100 + i },
  });
  const send = (base: string, c: number, i: number) =>
    fetch(`${base}/experiment/${slug}/log`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', 'idempotency-key': `k-${c}-${i}` },
      body: JSON.stringify(bodyOf(c, i)),
    });

  const first = await startServer(env);
  /** logId of every acknowledged request, by request name. */
  const acked = new Map<string, string>();
  /** Requests sent without a 200: the client retries them with their key. */
  const unanswered: Array<[number, number]> = [];
  try {
    const created = await call(first.baseUrl, 'POST', '/experiments', {
      slug,
      status: 'running',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
    });
    assert.equal(created.status, 201);
    let killed = false;
    const client = async (c: number) => {
      for (let i = 0; ; i++) {
        if (killed) return;
        let res: Response;
        try {
          res = await send(first.baseUrl, c, i);
        } catch {
          unanswered.push([c, i]);
          return;
        }
        if (res.status !== 200) {
          unanswered.push([c, i]);
          return;
        }
        acked.set(`r-${c}-${i}`, ((await res.json()) as { logId: string }).logId);
        if (acked.size >= TARGET_ACKS / 2 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    assert.equal(await first.exited, 'SIGKILL');
  } finally {
    first.child.kill('SIGKILL');
  }

  const second = await startServer(env);
  try {
    // Every unanswered request again, with its key: answered at the first try. (Before issue 24 a claim
    // of the dead process held for 60 s on PostgreSQL: 44 of 68 retries were 409.)
    const retried = new Map<string, string>();
    await Promise.all(
      unanswered.map(async ([c, i]) => {
        const res = await send(second.baseUrl, c, i);
        assert.equal(res.status, 200, `retry of r-${c}-${i}: ${res.status} ${await res.clone().text()}`);
        retried.set(`r-${c}-${i}`, ((await res.json()) as { logId: string }).logId);
      }),
    );
    // And a few acknowledged ones, as a client that missed the answer would: replayed, not stored again.
    for (const name of [...acked.keys()].slice(0, 20)) {
      const [, c, i] = name.split('-').map(Number) as [number, number, number];
      const res = await send(second.baseUrl, c, i);
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { logId: string }).logId, acked.get(name));
    }
    const res = await call(second.baseUrl, 'GET', `/experiment/${slug}/results/export?format=ndjson`);
    assert.equal(res.status, 200);
    const stored = (await res.text())
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { logId: string; input: { request: string } });
    const byRequest = new Map<string, string[]>();
    for (const r of stored)
      byRequest.set(r.input.request, [...(byRequest.get(r.input.request) ?? []), r.logId]);
    const twice = [...byRequest].filter(([, ids]) => ids.length > 1);
    assert.deepEqual(twice, [], `${twice.length} requests were stored more than once`);
    for (const [name, logId] of [...acked, ...retried]) {
      assert.deepEqual(
        byRequest.get(name),
        [logId],
        `${name} is stored once, under the logId it was answered with`,
      );
    }
    assert.equal(stored.length, acked.size + retried.size);
  } finally {
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  }
});
