// The `agentsplit` command line run as users run it (`node bin/agentsplit.mjs ...`, a child process)
// against the real server process on a temporary SQLite file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from './helpers/server.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(repoRoot, 'bin', 'agentsplit.mjs');
const ROOT_KEY = 'cli-test-root-key-0123456789';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with only the AGENTSPLIT_* variables given here (none inherited from the caller). */
function cli(args: string[], env: Record<string, string> = {}, bin = BIN): Promise<Run> {
  const base = { ...process.env };
  delete base.AGENTSPLIT_URL;
  delete base.AGENTSPLIT_API_KEY;
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: tmpdir(), // works from anywhere, not only from the checkout
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Exit code 1, nothing on stdout, and exactly one line on stderr matching `line`. */
function assertFailsWith(run: Run, line: RegExp | string): void {
  assert.equal(run.code, 1, `exit code (stderr: ${run.stderr})`);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.split('\n').length, 2, `one line on stderr, got: ${JSON.stringify(run.stderr)}`);
  if (typeof line === 'string') assert.equal(run.stderr, `${line}\n`);
  else assert.match(run.stderr, line);
}

function call(base: string, key: string, method: string, path: string, body?: unknown) {
  return fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as { port: number };
  await new Promise((res) => server.close(res));
  return port;
}

test('--help lists the commands and exits 0', async () => {
  const top = await cli(['--help']);
  assert.equal(top.code, 0);
  for (const text of ['keys', '--url', '--key', '--json', 'AGENTSPLIT_URL', 'AGENTSPLIT_API_KEY']) {
    assert.ok(top.stdout.includes(text), `--help mentions ${text}:\n${top.stdout}`);
  }
  for (const command of ['keys create', 'keys list', 'keys revoke']) {
    assert.ok(top.stdout.includes(`agentsplit ${command}`), `--help shows ${command}`);
  }
  const keys = await cli(['keys', '--help']);
  assert.equal(keys.code, 0);
  assert.match(keys.stdout, /create \[options\]/);
  assert.match(keys.stdout, /list/);
  assert.match(keys.stdout, /revoke <id>/);
});

