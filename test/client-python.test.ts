// The Python client (clients/python): its pytest suite against real server processes, and the example
// agent loop (examples/python_agent.py) against a server started here. Needs python3 with pytest and httpx.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from './helpers/server.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-client-python-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  output: string;
}

/** Runs a command to its end without blocking the event loop (a server child keeps draining its pipes). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  return new Promise((res) => {
    const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, output });
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      res({ code: -1, output: `${output}\n${err.message}` });
    });
  });
}

function requirePython(): void {
  const r = spawnSync('python3', ['-c', 'import httpx, regex, pytest'], { encoding: 'utf8' });
  if (r.status !== 0) {
    assert.fail(
      `the Python client's tests need python3 with httpx, regex and pytest: pip install httpx regex pytest\n${r.stderr ?? r.error?.message ?? ''}`,
    );
  }
}

test('the Python client: pytest clients/python passes', { timeout: 560_000 }, async (t) => {
  requirePython();
  const r = await run(
    'python3',
    ['-m', 'pytest', 'clients/python', '-q', '-p', 'no:cacheprovider'],
    process.env,
    540_000,
  );
  const summary = r.output.trim().split('\n').at(-1) ?? '';
  t.diagnostic(`pytest: ${summary}`);
  assert.equal(r.code, 0, `pytest failed:\n${r.output}`);
  assert.match(summary, /\d+ passed/);
});

test('examples/python_agent.py runs its loop against a server and prints a verdict', {
  timeout: 300_000,
}, async (t) => {
  requirePython();
  const key = 'example-root-key-0123456789abcdef';
  const server = await startServer({
    DATA_DIR: dir,
    API_KEY: key,
    DATABASE_URL: `sqlite:${join(dir, 'example.db')}`,
    RATE_LIMIT_PER_SECOND: '0',
  });
  try {
    const started = Date.now();
    const r = await run(
      'python3',
      ['examples/python_agent.py'],
      {
        ...process.env,
        AGENTSPLIT_URL: server.baseUrl,
        AGENTSPLIT_API_KEY: key,
        PYTHONPATH: join(repoRoot, 'clients', 'python', 'src'),
      },
      240_000,
    );
    assert.equal(r.code, 0, `the example failed:\n${r.output}`);
    assert.match(r.output, /^verdict: [a-z-]+: .+/m, r.output);
    assert.match(r.output, /200 users in/, r.output);
    // How long it took is reported, not asserted: timings belong to the bench (issue 24).
    t.diagnostic(`the example took ${Date.now() - started} ms`);
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
  }
});
