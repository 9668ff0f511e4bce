// At process exit the client flushes what is queued (Node's beforeExit), without keeping the process alive
// otherwise: its timers are unref'd.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { allResults, createExperiment, ROOT_KEY, repoRoot, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

test('results queued at the end of a script are delivered at beforeExit, and the script exits', async () => {
  const slug = await createExperiment(server, 'exit-flush');
  const t0 = performance.now();
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repoRoot, 'clients', 'js', 'test', 'fixtures', 'exit-child.ts'),
      server.baseUrl,
      ROOT_KEY,
      slug,
    ],
    { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 },
  );
  assert.equal(child.status, 0, child.stderr);
  assert.match(child.stdout, /queued 3/);
  assert.ok(performance.now() - t0 < 15_000, 'the flush interval (60 s) does not hold the process');
  const results = await allResults(server, slug);
  assert.equal(results.length, 3);
});
