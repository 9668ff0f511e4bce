// `agentsplit complete <slug> --ship <variant|none> --note <text>` and the decision line of `experiments
// show` (issue 36, item 5), run as users run them (`node bin/agentsplit.mjs`, a child process) against the
// real server process on a temporary SQLite file; what they print is checked against what the API holds.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from './helpers/server.js';

const BIN = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bin', 'agentsplit.mjs');
const ROOT_KEY = 'cli-decision-root-key-0123456789';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI with no AGENTSPLIT_* variables inherited. */
function cli(args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env.AGENTSPLIT_URL;
  delete env.AGENTSPLIT_API_KEY;
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: tmpdir(), env });
    child.stdin.end('');
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

function assertFailsWith(run: Run, line: RegExp): void {
  assert.equal(run.code, 1, `exit code (stdout: ${run.stdout})`);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.split('\n').length, 2, `one line on stderr, got: ${JSON.stringify(run.stderr)}`);
  assert.match(run.stderr, line);
}

function assertOk(run: Run): string {
  assert.equal(run.code, 0, `exit code (stderr: ${run.stderr})`);
  assert.equal(run.stderr, '');
  return run.stdout;
}

test('complete --ship --note from the command line against a real server', async (t) => {
  const help = await cli(['complete', '--help']);
  assert.match(help.stdout, /--ship <variant>/);
  assert.match(help.stdout, /--note <text>/);

  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cli-decision-'));
  const server = await startServer({
    API_KEY: ROOT_KEY,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
    RATE_LIMIT_PER_SECOND: '0',
  });
  const base = server.baseUrl;
  const run = (...args: string[]) => cli(['--url', base, '--key', ROOT_KEY, ...args]);
  const api = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  const create = (slug: string) =>
    api('POST', '/experiments', {
      slug,
      status: 'running',
      variants: [
        { key: 'A', payload: { prompt: 'helpful' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'concise' }, trafficPercent: 50 },
      ],
    });
  type Decision = { variant: string; note: string; decidedAt: string } | null;
  const decisionOf = async (slug: string) =>
    (await api<{ decision: Decision; status: string }>('GET', `/experiment/${slug}`)).decision;
  try {
    await t.test('--ship and --note complete it with the decision; show prints it', async () => {
      await create('checkout');
      const before = assertOk(await run('experiments', 'show', 'checkout'));
      assert.doesNotMatch(before, /^decision/m);
      const out = assertOk(await run('complete', 'checkout', '--ship', 'B', '--note', 'as good, cheaper'));
      assert.equal(out, 'experiment checkout is now completed: shipped B: as good, cheaper\n');
      const decision = await decisionOf('checkout');
      assert.deepEqual([decision?.variant, decision?.note], ['B', 'as good, cheaper']);
      const shown = assertOk(await run('experiments', 'show', 'checkout'));
      assert.match(
        shown,
        new RegExp(`^decision +shipped B: as good, cheaper \\(${decision!.decidedAt}\\)$`, 'm'),
      );
      // On a completed experiment, --ship corrects it.
      const fixed = assertOk(await run('complete', 'checkout', '--ship', 'none'));
      assert.equal(fixed, 'experiment checkout is now completed: no change shipped\n');
      assert.equal((await decisionOf('checkout'))?.variant, 'none');
    });

    await t.test(
      'complete alone: no decision; --note alone and an unknown variant are one line',
      async () => {
        await create('plain');
        assertFailsWith(
          await run('complete', 'plain', '--note', 'why'),
          /^agentsplit: --note goes with --ship/,
        );
        assertFailsWith(
          await run('complete', 'plain', '--ship', 'C'),
          /^agentsplit: 400 decision\.variant must be one of the variants \(A, B\) or 'none'/,
        );
        assert.equal(assertOk(await run('complete', 'plain')), 'experiment plain is now completed\n');
        assert.equal(await decisionOf('plain'), null);
      },
    );
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
