// Offline runs from the command line (issue 40): `agentsplit datasets push|list`, `agentsplit runs
// list|compare`, and `runs compare --fail-if` as a CI gate, run as users run them (`node bin/agentsplit.mjs`,
// a child process) against the real server process on a temporary SQLite file. A candidate that answers
// 12 points fewer questions correctly fails the gate (exit 2); a tolerant rule passes (exit 0); a rule
// that cannot be judged, or a run that does not exist, exits 1 with the reason.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertFailsWith, assertOk, cli } from './helpers/cli.js';
import { seededRandom } from './helpers/random.js';
import { startServer } from './helpers/server.js';

const ROOT_KEY = 'cli-runs-root-key-0123456789';
const ITEMS = 100;

test('datasets and a run gate from the command line against a real server', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cli-runs-'));
  const server = await startServer({
    API_KEY: ROOT_KEY,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
    RATE_LIMIT_PER_SECOND: '0',
  });
  try {
    const base = server.baseUrl;
    const run = (...args: string[]) => cli(['--url', base, '--key', ROOT_KEY, ...args]);
    const send = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };

    // datasets push: a JSON-lines file creates the dataset; the same file again changes nothing.
    const file = join(dir, 'items.jsonl');
    const lines = Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ id: `q${i}`, input: { q: i } }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    assert.equal(
      assertOk(await run('datasets', 'push', 'questions', '--file', file)),
      'created questions: version 1, 100 items\n',
    );
    assert.equal(
      assertOk(await run('datasets', 'push', 'questions', '--file', file)),
      'pushed to questions: version 1, 100 items\n',
    );
    assert.match(assertOk(await run('datasets', 'list')), /^questions +v1 +100 /m);
    writeFileSync(join(dir, 'bad.jsonl'), '{"id": "x", "input": 1}\nnot json\n');
    assertFailsWith(
      await run('datasets', 'push', 'questions', '--file', join(dir, 'bad.jsonl')),
      /^agentsplit: .*bad\.jsonl line 2 is not JSON/,
    );

    const created = await send('POST', '/experiments', {
      slug: 'answer-prompt',
      variants: [
        { key: 'A', payload: { prompt: 'current' }, trafficPercent: 50 },
        { key: 'B', payload: { prompt: 'candidate' }, trafficPercent: 50 },
      ],
      metrics: [
        { name: 'correct', direction: 'increase', role: 'primary' },
        { name: 'latency_ms', direction: 'decrease' },
      ],
    });
    assert.equal(created.status, 201);
    const opened = await send('POST', '/experiment/answer-prompt/runs', { dataset: 'questions' });
    assert.equal(opened.status, 201);
    const runId = opened.body.id as string;

    // The candidate B answers 12 of 100 questions fewer correctly (A right on 80, B on 68), as fast.
    const random = seededRandom(7);
    const results = [];
    for (let i = 0; i < ITEMS; i++) {
      const latency = 800 + random() * 400;
      results.push({
        variantKey: 'A',
        runId,
        itemId: `q${i}`,
        trial: 1,
        metrics: { correct: i < 80, latency_ms: latency },
      });
      results.push({
        variantKey: 'B',
        runId,
        itemId: `q${i}`,
        trial: 1,
        metrics: { correct: i < 68, latency_ms: latency + random() * 20 - 10 },
      });
    }
    const logged = await send('POST', '/experiment/answer-prompt/logs', { results });
    assert.equal(logged.status, 200, JSON.stringify(logged.body));
    const comparison = (await send('GET', `/runs/${runId}/comparison`)).body;
    const correct = comparison.metrics.find((m: any) => m.name === 'correct').comparisons[0];
    assert.equal(correct.difference.estimate, -0.12);

    assert.match(
      assertOk(await run('runs', 'list', 'answer-prompt')),
      new RegExp(`^${runId} +questions v1 +A, B +1 +100 `, 'm'),
    );

    // No rule: the comparison for people, exit 0; the verdict first.
    const shown = assertOk(await run('runs', 'compare', runId));
    assert.equal(shown.split('\n')[0], `verdict: ${comparison.verdict.summary}`);
    assert.match(shown, /^VARIANT +ITEMS +CONTROL A +TREATMENT +DIFFERENCE VS A /m);
    assert.match(
      shown,
      /^B +100 +80% +68% +-12 points \[-18\.5, -5\.5\] +0\.00077 +0\.00053 +0\/88\/12 +✗ worse$/m,
    );
    assert.match(shown, /McNemar p /);

    // The gate: 12 points fewer is -15% against A's 80%: "worse than -2%" fails, exit 2.
    const gate = await run('runs', 'compare', runId, '--fail-if', 'correct worse than -2%');
    assert.equal(gate.code, 2, gate.stderr);
    assert.match(gate.stdout, /^gate: correct worse than -2%: B against A -15%: FAILED$/m);
    assert.equal(gate.stderr, "agentsplit: gate failed: B breaks 'correct worse than -2%'\n");
    const points = await run('runs', 'compare', runId, '--fail-if', 'correct worse than -10 points');
    assert.equal(points.code, 2);
    const significant = await run('runs', 'compare', runId, '--fail-if', 'correct significantly worse');
    assert.equal(significant.code, 2, significant.stdout);
    assert.match(significant.stdout, /B against A significantly worse: FAILED/);
    // Tolerant rules pass, and latency (lower is better) within 20 ms passes too: exit 0.
    const passed = assertOk(
      await run(
        'runs',
        'compare',
        runId,
        '--fail-if',
        'correct worse than -20%',
        '--fail-if',
        'latency_ms worse than -20',
      ),
    );
    assert.match(passed, /^gate: correct worse than -20%: B against A -15%: passed$/m);
    assert.match(passed, /^gate: latency_ms worse than -20: B against A .*: passed$/m);
    // --json prints the API's answer as is, and the gate still decides the exit code.
    const asJson = await run('runs', 'compare', runId, '--json', '--fail-if', 'correct worse than -2%');
    assert.equal(asJson.code, 2);
    assert.deepEqual(JSON.parse(asJson.stdout), comparison);

    // What cannot be judged exits 1, saying why.
    assertFailsWith(
      await run('runs', 'compare', runId, '--fail-if', 'correct is bad'),
      /^agentsplit: cannot read the rule 'correct is bad'/,
    );
    assertFailsWith(
      await run('runs', 'compare', runId, '--fail-if', 'tokens worse than -2%'),
      /^agentsplit: the run has no values of 'tokens' .*\(its metrics: correct, latency_ms\)/,
    );
    assertFailsWith(
      await run('runs', 'compare', runId, '--fail-if', 'latency_ms worse than -2 points'),
      /points are for pass\/fail metrics/,
    );
    assertFailsWith(
      await run('runs', 'compare', 'no-such-run', '--fail-if', 'correct worse than -2%'),
      /404/,
    );
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