test('keys create, list and revoke against a real server', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cli-'));
  const server = await startServer({
    API_KEY: ROOT_KEY,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
  });
  const base = server.baseUrl;
  const root = ['--url', base, '--key', ROOT_KEY];
  try {
    for (const slug of ['checkout-prompt', 'other']) {
      const created = await call(base, ROOT_KEY, 'POST', '/experiments', {
        slug,
        status: 'running',
        variants: [{ key: 'A', payload: { prompt: 'a' }, trafficPercent: 100 }],
      });
      assert.equal(created.status, 201);
    }

    let agentKey = '';
    let agentId = '';
    await t.test(
      'keys create prints the key, its secret once, and the secret works within its scopes',
      async () => {
        const run = await cli([
          ...root,
          'keys',
          'create',
          '--name',
          'support-agent',
          '--scopes',
          'assign, log',
          '--experiments',
          'checkout-prompt',
        ]);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stderr, '');
        agentKey = /^key\s+(ask_\S+)$/m.exec(run.stdout)?.[1] ?? '';
        agentId = /^id\s+(\S+)$/m.exec(run.stdout)?.[1] ?? '';
        assert.ok(agentKey && agentId, run.stdout);
        assert.match(run.stdout, /^name\s+support-agent$/m);
        assert.match(run.stdout, /^scopes\s+assign,log$/m);
        assert.match(run.stdout, /^experiments\s+checkout-prompt$/m);
        assert.match(run.stdout, /^rate limit\s+the server's default$/m);
        assert.match(run.stdout, /shown only once/);

        const assigned = await call(base, agentKey, 'POST', '/experiment/checkout-prompt/assign', {
          userId: 'u',
        });
        assert.equal(assigned.status, 200);
        const read = await call(base, agentKey, 'GET', '/experiments');
        assert.equal(read.status, 403);
        assert.match(((await read.json()) as { error: string }).error, /lacks the 'read' scope/);
        const otherExperiment = await call(base, agentKey, 'POST', '/experiment/other/assign', {
          userId: 'u',
        });
        assert.equal(otherExperiment.status, 403);
      },
    );

    let dashboard: { id: string; key: string; rateLimitPerSecond: number; experiments: null } | undefined;
    await t.test('keys create --json prints the API answer as is, with --rate-limit', async () => {
      const run = await cli([...root, '--json', 'keys', 'create', '--name', 'dashboard', '--scopes', 'read']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trimEnd().split('\n').length, 1, 'one JSON document, nothing else');
      const limited = await cli([
        ...root,
        'keys',
        'create',
        '--name',
        'slow-reader',
        '--scopes',
        'read',
        '--rate-limit',
        '50',
        '--json',
      ]);
      assert.equal(limited.code, 0, limited.stderr);
      dashboard = JSON.parse(limited.stdout);
      assert.equal(dashboard!.rateLimitPerSecond, 50);
      assert.equal(dashboard!.experiments, null);
      assert.match(dashboard!.key, /^ask_/);
      assert.equal((await call(base, dashboard!.key, 'GET', '/experiments')).status, 200);
    });

    await t.test(
      'keys list prints aligned columns: id, name, scopes, experiments, prefix, last used',
      async () => {
        const run = await cli([...root, 'keys', 'list']);
        assert.equal(run.code, 0, run.stderr);
        const lines = run.stdout.trimEnd().split('\n');
        assert.equal(lines.length, 4, run.stdout);
        const header = lines[0]!;
        assert.match(header, /^ID\s+NAME\s+SCOPES\s+EXPERIMENTS\s+PREFIX\s+LAST USED$/);
        const row = lines.find((l) => l.startsWith(agentId));
        assert.ok(row, run.stdout);
        assert.match(row, /\ssupport-agent\s+assign,log\s+checkout-prompt\s+ask_\S+\s+(never|\d{4}-\S+Z)$/);
        // Every column starts where its header does.
        for (const [heading, value] of [
          ['NAME', 'support-agent'],
          ['SCOPES', 'assign,log'],
          ['EXPERIMENTS', 'checkout-prompt'],
        ] as const) {
          assert.equal(row.indexOf(` ${value}`) + 1, header.indexOf(heading), heading);
        }
        const dashboardRow = lines.find((l) => l.startsWith(dashboard!.id));
        assert.match(dashboardRow!, /\sslow-reader\s+read\s+all\s/);
        assert.ok(!run.stdout.includes(agentKey), 'never a secret');
      },
    );

    await t.test('keys list --json prints GET /keys as is (before or after the command)', async () => {
      const direct = (await (await call(base, ROOT_KEY, 'GET', '/keys')).json()) as {
        keys: { id: string; name: string; lastUsedAt: string | null }[];
      };
      for (const args of [
        [...root, 'keys', 'list', '--json'],
        [...root, '--json', 'keys', 'list'],
      ]) {
        const run = await cli(args);
        assert.equal(run.code, 0, run.stderr);
        const listed = JSON.parse(run.stdout) as typeof direct;
        // lastUsedAt is written every few seconds, so it may move between the two reads.
        const strip = (body: typeof direct) => body.keys.map((k) => ({ ...k, lastUsedAt: undefined }));
        assert.deepEqual(strip(listed), strip(direct));
        assert.equal(listed.keys.length, 3);
      }
    });

    await t.test(
      'AGENTSPLIT_URL and AGENTSPLIT_API_KEY stand in for --url and --key; flags win',
      async () => {
        const run = await cli(['keys', 'list'], { AGENTSPLIT_URL: base, AGENTSPLIT_API_KEY: ROOT_KEY });
        assert.equal(run.code, 0, run.stderr);
        assert.ok(run.stdout.includes(agentId));
        const overridden = await cli(['--key', ROOT_KEY, 'keys', 'list', '--json'], {
          AGENTSPLIT_URL: base,
          AGENTSPLIT_API_KEY: 'not-the-key-0123456789',
        });
        assert.equal(overridden.code, 0, overridden.stderr);
        assert.equal((JSON.parse(overridden.stdout) as { keys: unknown[] }).keys.length, 3);
      },
    );

    await t.test('a wrong key exits 1 with the 401 line', async () => {
      assertFailsWith(
        await cli(['--url', base, '--key', 'wrong-key-0123456789', 'keys', 'list']),
        'agentsplit: 401 Unauthorized',
      );
    });

    await t.test('a key without admin exits 1 with the 403 line naming the missing scope', async () => {
      assertFailsWith(
        await cli(['--url', base, '--key', agentKey, 'keys', 'list']),
        "agentsplit: 403 this key lacks the 'admin' scope (it has: 'assign', 'log')",
      );
    });

    await t.test('the API rejecting a request exits 1 with its status and error text', async () => {
      assertFailsWith(
        await cli([...root, 'keys', 'create', '--name', 'x', '--scopes', 'assign,fly']),
        /^agentsplit: 400 unknown scope 'fly'.*\n$/,
      );
      assertFailsWith(await cli([...root, 'keys', 'create', '--name', 'x']), /^agentsplit: .*--scopes.*\n$/);
      assertFailsWith(
        await cli([...root, 'keys', 'create', '--name', 'x', '--scopes', 'read', '--rate-limit', 'fast']),
        /^agentsplit: .*--rate-limit.*whole number.*\n$/,
      );
    });

    await t.test('keys revoke revokes: the key then gets 401, and revoking again is a 404 line', async () => {
      const run = await cli([...root, 'keys', 'revoke', agentId]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `revoked key ${agentId}\n`);
      let status = 0;
      for (let i = 0; i < 20; i++) {
        status = (await call(base, agentKey, 'POST', '/experiment/checkout-prompt/assign', { userId: 'u' }))
          .status;
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 401);
      const listed = await cli([...root, 'keys', 'list', '--json']);
      assert.ok(!listed.stdout.includes(agentId));
      assertFailsWith(await cli([...root, 'keys', 'revoke', agentId]), /^agentsplit: 404 .*\n$/);
    });

    await t.test('keys revoke --json prints nothing and exits 0', async () => {
      const run = await cli([...root, '--json', 'keys', 'revoke', dashboard!.id]);
      assert.deepEqual(run, { code: 0, stdout: '', stderr: '' });
      assert.equal((await call(base, dashboard!.key, 'GET', '/experiments')).status, 401);
    });

    await t.test('an unknown id exits 1 with the 404 line', async () => {
      assertFailsWith(
        await cli([...root, 'keys', 'revoke', 'no-such-key']),
        /^agentsplit: 404 no key with id 'no-such-key'.*\n$/,
      );
    });
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unreachable server exits 1 with a cannot-reach line', async () => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  assertFailsWith(
    await cli(['--url', url, '--key', ROOT_KEY, 'keys', 'list']),
    `agentsplit: cannot reach ${url}: connection refused`,
  );
  assertFailsWith(
    await cli(['keys', 'list'], { AGENTSPLIT_URL: 'ftp://example.com', AGENTSPLIT_API_KEY: ROOT_KEY }),
    "agentsplit: invalid server address 'ftp://example.com': expected http:// or https://",
  );
});

