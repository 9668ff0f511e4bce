// The real process: first start prints the URL and a generated key; production without a key refuses;
// stopping `npm start` (SIGTERM to npm, or Ctrl-C's SIGINT) stops the server and frees its port.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
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

/** Whether something accepts TCP connections on the URL's port right now. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((res) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      res(true);
    });
    socket.once('error', () => res(false));
  });
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to the npm start process stops the server and frees its port`, async () => {
    const data = join(dir, `npm-start-${signal}`);
    // The same entry a person uses: npm start, with its prestart (ensure-deps, build) and start script.
    const npm = spawn('npm', ['start'], {
      cwd: process.cwd(),
      env: {
        ...process.env,
        DATA_DIR: data,
        API_KEY: 'npm-start-test-key-0123456789',
        DATABASE_URL: '',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const exited = new Promise<number | string>((res) =>
      npm.on('exit', (code, sig) => res(code ?? sig ?? -1)),
    );
    const url = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`npm start did not listen in 180 s:\n${log}`)), 180_000);
      const seen = (d: Buffer) => {
        log += d;
        const m = /listening on (http:\/\/\S+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          res(m[1]!);
        }
      };
      npm.stdout!.on('data', seen);
      npm.stderr!.on('data', seen);
      npm.on('exit', (code) => {
        clearTimeout(timer);
        rej(new Error(`npm start exited with ${code} before listening:\n${log}`));
      });
    });
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    await health.text();

    // The server's own pid (its JSON log lines carry it), to end it here should the test fail.
    const serverPid = Number(/"pid":(\d+)/.exec(log)?.[1]);
    try {
      npm.kill(signal);
      // npm passes the signal on to the server (the start script execs node: no shell in between),
      // waits for it to drain and exit, and exits itself.
      assert.equal(await exited, 0, log);
      assert.equal(
        await listening(url),
        false,
        `the server still listens on ${url} after npm exited:\n${log}`,
      );
      assert.match(
        log,
        new RegExp(`"signal":"${signal}".*shutting down|shutting down.*"signal":"${signal}"`),
      );
    } finally {
      try {
        if (serverPid > 0) process.kill(serverPid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
  });
}
