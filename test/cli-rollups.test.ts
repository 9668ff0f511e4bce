// `npm run rollups:rebuild` against a real server's SQLite file: after a stream of sticky results and
// feedback corrections, the rebuilt rollups answer the same analysis as the live ones (per-user units,
// hourly buckets, feedback and the analysis by segment, per user, included), on the database the server
// wrote; and rows an earlier release left without a min and max get theirs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { makeTempDir, removeTempDir } from './helpers/app.js';
import { seededRandom } from './helpers/random.js';
import { startServer } from './helpers/server.js';

const KEY = 'cli-rollups-key-0123456789';

/**
 * A server on a fresh SQLite file, a JSON caller that asserts a 2xx, and `rebuild`: stop the server, run
 * `npm run rollups:rebuild` on its file (returns its output), and start it again on the same file.
 */
async function onSqliteFile() {
  const dir = makeTempDir();
  const env = { API_KEY: KEY, DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` };
  let server = await startServer(env);
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(server.baseUrl + path, {
      method,
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const stop = async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  };
  /** Runs `edit` on the database file while the server is stopped (rows as an earlier release left them). */
  const offline = async (edit: (db: BetterSqlite3.Database) => void) => {
    await stop();
    const db = new BetterSqlite3(join(dir, 'db.sqlite'));
    try {
      edit(db);
    } finally {
      db.close();
    }
    server = await startServer(env);
  };
  const rebuild = async (): Promise<string> => {
    await stop();
    const rebuilt = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/rollups.ts'], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    assert.equal(rebuilt.status, 0, rebuilt.stderr);
    server = await startServer(env);
    return rebuilt.stdout;
  };
  const close = async () => {
    await stop();
    removeTempDir(dir);
  };
  return { call, rebuild, offline, close };
}

const STICKY = {
  status: 'running',
  assignment: 'sticky',
  variants: [
    { key: 'A', payload: {}, trafficPercent: 50 },
    { key: 'B', payload: {}, trafficPercent: 50 },
  ],
  metrics: [
    { name: 'score', direction: 'increase', role: 'primary' },
    { name: 'latency', direction: 'decrease', statistic: 'p95' },
  ],
  segments: ['plan'],
};

const PLANS = ['free', 'pro', 'team'];

test('npm run rollups:rebuild reproduces the live analysis (per-user units, feedback, time series)', async () => {
  const { call, rebuild, close } = await onSqliteFile();
  try {
    await call('POST', '/experiments', { slug: 'rebuild', ...STICKY });
    const random = seededRandom(15);
    for (let u = 0; u < 60; u++) {
      const a = await call('POST', '/experiment/rebuild/assign', {
        userId: `u${u}`,
        context: { plan: PLANS[u % 3] },
      });
      const calls = 1 + Math.floor(random() * 3);
      for (let c = 0; c < calls; c++) {
        // Mostly the assign's plan (by its assignmentId); some calls say another in their own context.
        const own = random() < 0.2 ? { context: { plan: PLANS[(u + 1) % 3] } } : {};
        await call('POST', '/experiment/rebuild/log', {
          variantKey: a.variant,
          userId: `u${u}`,
          assignmentId: a.assignmentId,
          ...own,
          metrics: {
            score: Math.round(random() * 100) / 4,
            ok: random() < 0.5,
            latency: 100 + random() * 900,
          },
        });
      }
      // A rating, then a correction of it: only the second counts.
      await call('POST', '/experiment/rebuild/feedback', {
        assignmentId: a.assignmentId,
        metrics: { rating: 1 },
      });
      await call('POST', '/experiment/rebuild/feedback', {
        assignmentId: a.assignmentId,
        metrics: { rating: 1 + (u % 5) },
      });
    }
    const live = await call('GET', '/experiment/rebuild/analysis?method=bayesian');
    const liveSeries = await call(
      'GET',
      '/experiment/rebuild/analysis/timeseries?metric=score&interval=hour',
    );
    const liveSegments = await call('GET', '/experiment/rebuild/analysis?segment=plan');
    assert.deepEqual(
      liveSegments.segments.map((s: { unit: string }) => s.unit),
      ['user', 'user', 'user'],
    );
    assert.match(
      await rebuild(),
      /rebuilt the rollups of every experiment from \d+ results and 60 exposures/,
    );
    const after = await call('GET', '/experiment/rebuild/analysis?method=bayesian');
    assert.equal(after.unit, 'user');
    assert.equal(live.unit, 'user');
    const rating = after.metrics.find((m: { name: string }) => m.name === 'rating');
    assert.equal(rating.variants[0].n + rating.variants[1].n, 60, 'one rating per user, the correction');
    // Sums of squares are summed in another order by the rebuild: equal to ~1e-12, not bit for bit.
    assertClose(after, live);
    assertClose(
      await call('GET', '/experiment/rebuild/analysis/timeseries?metric=score&interval=hour'),
      liveSeries,
    );
    assertClose(await call('GET', '/experiment/rebuild/analysis?segment=plan'), liveSegments);
  } finally {
    await close();
  }
});

test('rollups from before migration 017 (no min and max): quantiles unclamped with a warning until npm run rollups:rebuild', async () => {
  const { call, rebuild, offline, close } = await onSqliteFile();
  try {
    await call('POST', '/experiments', {
      slug: 'ratings',
      status: 'running',
      variants: STICKY.variants,
      metrics: [{ name: 'rating', direction: 'increase', role: 'primary', statistic: 'p95' }],
    });
    const results = Array.from({ length: 400 }, (_, i) => ({
      variantKey: i % 2 ? 'B' : 'A',
      metrics: { rating: 1 + (i % 5) },
    }));
    await call('POST', '/experiment/ratings/logs', { results });
    const read = async () => {
      const analysis = await call('GET', '/experiment/ratings/analysis');
      return {
        p99: analysis.metrics[0].variants.map((v: { quantiles: { p99: number } }) => v.quantiles.p99),
        warnings: analysis.warnings.filter((w: string) => w.includes('not clamped')),
      };
    };
    assert.deepEqual(await read(), { p99: [5, 5], warnings: [] });
    // What migration 017 leaves of the rows an earlier release wrote.
    await offline((db) => {
      db.exec('UPDATE metric_rollups SET min_value = NULL, max_value = NULL');
      db.exec('UPDATE bucket_rollups SET min_value = NULL, max_value = NULL');
    });
    // New values leave them unknown: they do not bound the values counted before.
    await call('POST', '/experiment/ratings/logs', { results: results.slice(0, 2) });
    const before = await read();
    assert.ok(
      before.p99.every((p: number) => p > 5),
      `unclamped: ${before.p99}`,
    );
    assert.deepEqual(before.warnings, [
      'rating: quantiles of A, B are not clamped to their min and max (values counted before those were kept: run npm run rollups:rebuild)',
    ]);
    await rebuild();
    assert.deepEqual(await read(), { p99: [5, 5], warnings: [] });
  } finally {
    await close();
  }
});

// A batch that reads users' running sums or earlier feedback must see every batch committed before it,
// or its deltas start from stale values: under concurrent load the live rollups would then drift from a
// rebuild (this fails when a batch's plan reads before the batch in flight has committed).
test('concurrent logs and feedback corrections of the same users: the live rollups equal a rebuild', async () => {
  const { call, rebuild, close } = await onSqliteFile();
  try {
    await call('POST', '/experiments', { slug: 'busy', ...STICKY });
    const users = 12;
    const assignments = await Promise.all(
      Array.from({ length: users }, (_, u) =>
        call('POST', '/experiment/busy/assign', { userId: `u${u}`, context: { plan: PLANS[u % 3] } }),
      ),
    );
    const random = seededRandom(20);
    let logs = 0;
    for (let wave = 0; wave < 40; wave++) {
      await Promise.all(
        Array.from({ length: 48 }, (_, i) => {
          const u = Math.floor(random() * users);
          const a = assignments[u];
          if (i % 4 === 0) {
            return call('POST', '/experiment/busy/feedback', {
              assignmentId: a.assignmentId,
              metrics: { rating: 1 + Math.floor(random() * 5), score: Math.round(random() * 40) },
            });
          }
          logs++;
          return call('POST', '/experiment/busy/log', {
            variantKey: a.variant,
            userId: `u${u}`,
            // A user's calls in two plans: the same users' sums per value moved by concurrent batches.
            context: { plan: PLANS[(u + (random() < 0.3 ? 1 : 0)) % 3] },
            metrics: { score: Math.round(random() * 100) / 4, ok: random() < 0.5 },
          });
        }),
      );
    }
    const live = await call('GET', '/experiment/busy/analysis?method=bayesian&segment=plan');
    assert.match(await rebuild(), new RegExp(`from ${logs} results and ${users} exposures`));
    const after = await call('GET', '/experiment/busy/analysis?method=bayesian&segment=plan');
    assert.equal(live.unit, 'user');
    assert.equal(live.segments.length, 3);
    assertClose(after, live);
  } finally {
    await close();
  }
});

function assertClose(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    assert.ok(
      Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
      `${path}: ${actual} vs ${expected}`,
    );
    return;
  }
  if (expected === null || typeof expected !== 'object') {
    assert.deepEqual(actual, expected, path);
    return;
  }
  assert.equal(typeof actual, 'object', path);
  const keys = Object.keys(expected as object);
  assert.deepEqual(Object.keys(actual as object).sort(), [...keys].sort(), path);
  for (const k of keys) {
    assertClose(
      (actual as Record<string, unknown>)[k],
      (expected as Record<string, unknown>)[k],
      `${path}.${k}`,
    );
  }
}
