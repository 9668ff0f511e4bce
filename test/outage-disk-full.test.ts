// SQLite's disk fills up under load: writes answer 503 with Retry-After (never 500), assign keeps
// answering, and once space is freed everything resumes by itself, with every acknowledged assign's
// exposure and every acknowledged result stored. The disk is a small tmpfs (needs root to mount).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { answerCall } from './helpers/call.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'disk-full-test-key-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'agentsplit-disk-full-'));
let server: ServerProcess | undefined;

function mountTmpfs(): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}
const mounted = process.platform === 'linux' && mountTmpfs();

after(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  if (mounted) execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const call = answerCall(() => server!.baseUrl, API_KEY);

/** Fills the file system with one file until it is full; returns its path. */
function fill(path: string): string {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    closeSync(fd);
  }
  return path;
}

test('SQLite on a full disk: 503 with Retry-After, assign serves, nothing acknowledged is lost', {
  skip: !mounted && 'cannot mount a tmpfs here (needs root on Linux)',
}, async (t) => {
  const data = join(dir, 'data');
  server = await startServer({ API_KEY, DATA_DIR: data, DATABASE_URL: `sqlite:${join(data, 'a.db')}` });
  const created = await call('POST', '/experiments', {
    slug: 'full',
    status: 'running',
    variants: [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));

  const assigned = new Set<string>();
  const logged = new Set<string>();
  const statuses = new Map<string, number>();
  const count = (what: string, status: number) =>
    statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
  let missingRetryAfter = 0;
  let running = true;
  const text = { text: 'x'.repeat(2000) };
  const client = async (c: number) => {
    for (let i = 0; running; i++) {
      const assign = await call('POST', '/experiment/full/assign', { userId: `u${c}-${i}` });
      count('assign', assign.status);
      if (assign.status === 200) assigned.add(assign.body.assignmentId);
      const log = await call('POST', '/experiment/full/log', {
        variantKey: assign.body?.variant ?? 'A',
        output: text,
        metrics: { i },
      });
      count('log', log.status);
      if (log.status === 200) logged.add(log.body.logId);
      if (log.status === 503 && !log.retryAfter) missingRetryAfter++;
      if (log.status !== 200) await sleep(20);
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
  await sleep(300);

  const filler = fill(join(dir, 'filler'));
  await t.test('the disk is full: log answers 503 with Retry-After, assign 200', async () => {
    const deadline = Date.now() + 20_000;
    let log = await call('POST', '/experiment/full/log', { variantKey: 'A', output: text });
    while (log.status === 200 && Date.now() < deadline) {
      // Pages freed inside the database file can take a few more rows: fill them.
      await call('POST', '/experiment/full/log', { variantKey: 'A', output: text });
      log = await call('POST', '/experiment/full/log', { variantKey: 'A', output: text });
    }
    assert.equal(log.status, 503, JSON.stringify(log.body));
    assert.ok(Number(log.retryAfter) >= 1);
    assert.deepEqual(Object.keys(log.body), ['error']);
    assert.equal((await call('POST', '/experiment/full/assign', { userId: 'during' })).status, 200);
    assert.equal((await call('GET', '/healthz')).status, 200);
  });
  await sleep(1000);
  unlinkSync(filler);

  await t.test('space freed: writes resume by themselves', async () => {
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call('POST', '/experiment/full/log', { variantKey: 'B' })).status;
      if (status === 200) break;
      await sleep(100);
    }
    assert.equal(status, 200, 'log did not recover within 30 s');
  });
  running = false;
  await load;
  t.diagnostic(`statuses under load: ${JSON.stringify(Object.fromEntries(statuses))}`);

  await t.test('no 500 at any point, and every 503 said when to retry', () => {
    for (const key of statuses.keys()) assert.match(key, /^(log (200|503)|assign 200)$/, `unexpected ${key}`);
    assert.ok((statuses.get('log 503') ?? 0) > 0, 'the full disk was seen by the load');
    assert.equal(missingRetryAfter, 0);
  });

  await t.test(
    'every acknowledged assign has its exposure stored, and every acknowledged result',
    async () => {
      const db = new Database(join(data, 'a.db'), { readonly: true, fileMustExist: true });
      try {
        let missing: string[] = [];
        const deadline = Date.now() + 30_000;
        do {
          const have = new Set<string>();
          const rows = db
            .prepare(
              "select b.exposures from exposure_batches b join experiments e on e.id = b.experiment_id where e.slug = 'full'",
            )
            .all() as Array<{ exposures: string }>;
          for (const r of rows) for (const e of JSON.parse(r.exposures) as string[][]) have.add(e[0]!);
          missing = [...assigned].filter((id) => !have.has(id));
          if (missing.length > 0) await sleep(250);
        } while (missing.length > 0 && Date.now() < deadline);
        assert.deepEqual(missing, [], `${missing.length} of ${assigned.size} exposures lost`);
      } finally {
        db.close();
      }
      const res = await fetch(`${server!.baseUrl}/experiment/full/results/export`, {
        headers: { 'x-api-key': API_KEY },
      });
      const stored = new Set(
        (await res.text())
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).logId as string),
      );
      const lost = [...logged].filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${logged.size} acknowledged results were lost`);
    },
  );
});
