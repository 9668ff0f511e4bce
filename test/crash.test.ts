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
let database: TestDatabase | undefined;
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await database?.drop();
});

async function databaseUrl(): Promise<string> {
  if (BACKEND === 'sqlite') return `sqlite:${join(dir, 'crash.db')}`;
  database = await createTestDatabase('crash');
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
