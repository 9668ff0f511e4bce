// Rollouts from the command line (issue 38): `agentsplit rollout start|show|simulate|approve|pause|resume|rollback`,
// run as users run them (`node bin/agentsplit.mjs`, a child process) against the real server process on a
// temporary SQLite file; what the CLI prints is checked against what the API answers, read directly.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertFailsWith, assertOk, cli } from './helpers/cli.js';
import { startServer } from './helpers/server.js';

const ROOT_KEY = 'cli-rollout-root-key-0123456789';

test('a rollout from the command line against a real server', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cli-rollout-'));
  const server = await startServer({
    API_KEY: ROOT_KEY,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
    RATE_LIMIT_PER_SECOND: '0',
  });
  try {
    const base = server.baseUrl;
    const run = (...args: string[]) => cli(['--url', base, '--key', ROOT_KEY, ...args]);
    const read = async (path: string) =>
      (await fetch(`${base}${path}`, { headers: { 'x-api-key': ROOT_KEY } })).json() as Promise<
        Record<string, any>
      >;
    const created = await fetch(`${base}/experiments`, {
      method: 'POST',
      headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: 'ship-it',
        status: 'running',
        assignment: 'sticky',
        variants: [
          { key: 'A', payload: { prompt: 'helpful' }, trafficPercent: 50 },
          { key: 'B', payload: { prompt: 'concise' }, trafficPercent: 50 },
        ],
      }),
    });
    assert.equal(created.status, 201);

    const started = assertOk(
      await run(
        'rollout',
        'start',
        'ship-it',
        '--variant',
        'B',
        '--steps',
        '10,50,100',
        '--minutes',
        '30',
        '--approve',
        '50',
      ),
    );
    assert.match(started, /^variant +B \(the rest: A\)$/m);
    assert.match(started, /^state +running$/m);
    assert.match(started, /^served +10%$/m);
    assert.match(started, /^→ +0 +10% +30 min$/m);
    assert.match(started, /^ +1 +50% +30 min +needed$/m);
    assert.match(started, /started +key root +10%$/m);
    const stored = await read('/experiment/ship-it/rollout');
    assert.deepEqual(
      stored.steps.map((s: any) => [s.percent, s.minMinutes, s.approval]),
      [
        [10, 30, false],
        [50, 30, true],
        [100, 30, false],
      ],
    );

    const shown = JSON.parse(assertOk(await run('--json', 'rollout', 'show', 'ship-it')));
    assert.equal(shown.state, 'running');
    assert.match(
      assertOk(await run('rollout', 'pause', 'ship-it', '--reason', 'tickets up')),
      /^state +paused: tickets up$/m,
    );
    assert.match(assertOk(await run('rollout', 'resume', 'ship-it')), /^state +running$/m);
    assert.match(assertOk(await run('rollout', 'approve', 'ship-it')), /^ +1 +50% +30 min +approved$/m);
    assert.match(
      assertOk(await run('rollout', 'rollback', 'ship-it')),
      /^state +rolled_back: rolled back by a person$/m,
    );
    assert.equal((await read('/experiment/ship-it/rollout')).percent, 0);

    assertFailsWith(
      await run('rollout', 'resume', 'ship-it'),
      /^agentsplit: .*cannot resume a rollout that is rolled_back: it has ended/,
    );
    assertFailsWith(
      await run('rollout', 'start', 'ship-it'),
      /required option '--variant <key>' not specified/,
    );
    assertFailsWith(
      await run('rollout', 'start', 'ship-it', '--variant', 'B', '--steps', '10,x'),
      /--steps: 'x' is not a number/,
    );
    assertFailsWith(await run('rollout', 'show', 'no-such'), /no experiment with slug 'no-such'/);

    // The dry run, on an experiment with a guardrail and results of its own (B 20% dearer).
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await post('/experiments', {
      slug: 'dry-run',
      status: 'running',
      assignment: 'sticky',
      metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail' }],
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
    });
    const results: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const a = (await (await post('/experiment/dry-run/assign', { userId: `u-${i}` })).json()) as any;
      const cost = (1 + (i % 10) / 10) * (a.variant === 'B' ? 1.2 : 1);
      results.push({ variantKey: a.variant, assignmentId: a.assignmentId, metrics: { cost_usd: cost } });
    }
    assert.equal((await post('/experiment/dry-run/logs', { results })).status, 200);
    const args = [
      'rollout',
      'simulate',
      'dry-run',
      '--variant',
      'B',
      '--units-per-hour',
      '600',
      '--runs',
      '200',
    ];
    const said = assertOk(await run(...args));
    assert.match(said, /^false rollback +\d+(\.\d)?% \(95%: /m);
    assert.match(said, /^with effects +cost_usd \+\d+(\.\d)?% \(observed\)$/m);
    assert.match(said, /^time to 100% +180 min \(p10 180, p90 180\)$/m);
    const answered = JSON.parse(assertOk(await run('--json', ...args, '--effect', 'cost_usd=0')));
    const direct = (await (
      await post('/experiment/dry-run/rollout/simulate', {
        variant: 'B',
        unitsPerHour: 600,
        runs: 200,
        effects: { cost_usd: 0 },
      })
    ).json()) as any;
    assert.deepEqual(answered.withEffects, direct.withEffects, 'the same plan, the same numbers');
    assert.equal(answered.guardrails[0].effectFrom, 'stated');
    assertFailsWith(
      await run(...args, '--effect', 'cost_usd'),
      /--effect: 'cost_usd' is not metric=relative-change/,
    );
    assertFailsWith(
      await run('rollout', 'simulate', 'ship-it', '--variant', 'B'),
      /has no guardrail metrics/,
    );
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