test('a missing key exits 1 with a line saying how to pass one', async () => {
  const line = 'agentsplit: no API key: pass --key or set AGENTSPLIT_API_KEY';
  assertFailsWith(await cli(['keys', 'list']), line);
  assertFailsWith(await cli(['keys', 'list'], { AGENTSPLIT_API_KEY: '' }), line);
});

test('bin/agentsplit.mjs runs dist/ when it was built from the current sources, else the sources', async () => {
  // A miniature checkout: the real bin and hash script, a src/ and a dist/ that say which one ran.
  const fake = mkdtempSync(join(tmpdir(), 'agentsplit-bin-'));
  try {
    for (const dirName of ['bin', 'scripts', 'src/cli', 'dist/cli'])
      mkdirSync(join(fake, dirName), { recursive: true });
    cpSync(BIN, join(fake, 'bin', 'agentsplit.mjs'));
    cpSync(join(repoRoot, 'scripts', 'source-hash.mjs'), join(fake, 'scripts', 'source-hash.mjs'));
    symlinkSync(join(repoRoot, 'node_modules'), join(fake, 'node_modules'));
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])
      writeFileSync(join(fake, f), '{}');
    writeFileSync(join(fake, 'package.json'), '{"type": "module"}');
    writeFileSync(
      join(fake, 'src/cli/agentsplit.ts'),
      "const from: string = 'source';\nconsole.log(from);\n",
    );
    writeFileSync(join(fake, 'dist/cli/agentsplit.js'), "console.log('dist');\n");
    const fakeBin = join(fake, 'bin', 'agentsplit.mjs');

    assert.equal((await cli([], {}, fakeBin)).stdout, 'source\n', 'no stamp: the sources');
    const { sourceHash } = (await import(join(repoRoot, 'scripts', 'source-hash.mjs'))) as {
      sourceHash: (root: string) => string;
    };
    writeFileSync(join(fake, 'dist/.source-hash'), sourceHash(fake));
    assert.equal((await cli([], {}, fakeBin)).stdout, 'dist\n', 'current stamp: dist/');
    writeFileSync(join(fake, 'src/cli/agentsplit.ts'), "console.log('edited source');\n");
    assert.equal((await cli([], {}, fakeBin)).stdout, 'edited source\n', 'sources changed: the sources');
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});
