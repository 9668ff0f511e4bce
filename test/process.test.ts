// The real process: first start prints the URL and a generated key; production without a key refuses.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startServer } from './helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'agentsplit-process-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a first start without API_KEY prints the URL and a generated key that works', async () => {
  const env: Record<string, string> = {
    DATA_DIR: dir,
    API_KEY: '',
    DATABASE_URL: '',
    NODE_ENV: 'development',
  };
  const server = await startServer(env);
  try {
    await new Promise((r) => setTimeout(r, 200));
    const m = /API key \(generated now[^)]*\): (\S+)/.exec(server.output());
    assert.ok(m, `no key printed in:\n${server.output()}`);
    const key = m[1]!;
    assert.equal(statSync(join(dir, 'api-key')).mode & 0o777, 0o600);
    const ok = await fetch(`${server.baseUrl}/experiments`, { headers: { 'x-api-key': key } });
    assert.equal(ok.status, 200);
    const denied = await fetch(`${server.baseUrl}/experiments`);
    assert.equal(denied.status, 401);
    assert.deepEqual(await denied.json(), { error: 'Unauthorized' });
    assert.ok(!server.output().includes(`"${key}"`), 'the key never appears in a log line');
  } finally {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  }
});

test('with NODE_ENV=production and no API_KEY the service refuses to start', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, NODE_ENV: 'production', API_KEY: '', DATA_DIR: dir, PORT: '0' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /API_KEY is not set/);
});

test('the production build (npm run build; node dist/main.js) serves with its writer thread and migrations', async () => {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'pipe' });
  const key = 'build-test-key-0123456789';
  const server = await startServer({ DATA_DIR: dir, API_KEY: key, DATABASE_URL: '' }, 60_000, 'dist/main.js');
  try {
    const call = (path: string, body: unknown) =>
      fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = await call('/experiments', {
      slug: 'built',
      status: 'running',
      variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
    });
    assert.equal(created.status, 201);
    assert.equal((await call('/experiment/built/assign', { userId: 'u' })).status, 200);
    const logged = await call('/experiment/built/log', { variantKey: 'A', metrics: { ok: true } });
    assert.equal(logged.status, 200, await logged.text());
  } finally {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  }
});
