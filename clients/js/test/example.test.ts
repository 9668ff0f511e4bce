// examples/agent.ts against a server process: exits 0, quickly, and prints a verdict (remote and local).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT_KEY, repoRoot, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

function runExample(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'examples', 'agent.ts')], {
      cwd: repoRoot,
      env: { ...process.env, AGENTSPLIT_URL: server.baseUrl, AGENTSPLIT_API_KEY: ROOT_KEY, ...env },
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
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const VERDICT =
  /verdict: (winner|no-winner-yet|guardrail-failed|sample-ratio-mismatch|not-enough-data)\b.* — \S/;

test('examples/agent.ts creates the experiment, runs 200 users and prints the verdict', async () => {
  const t0 = performance.now();
  const run = await runExample({});
  const took = performance.now() - t0;
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.match(run.stdout, /created experiment support-prompt-demo/);
  assert.match(run.stdout, /200 users \(200 server\)/);
  assert.match(run.stdout, /failed 0, dropped 0/);
  assert.match(run.stdout, VERDICT);
  // Timings belong to the bench: reported, not asserted.
  console.log(`# the example took ${Math.round(took)} ms`);
  const results = await server.api('GET', '/experiment/support-prompt-demo/analysis');
  const counts = results.body.results as Record<string, number>;
  assert.equal(
    Object.values(counts).reduce((s, n) => s + n, 0),
    200,
  );
});

test('run again in local mode: the experiment is reused and assignments are local', async () => {
  const run = await runExample({ AGENTSPLIT_LOCAL: '1' });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.match(run.stdout, /reusing experiment support-prompt-demo/);
  assert.match(run.stdout, /200 users \(200 local\)/);
  assert.match(run.stdout, VERDICT);
});
