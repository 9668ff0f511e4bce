// Saved groups across two real server processes on one PostgreSQL: a group saved, replaced or deleted
// through one instance is what the other answers within a couple of seconds (the change bumps the
// revision both watch, and a reload reads groups with experiments).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createTestDatabase, postgresReachable, type TestDatabase } from './helpers/postgres.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'groups-instances-key-0123456789';
const skip = !(await postgresReachable());
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-groups-multi-'));
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

async function within(ms: number, what: string, probe: () => Promise<boolean>): Promise<void> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return;
    if (performance.now() - start > ms) assert.fail(`${what} was not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a group changed through one instance is what the other answers', { skip }, async () => {
  database = await createTestDatabase('groups_multi');
  const env = { API_KEY, DATABASE_URL: database.url, DATA_DIR: dir };
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  servers.push(a!, b!);

  const put = await call(a!.baseUrl, 'PUT', '/groups/beta', { values: ['u1', 'u2', 3] });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  await within(3000, 'the new group on the other instance', async () => {
    const got = await call(b!.baseUrl, 'GET', '/groups/beta');
    return got.status === 200 && JSON.stringify(got.body.values) === '["u1","u2",3]';
  });

  assert.equal((await call(a!.baseUrl, 'PUT', '/groups/beta', { values: ['u9'] })).status, 200);
  await within(3000, 'the replaced values on the other instance', async () => {
    const got = await call(b!.baseUrl, 'GET', '/groups/beta');
    return JSON.stringify(got.body.values) === '["u9"]';
  });

  assert.equal((await call(b!.baseUrl, 'DELETE', '/groups/beta')).status, 204);
  await within(3000, 'the deletion on the first instance', async () => {
    const got = await call(a!.baseUrl, 'GET', '/groups/beta');
    return got.status === 404;
  });
  const list = await call(a!.baseUrl, 'GET', '/groups');
  assert.deepEqual(list.body, { groups: [] });
});
