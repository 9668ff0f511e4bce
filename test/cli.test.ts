// The `agentsplit` command line run as users run it (`node bin/agentsplit.mjs ...`, a child process)
// against the real server process on a temporary SQLite file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { report } from '../src/cli/agentsplit/analyze.js';
import type { Analysis } from '../src/stats/analysis-schema.js';
import type { TestUsed } from '../src/stats/comparison.js';
import { testLabel } from '../src/stats/wording.js';
import { startServer } from './helpers/server.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(repoRoot, 'bin', 'agentsplit.mjs');
const ROOT_KEY = 'cli-test-root-key-0123456789';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI with only the AGENTSPLIT_* variables given here (none inherited from the caller); `input`,
 * when given, is its stdin.
 */
function cli(args: string[], env: Record<string, string> = {}, bin = BIN, input?: string): Promise<Run> {
  const base = { ...process.env };
  delete base.AGENTSPLIT_URL;
  delete base.AGENTSPLIT_API_KEY;
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: tmpdir(), // works from anywhere, not only from the checkout
      env: { ...base, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(input ?? '');
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

test('analyze report: failed and inconclusive guardrails, quantiles, a p95 metric headed P95, users counted', () => {
  // The current server sends no quantiles and counts calls for the sample ratio; this answer has both, as
  // src/stats/analysis-schema.ts declares them, so the report's reading of them is pinned here.
  const effect = (estimate: number, lo: number, hi: number) => ({
    estimate,
    ci: [lo, hi] as [number, number],
    stdError: 0.01,
    pValue: 0.01,
  });
  const arm = (key: string, mean: number, extra: object = {}) => ({ key, n: 500, mean, stdDev: 1, ...extra });
  const metric = (name: string, extra: object, variants: object[]) => ({
    name,
    kind: 'mean',
    direction: 'decrease',
    role: 'guardrail',
    unit: 'user',
    sided: 'two',
    minimumDetectableEffect: null,
    statistic: 'mean',
    threshold: 0.05,
    label: 'mean per call, users as units',
    noVariation: false,
    corrected: false,
    ...extra,
    variants,
  });
  const quantiles = { p50: 812, p90: 1040, p95: 1110.4, p99: null };
  const analysis = {
    slug: 's',
    control: 'A',
    method: 'frequentist',
    alpha: 0.05,
    sided: 'two',
    correction: 'none',
    version: null,
    versions: [1],
    unit: 'user',
    verdict: { status: 'guardrail-failed', variant: 'B', metric: 'latency_ms', summary: 'Do not ship B.' },
    exposures: { A: 510, B: 490 },
    srm: { chiSquare: 0.4, pValue: 0.53, mismatch: false, unit: 'user', counts: { A: 500, B: 500 } },
    metrics: [
      metric('latency_ms', { statistic: 'p95', label: 'p95 of calls, users as units' }, [
        arm('A', 900, { quantiles }),
        arm('B', 990, {
          quantiles: { p50: 850, p90: 1100, p95: 1200.4, p99: null },
          absolute: effect(90, 60, 120),
          relative: effect(0.1, 0.07, 0.13),
          pValue: 0.002,
          significant: true,
          better: false,
          worse: true,
          guardrail: {
            status: 'failed',
            threshold: 0.05,
            bound: 0.13,
            absolute: effect(90, 60, 120),
            relative: effect(0.1, 0.07, 0.13),
          },
        }),
      ]),
      metric('cost_usd', { threshold: 0 }, [
        arm('A', 2),
        arm('B', 2.02, {
          absolute: effect(0.02, -0.02, 0.06),
          relative: effect(0.01, -0.01, 0.031),
          pValue: 0.4,
          significant: false,
          better: false,
          worse: false,
          guardrail: {
            status: 'inconclusive',
            threshold: 0,
            bound: 0.031,
            absolute: effect(0.02, -0.02, 0.06),
            relative: effect(0.01, -0.01, 0.031),
          },
        }),
      ]),
    ],
    warnings: [],
  };
  const out = report(analysis as unknown as Parameters<typeof report>[0]);
  const lines = out.split('\n');
  assert.ok(
    lines.includes('latency_ms (guardrail; p95 of calls, users as units; lower is better; threshold 5%)'),
    out,
  );
  // A p95 metric's column is its p95 (what the difference compares), headed so; a mean metric's, the mean.
  assert.match(out, /^VARIANT\s+N\s+P95\s+DIFFERENCE VS A\s+LIFT/m);
  assert.match(out, /^A\s+500\s+1,110\s+control$/m);
  assert.match(
    out,
    /^B\s+500\s+1,200\s+\+90 \[\+60, \+120\]\s+\+10\.0% \[\+7\.0%, \+13\.0%\]\s+0\.002\s+✗ guardrail failed$/m,
  );
  assert.equal(out.match(/^VARIANT\s+N\s+MEAN\s+DIFFERENCE/gm)?.length, 1, 'cost_usd is a mean');
  assert.match(out, /^B\s+500\s+2\.020\s+/m);
  assert.ok(lines.includes('  B guardrail failed: could be 13.0% worse; threshold 5%'), out);
  assert.ok(lines.includes('  A quantiles: p50 812, p90 1,040, p95 1,110'), out);
  assert.ok(lines.includes('  B quantiles: p50 850, p90 1,100, p95 1,200'), out);
  assert.ok(
    lines.includes('cost_usd (guardrail; mean per call, users as units; lower is better; threshold 0%)'),
    out,
  );
  assert.ok(lines.includes('  B guardrail inconclusive: could be 3.1% worse; threshold 0%'), out);
  assert.ok(lines.includes('sample ratio  ok (chi-square 0.4, p = 0.53): users A 500, B 500'), out);
  // An answer without `exposed` (an older server): the users the sample-ratio check counted, calls beside.
  assert.ok(lines.includes('exposed       A 500 users (510 calls), B 500 users (490 calls)'), out);
  assert.ok(!out.includes('correction '), 'no correction, no correction line');
});

test('--help lists the commands and exits 0', async () => {
  const top = await cli(['--help']);
  assert.equal(top.code, 0);
  for (const text of ['keys', '--url', '--key', '--json', 'AGENTSPLIT_URL', 'AGENTSPLIT_API_KEY']) {
    assert.ok(top.stdout.includes(text), `--help mentions ${text}:\n${top.stdout}`);
  }
  for (const command of [
    'keys create',
    'keys list',
    'keys revoke',
    'experiments create --file',
    'experiments list',
    'experiments show',
    'start|pause|complete|archive',
    'analyze',
    'results export',
  ]) {
    assert.ok(top.stdout.includes(`agentsplit ${command}`), `--help shows ${command}`);
  }
  for (const command of [
    'experiments',
    'start <slug>',
    'pause <slug>',
    'complete [options] <slug>',
    'archive <slug>',
  ]) {
    assert.ok(top.stdout.includes(`\n  ${command} `), `--help lists ${command}`);
  }
  const experiments = await cli(['experiments', '--help']);
  assert.equal(experiments.code, 0);
  assert.match(experiments.stdout, /list \[options\]/);
  assert.match(experiments.stdout, /show <slug>/);
  assert.match(experiments.stdout, /create \[options\]/);
  const analyze = await cli(['analyze', '--help']);
  assert.equal(analyze.code, 0);
  for (const option of [
    '--metric',
    '--version',
    '--method',
    '--correction',
    '--control',
    '--alpha',
    '--sided',
  ]) {
    assert.ok(analyze.stdout.includes(option), `analyze --help mentions ${option}`);
  }
  const exported = await cli(['results', 'export', '--help']);
  assert.equal(exported.code, 0);
  assert.match(exported.stdout, /--format <format>/);
  assert.match(exported.stdout, /--output <file>/);
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

    await t.test('keys list follows every page of GET /keys (more keys than one page holds)', async () => {
      const made: string[] = [];
      for (let i = 0; i < 120; i++) {
        const res = await call(base, ROOT_KEY, 'POST', '/keys', { name: `bulk-${i}`, scopes: ['read'] });
        assert.equal(res.status, 201);
        made.push(((await res.json()) as { id: string }).id);
      }
      const run = await cli([...root, 'keys', 'list', '--json']);
      assert.equal(run.code, 0, run.stderr);
      const listed = JSON.parse(run.stdout) as { keys: { id: string }[]; nextCursor: null };
      assert.equal(listed.nextCursor, null);
      const ids = listed.keys.map((k) => k.id);
      assert.equal(new Set(ids).size, ids.length, 'each key once');
      assert.deepEqual(ids.filter((id) => made.includes(id)).sort(), [...made].sort(), 'every key');
      const text = await cli([...root, 'keys', 'list']);
      assert.equal(text.code, 0, text.stderr);
      assert.equal(text.stdout.trimEnd().split('\n').length, ids.length + 1, 'a header and a line per key');
    });
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('experiments, status changes, analyze and results export against a real server', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cli-'));
  const server = await startServer({
    API_KEY: ROOT_KEY,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
    RATE_LIMIT_PER_SECOND: '0',
  });
  const base = server.baseUrl;
  const root = ['--url', base, '--key', ROOT_KEY];
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await call(base, ROOT_KEY, method, path, body);
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
    return (await res.json()) as T;
  };
  const apiText = async (path: string) => {
    const res = await call(base, ROOT_KEY, 'GET', path);
    assert.equal(res.status, 200);
    return res.text();
  };
  const experiment = {
    slug: 'checkout-prompt',
    name: 'Checkout prompt',
    description: 'Does a concise prompt answer as well?',
    variants: [
      { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
      {
        key: 'B',
        payload: { prompt: `You are a concise assistant. ${'Be brief. '.repeat(20)}` },
        trafficPercent: 50,
      },
    ],
  };
  const expFile = join(dir, 'checkout-prompt.json');
  writeFileSync(expFile, JSON.stringify(experiment));
  try {
    await t.test('experiments create --file prints the created experiment and its variants', async () => {
      const run = await cli([...root, 'experiments', 'create', '--file', expFile]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      assert.match(run.stdout, /^created experiment checkout-prompt$/m);
      assert.match(run.stdout, /^slug\s+checkout-prompt$/m);
      assert.match(run.stdout, /^name\s+Checkout prompt$/m);
      assert.match(run.stdout, /^status\s+draft$/m);
      assert.match(run.stdout, /^assignment\s+random$/m);
      assert.match(run.stdout, /^version\s+1$/m);
      assert.match(run.stdout, /^VARIANT\s+TRAFFIC\s+PAYLOAD$/m);
      assert.match(run.stdout, /^A\s+50%\s+\{"prompt":"You are a helpful assistant\."\}$/m);
      // A long payload is cut to one readable line.
      assert.match(run.stdout, /^B\s+50%\s+\{"prompt":"You are a concise assistant\. Be brief\.[^\n]*…$/m);
      const stored = await api<{ slug: string; status: string }>('GET', '/experiment/checkout-prompt');
      assert.equal(stored.status, 'draft');
    });

    await t.test('experiments create --file - reads stdin; --json prints the API answer as is', async () => {
      const body = {
        slug: 'support-prompt',
        status: 'running',
        assignment: 'sticky',
        variants: [
          { key: 'A', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
          { key: 'B', payload: { prompt: 'Answer in two sentences.' }, trafficPercent: 50 },
        ],
        metrics: [
          { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.1 },
          { name: 'cost_usd', direction: 'decrease', role: 'guardrail' },
        ],
      };
      const run = await cli(
        [...root, '--json', 'experiments', 'create', '--file', '-'],
        {},
        BIN,
        JSON.stringify(body),
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout.trimEnd().split('\n').length, 1, 'one JSON document, nothing else');
      const created = JSON.parse(run.stdout) as { slug: string; assignment: string; status: string };
      assert.deepEqual(created, await api('GET', '/experiment/support-prompt'));
      assert.equal(created.assignment, 'sticky');
    });

    await t.test('experiments create: a missing file, bad JSON or a non-object is one line', async () => {
      assertFailsWith(
        await cli([...root, 'experiments', 'create', '--file', join(dir, 'nope.json')]),
        `agentsplit: cannot read ${join(dir, 'nope.json')}: no such file`,
      );
      assertFailsWith(
        await cli([...root, 'experiments', 'create', '--file', dir]),
        `agentsplit: cannot read ${dir}: it is a directory`,
      );
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, '{"slug": "x",\n  "variants": [}\n');
      assertFailsWith(
        await cli([...root, 'experiments', 'create', '--file', bad]),
        new RegExp(`^agentsplit: ${bad.replaceAll('.', '\\.')} is not valid JSON: .+\\n$`),
      );
      assertFailsWith(
        await cli([...root, 'experiments', 'create', '--file', '-'], {}, BIN, ''),
        'agentsplit: stdin is not valid JSON: it is empty',
      );
      assertFailsWith(
        await cli([...root, 'experiments', 'create', '--file', '-'], {}, BIN, '[{"slug": "x"}]'),
        'agentsplit: stdin must hold one JSON object (the experiment), not an array',
      );
      assertFailsWith(await cli([...root, 'experiments', 'create']), /^agentsplit: .*--file.*\n$/);
      // The API's own refusals: a duplicate slug, an invalid experiment.
      assertFailsWith(
        await cli([...root, 'experiments', 'create', '--file', expFile]),
        "agentsplit: 409 an experiment with slug 'checkout-prompt' already exists",
      );
      assertFailsWith(
        await cli(
          [...root, 'experiments', 'create', '--file', '-'],
          {},
          BIN,
          '{"slug": "x", "variants": []}',
        ),
        /^agentsplit: 400 .*variants.*\n$/,
      );
    });

    await t.test(
      'experiments list prints every experiment: slug, status, assignment, variants, version',
      async () => {
        const run = await cli([...root, 'experiments', 'list']);
        assert.equal(run.code, 0, run.stderr);
        const lines = run.stdout.trimEnd().split('\n');
        assert.equal(lines.length, 3, run.stdout);
        assert.match(lines[0]!, /^SLUG\s+STATUS\s+ASSIGNMENT\s+VARIANTS\s+VERSION$/);
        assert.match(lines[1]!, /^checkout-prompt\s+draft\s+random\s+A 50%, B 50%\s+1$/);
        assert.match(lines[2]!, /^support-prompt\s+running\s+sticky\s+A 50%, B 50%\s+1$/);
        assert.equal(lines[2]!.indexOf('running'), lines[0]!.indexOf('STATUS'), 'aligned columns');

        const running = await cli([...root, 'experiments', 'list', '--status', 'running']);
        assert.equal(running.code, 0, running.stderr);
        assert.equal(running.stdout.trimEnd().split('\n').length, 2);
        assert.match(running.stdout, /^support-prompt\s/m);
        const none = await cli([...root, 'experiments', 'list', '--status', 'archived']);
        assert.deepEqual(none, { code: 0, stdout: 'no archived experiments\n', stderr: '' });
        assertFailsWith(
          await cli([...root, 'experiments', 'list', '--status', 'done']),
          /^agentsplit: option '--status <status>' argument 'done' is invalid\. Allowed choices are draft, running, paused, completed, released, archived\.\n$/,
        );
        assertFailsWith(
          await cli([...root, 'experiments', 'list', '--limit', '0']),
          /^agentsplit: .*--limit.*whole number.*\n$/,
        );
      },
    );

    await t.test('experiments list --limit stops early; --json prints GET /experiments as is', async () => {
      const limited = await cli([...root, 'experiments', 'list', '--limit', '1']);
      assert.equal(limited.code, 0, limited.stderr);
      assert.match(limited.stdout, /^checkout-prompt\s/m);
      assert.ok(!limited.stdout.includes('support-prompt'));
      assert.match(limited.stdout, /more: the first 1 shown \(--limit 1\)\n$/);
      const json = await cli([...root, '--json', 'experiments', 'list', '--limit', '1']);
      assert.equal(json.code, 0, json.stderr);
      assert.equal(json.stdout, `${await apiText('/experiments?limit=1')}\n`);
      const all = await cli([...root, 'experiments', 'list', '--json']);
      assert.equal(all.stdout, `${await apiText('/experiments?limit=100')}\n`);
    });

    await t.test('experiments show prints the details and the variants; --json as is', async () => {
      const run = await cli([...root, 'experiments', 'show', 'support-prompt']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^status\s+running \(assigning\)$/m);
      assert.match(run.stdout, /^assignment\s+sticky \(seed support-prompt\)$/m);
      assert.match(run.stdout, /^metrics\s+success ↑ primary \(MDE 10%\), cost_usd ↓ guardrail$/m);
      assert.match(run.stdout, /^B\s+50%\s+\{"prompt":"Answer in two sentences\."\}$/m);
      const json = await cli([...root, 'experiments', 'show', 'support-prompt', '--json']);
      assert.equal(json.stdout, `${await apiText('/experiment/support-prompt')}\n`);
    });

    await t.test(
      'start, pause, complete and archive change the status; a wrong one is the 409 line',
      async () => {
        const slug = 'checkout-prompt';
        for (const [command, status] of [
          ['start', 'running'],
          ['pause', 'paused'],
          ['start', 'running'],
          ['complete', 'completed'],
        ] as const) {
          const run = await cli([...root, command, slug]);
          assert.deepEqual(
            run,
            { code: 0, stdout: `experiment ${slug} is now ${status}\n`, stderr: '' },
            command,
          );
          assert.equal((await api<{ status: string }>('GET', `/experiment/${slug}`)).status, status);
        }
        assertFailsWith(
          await cli([...root, 'start', slug]),
          "agentsplit: 409 cannot change status from 'completed' to 'running'; allowed from 'completed': archived",
        );
        assertFailsWith(
          await cli([...root, 'pause', slug]),
          /^agentsplit: 409 cannot change status from 'completed' to 'paused'.*\n$/,
        );
        const archived = await cli([...root, '--json', 'archive', slug]);
        assert.equal(archived.code, 0, archived.stderr);
        const body = JSON.parse(archived.stdout) as { slug: string; status: string; active: boolean };
        assert.deepEqual(body, await api('GET', `/experiment/${slug}`));
        assert.equal(body.status, 'archived');
      },
    );

    await t.test('an unknown slug is the 404 line for every command that takes one', async () => {
      const line = "agentsplit: 404 no experiment with slug 'nope'";
      for (const args of [
        ['experiments', 'show', 'nope'],
        ['start', 'nope'],
        ['pause', 'nope'],
        ['complete', 'nope'],
        ['archive', 'nope'],
        ['analyze', 'nope'],
        ['results', 'export', 'nope'],
      ]) {
        assertFailsWith(await cli([...root, ...args]), line);
      }
      // Nothing is written for an export the server refused.
      const file = join(dir, 'refused.csv');
      assertFailsWith(await cli([...root, 'results', 'export', 'nope', '--output', file]), line);
      assert.ok(!existsSync(file));
    });

    await t.test('no key, or a key without the scope, is one line for the new commands', async () => {
      const noKey = 'agentsplit: no API key: pass --key or set AGENTSPLIT_API_KEY';
      for (const args of [
        ['experiments', 'list'],
        ['experiments', 'show', 'support-prompt'],
        ['experiments', 'create', '--file', expFile],
        ['start', 'support-prompt'],
        ['analyze', 'support-prompt'],
        ['results', 'export', 'support-prompt'],
      ]) {
        assertFailsWith(await cli(['--url', base, ...args]), noKey);
      }
      assertFailsWith(
        await cli(['--url', base, '--key', 'wrong-key-0123456789', 'analyze', 'support-prompt']),
        'agentsplit: 401 Unauthorized',
      );
      const reader = await api<{ key: string }>('POST', '/keys', { name: 'reader', scopes: ['read'] });
      assertFailsWith(
        await cli(['--url', base, '--key', reader.key, 'pause', 'support-prompt']),
        "agentsplit: 403 this key lacks the 'admin' scope (it has: 'read')",
      );
      const listed = await cli(['experiments', 'list'], {
        AGENTSPLIT_URL: base,
        AGENTSPLIT_API_KEY: reader.key,
      });
      assert.equal(listed.code, 0, listed.stderr);
    });

    // 300 users through the API: B succeeds far more often (80% against 40%) and costs less.
    const users = 300;
    const results: unknown[] = [];
    for (let i = 1; i <= users; i++) {
      const assigned = await api<{ variant: string; assignmentId: string }>(
        'POST',
        '/experiment/support-prompt/assign',
        { userId: `user-${i}` },
      );
      const b = assigned.variant === 'B';
      results.push({
        variantKey: assigned.variant,
        userId: `user-${i}`,
        assignmentId: assigned.assignmentId,
        metrics: {
          success: i % 10 < (b ? 8 : 4),
          cost_usd: (b ? 0.0019 : 0.0021) + (i % 3) * 0.0001,
          rating: i % 5,
          // The same everywhere: one plain line, nothing to compare.
          retries: 0,
        },
        input: { question: `question, "quoted" ${i}` },
      });
    }
    await api('POST', '/experiment/support-prompt/logs', { results });
    const analysis = await api<Analysis>('GET', '/experiment/support-prompt/analysis');

    await t.test(
      'analyze prints the verdict first, then a scorecard per metric, the SRM line, warnings',
      async () => {
        const run = await cli([...root, 'analyze', 'support-prompt']);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stderr, '');
        const lines = run.stdout.trimEnd().split('\n');
        assert.match(
          lines[0]!,
          /^verdict: winner — B beats A on success: \+\d+(\.\d)? points \[.+\] \(95% score interval\), p [<=] [\d.]+; cost_usd is .+$/,
        );
        assert.match(
          lines[1]!,
          /^support-prompt: frequentist, two-sided, 95% confidence intervals, bh correction; control A; users as units; version 1$/,
        );
        // Primary first, then the guardrail (with its threshold), then the undeclared metrics; each with
        // what its numbers are (the analysis' label).
        const headings = lines.filter((l) => /^\w+ \(/.test(l));
        const label = (name: string) => analysis.metrics.find((m) => m.name === name)!.label;
        assert.equal(label('cost_usd'), 'mean per call, users as units');
        assert.deepEqual(headings, [
          `success (primary; ${label('success')}; higher is better; intervals: 95% score interval)`,
          `cost_usd (guardrail; ${label('cost_usd')}; lower is better; threshold 0%; intervals: 95% Welch t interval)`,
          // BH over the undeclared metrics: the level of its intervals depends on the family's p-values.
          `rating (${label('rating')}; no direction declared; BH-adjusted; intervals: ${testLabel(analysis.metrics.find((m) => m.name === 'rating')!.variants[1]!.test! as TestUsed)})`,
          `retries (${label('retries')}; no direction declared)`,
        ]);
        const header = lines[lines.indexOf(headings[0]!) + 1]!;
        assert.match(header, /^VARIANT\s+N\s+RATE\s+DIFFERENCE VS A\s+LIFT\s+P-VALUE\s+SIGNIFICANCE$/);
        const a = lines[lines.indexOf(headings[0]!) + 2]!;
        const b = lines[lines.indexOf(headings[0]!) + 3]!;
        assert.match(a, new RegExp(`^A\\s+${analysis.results.A}\\s+\\d+(\\.\\d+)?%\\s+control$`));
        assert.match(
          b,
          new RegExp(
            `^B\\s+${analysis.results.B}\\s+\\d+(\\.\\d+)?%\\s+\\+\\d+(\\.\\d)? points \\[\\+[\\d.]+, \\+[\\d.]+\\]\\s+` +
              '\\+\\d+(\\.\\d)?% \\[\\+[\\d.]+%, \\+[\\d.]+%\\]\\s+(< 0\\.0001|0\\.0\\d+)\\s+✓ better$',
          ),
        );
        assert.equal(b.indexOf('✓ better'), header.indexOf('SIGNIFICANCE'), 'aligned columns');
        const costB = lines[lines.indexOf(headings[1]!) + 3]!;
        assert.match(
          costB,
          /^B\s+\d+\s+0\.00\d+\s+-0\.000\d+ \[-0\.000\d+, -0\.000\d+\]\s+-\d+\.\d% \[.+\]\s+< 0\.0001\s+✓ better$/,
        );
        // The guardrail's status against its threshold, from the guardrail interval's worse end.
        const guardrail = analysis.metrics.find((m) => m.name === 'cost_usd')!.variants[1]!.guardrail!;
        const worse = guardrail.bound!;
        const size = `${Math.abs(worse * 100).toFixed(1)}%`;
        assert.equal(
          lines[lines.indexOf(headings[1]!) + 4],
          `  B guardrail ${guardrail.status}: ${worse > 0 ? `could be ${size} worse` : `at worst ${size} better`} (90% Welch t interval); threshold 0%`,
        );
        const ratingB = lines[lines.indexOf(headings[2]!) + 3]!;
        assert.match(ratingB, /^B\s+\d+\s+[\d.]+\s+.+\s+not significant$/);
        // A metric without variation is one plain line: no table, no effect.
        const retries = analysis.metrics.find((m) => m.name === 'retries')!;
        assert.equal(retries.noVariation, true);
        assert.equal(
          lines[lines.indexOf(headings[3]!) + 1],
          `  no variation: every value is 0 in every variant (n = ${retries.variants.reduce((a, v) => a + v.n, 0)}); nothing to compare`,
        );
        // Quantiles where the analysis has them (numeric metrics), none otherwise.
        const withQuantiles = analysis.metrics.filter(
          (m) => !m.noVariation && m.variants.some((v) => v.quantiles),
        );
        assert.equal(
          lines.filter((l) => /^ {2}\w+ quantiles: /.test(l)).length,
          withQuantiles.reduce((a, m) => a + m.variants.filter((v) => v.quantiles).length, 0),
        );
        // The sample ratio names what it counted (users or calls) with the counts tested.
        const { srm } = analysis;
        const tested = `${srm.unit}s A ${srm.counts.A}, B ${srm.counts.B}`;
        assert.match(
          lines.find((l) => l.startsWith('sample ratio'))!,
          new RegExp(`^sample ratio  ok \\(chi-square [\\d.e-]+, p = [\\d.]+\\): ${tested}$`),
        );
        // No correction asked for and none applied: no correction line (else it names its metrics).
        const family = analysis.metrics.filter((m) => m.corrected && !m.noVariation).map((m) => m.name);
        if (analysis.correction === 'none') assert.ok(!lines.some((l) => l.startsWith('correction')));
        else {
          const name = analysis.correction === 'bh' ? 'BH' : 'Holm';
          assert.ok(
            lines.some((l) => l.startsWith(`correction    ${name}`)),
            run.stdout,
          );
          if (family.length > 0) assert.ok(run.stdout.includes(`${name} on ${family.join(', ')}:`));
        }
        assert.ok(
          lines.includes(`results       A ${analysis.results.A}, B ${analysis.results.B}`),
          run.stdout,
        );
        assert.ok(
          lines.includes(
            'warning: no direction declared for rating: effects and intervals only, no chance to win',
          ),
        );
      },
    );

    await t.test('analyze --json prints the API analysis as is, with the options passed on', async () => {
      const run = await cli([...root, 'analyze', 'support-prompt', '--json']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${await apiText('/experiment/support-prompt/analysis')}\n`);
      const chosen = await cli([
        ...root,
        '--json',
        'analyze',
        'support-prompt',
        '--metric',
        'success',
        '--metric',
        'rating,success',
        '--version',
        '1',
        '--method',
        'sequential',
        '--alpha',
        '0.1',
        '--sided',
        'better',
        '--n-star',
        '1000',
      ]);
      assert.equal(chosen.code, 0, chosen.stderr);
      assert.equal(
        chosen.stdout,
        `${await apiText('/experiment/support-prompt/analysis?metrics=success,rating&version=1&method=sequential&alpha=0.1&sided=better&nStar=1000')}\n`,
      );
      const body = JSON.parse(chosen.stdout) as {
        version: number;
        method: string;
        metrics: { name: string }[];
      };
      assert.equal(body.version, 1);
      assert.equal(body.method, 'sequential');
      assert.deepEqual(body.metrics.map((m) => m.name).sort(), ['rating', 'success']);
    });

    await t.test(
      'analyze --method bayesian shows the chance to be better; --correction the adjusted p',
      async () => {
        const bayes = await cli([
          ...root,
          'analyze',
          'support-prompt',
          '--method',
          'bayesian',
          '--metric',
          'success,rating',
        ]);
        assert.equal(bayes.code, 0, bayes.stderr);
        assert.match(bayes.stdout, /^verdict: winner — B beats A on success: .*chance to be better/m);
        assert.match(
          bayes.stdout,
          /^VARIANT\s+N\s+RATE\s+DIFFERENCE VS A\s+LIFT\s+CHANCE BETTER\s+SIGNIFICANCE$/m,
        );
        assert.match(bayes.stdout, /^B\s+.+\s+(9\d|100)\.\d%\s+✓ better$/m);
        assert.match(bayes.stdout, /^B\s+.+\s+— \(no direction\)\s+not significant$/m);
        assert.ok(!bayes.stdout.includes('cost_usd ('), '--metric limits the metrics');
        const holm = await cli([...root, 'analyze', 'support-prompt', '--correction', 'holm']);
        assert.equal(holm.code, 0, holm.stderr);
        assert.match(holm.stdout, /95% confidence intervals, holm correction;/);
        assert.match(
          holm.stdout,
          /^VARIANT\s+N\s+RATE\s+DIFFERENCE VS A\s+LIFT\s+P \(HOLM-ADJUSTED\)\s+SIGNIFICANCE$/m,
        );
        // Which metrics the correction covers: every metric but guardrails (and constant ones).
        const holmed = await api<Analysis>('GET', '/experiment/support-prompt/analysis?correction=holm');
        const family = holmed.metrics.filter((m) => m.corrected && !m.noVariation).map((m) => m.name);
        assert.deepEqual(family.sort(), ['rating', 'success']);
        assert.match(
          holm.stdout,
          /^correction {4}Holm on (success, rating|rating, success): p-values and intervals adjusted$/m,
        );
        assert.match(
          holm.stdout,
          /^success \(primary; .+; Holm-adjusted; intervals: [\d.]+% score interval\)$/m,
        );
        assert.match(
          holm.stdout,
          /^cost_usd \(guardrail; .+; threshold 0%; intervals: [\d.]+% Welch t interval\)$/m,
        );
      },
    );

    await t.test(
      'analyze --version is the data version; the program --version still prints its own',
      async () => {
        const run = await cli([
          ...root,
          'analyze',
          'support-prompt',
          '--version',
          '1',
          '--metric',
          'success',
        ]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /^support-prompt: .*; version 1$/m);
        const own = await cli(['--version']);
        assert.equal(own.code, 0);
        assert.match(own.stdout, /^\d+\.\d+\.\d+\n$/);
        // --url, --key and --json go before or after the command, at any level.
        const direct = await apiText('/experiment/support-prompt');
        for (const args of [
          ['--url', base, '--key', ROOT_KEY, '--json', 'experiments', 'show', 'support-prompt'],
          ['experiments', 'show', 'support-prompt', '--url', base, '--key', ROOT_KEY, '--json'],
          ['experiments', '--json', '--url', base, 'show', 'support-prompt', '--key', ROOT_KEY],
        ]) {
          const shown = await cli(args);
          assert.equal(shown.code, 0, `${args.join(' ')}: ${shown.stderr}`);
          assert.equal(shown.stdout, `${direct}\n`, args.join(' '));
        }
      },
    );

    await t.test('analyze: a bad option or one the API refuses is one line', async () => {
      assertFailsWith(
        await cli([...root, 'analyze', 'support-prompt', '--version', '9']),
        'agentsplit: 400 version must be between 1 and 1 (got 9)',
      );
      assertFailsWith(
        await cli([...root, 'analyze', 'support-prompt', '--metric', 'nope']),
        /^agentsplit: 400 metric 'nope' has no data in 'support-prompt'.*\n$/,
      );
      assertFailsWith(
        await cli([...root, 'analyze', 'support-prompt', '--control', 'Z']),
        "agentsplit: 400 control 'Z' is not a variant of 'support-prompt' (variants: A, B)",
      );
      assertFailsWith(
        await cli([...root, 'analyze', 'support-prompt', '--alpha', '2']),
        /^agentsplit: .*--alpha.*between 0 and 0\.5.*\n$/,
      );
      assertFailsWith(
        await cli([...root, 'analyze', 'support-prompt', '--method', 'magic']),
        /^agentsplit: .*--method.*'magic' is invalid.*\n$/,
      );
      assertFailsWith(await cli([...root, 'analyze']), /^agentsplit: missing required argument 'slug'\n$/);
    });

    await t.test('analyze on an experiment without results says so', async () => {
      await api('POST', '/experiments', {
        slug: 'empty',
        status: 'running',
        variants: [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'B', payload: {}, trafficPercent: 50 },
        ],
        metrics: [{ name: 'success', direction: 'increase', role: 'primary' }],
      });
      const run = await cli([...root, 'analyze', 'empty']);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^verdict: not-enough-data — .+$/m);
      assert.match(run.stdout, /^no metrics yet: results logged with metrics appear here$/m);
      assert.match(run.stdout, /^sample ratio {2}not checked: calls A 0, B 0$/m);
      assert.match(run.stdout, /^exposed {7}A 0 calls, B 0 calls$/m);
      assert.match(run.stdout, /^results {7}A 0, B 0$/m);
    });

    await t.test(
      'analyze shows what was exposed in the unit randomized: users (calls beside) if sticky, calls if random',
      async () => {
        const variants = [
          { key: 'A', payload: {}, trafficPercent: 50 },
          { key: 'B', payload: {}, trafficPercent: 50 },
        ];
        const sent: Record<string, { users: Record<string, number>; calls: Record<string, number> }> = {};
        for (const assignment of ['sticky', 'random'] as const) {
          const slug = `repeat-${assignment}`;
          await api('POST', '/experiments', { slug, status: 'running', assignment, variants });
          const users: Record<string, number> = { A: 0, B: 0 };
          const calls: Record<string, number> = { A: 0, B: 0 };
          // 40 users calling 1 to 3 times each.
          for (let u = 0; u < 40; u++) {
            const seen = new Set<string>();
            for (let c = 0; c <= u % 3; c++) {
              const { variant } = await api<{ variant: string }>('POST', `/experiment/${slug}/assign`, {
                userId: `user-${u}`,
              });
              if (!seen.has(variant)) users[variant]! += 1;
              seen.add(variant);
              calls[variant]! += 1;
            }
          }
          sent[assignment] = { users, calls };
          // Exposures are written in the background: wait for every call's.
          const total = calls.A! + calls.B!;
          for (let i = 0; ; i++) {
            const a = await api<Analysis>('GET', `/experiment/${slug}/analysis`);
            if (a.exposures.A! + a.exposures.B! === total) break;
            assert.ok(i < 100, `the exposures of ${slug} never reached ${total}`);
            await new Promise((r) => setTimeout(r, 50));
          }
        }
        const sticky = await cli([...root, 'analyze', 'repeat-sticky']);
        assert.equal(sticky.code, 0, sticky.stderr);
        const { users, calls } = sent.sticky!;
        assert.equal(users.A! + users.B!, 40, 'the sticky hash keeps each user in one variant');
        const exposed = `exposed       A ${users.A} users (${calls.A} calls), B ${users.B} users (${calls.B} calls)`;
        assert.ok(sticky.stdout.split('\n').includes(exposed), `${exposed}\n${sticky.stdout}`);
        assert.match(sticky.stdout, new RegExp(`: users A ${users.A}, B ${users.B}$`, 'm'));

        const random = await cli([...root, 'analyze', 'repeat-random']);
        assert.equal(random.code, 0, random.stderr);
        const r = sent.random!.calls;
        assert.ok(
          random.stdout.split('\n').includes(`exposed       A ${r.A} calls, B ${r.B} calls`),
          random.stdout,
        );
      },
    );

    await t.test(
      'analyze says how many more units a metric with an MDE needs; one-sided intervals',
      async () => {
        await api('POST', '/experiments', {
          slug: 'mde',
          status: 'running',
          variants: [
            { key: 'A', payload: {}, trafficPercent: 50 },
            { key: 'B', payload: {}, trafficPercent: 50 },
          ],
          metrics: [
            { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.05 },
          ],
        });
        await api('POST', '/experiment/mde/logs', {
          results: Array.from({ length: 200 }, (_, i) => ({
            variantKey: i % 2 ? 'A' : 'B',
            metrics: { success: i % 5 < 3 },
          })),
        });
        const run = await cli([...root, 'analyze', 'mde', '--sided', 'greater']);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, /^verdict: no-winner-yet — .+$/m);
        assert.match(
          run.stdout,
          /^mde: frequentist, one-sided \(greater\), 95% confidence intervals, bh correction;/m,
        );
        assert.match(
          run.stdout,
          /^B\s+100\s+60%\s+0 points \(≥ -[\d.]+\)\s+0\.00% \(≥ -[\d.]+%\)\s+0\.5\s+not significant$/m,
        );
        assert.match(run.stdout, /^ {2}B needs about [\d,]+ more calls per variant to detect \+5\.0%$/m);
        assert.match(run.stdout, /^sample ratio {2}not checked: calls A 0, B 0$/m);
      },
    );

    await t.test(
      'results export streams the API export to stdout, NDJSON by default, byte for byte',
      async () => {
        const ndjson = await cli([...root, 'results', 'export', 'support-prompt']);
        assert.equal(ndjson.code, 0, ndjson.stderr);
        assert.equal(ndjson.stderr, '');
        const direct = await apiText('/experiment/support-prompt/results/export?format=ndjson');
        assert.equal(ndjson.stdout, direct);
        assert.equal(ndjson.stdout.trimEnd().split('\n').length, users);
        const csv = await cli([
          ...root,
          'results',
          'export',
          'support-prompt',
          '--format',
          'csv',
          '--output',
          '-',
        ]);
        assert.equal(csv.code, 0, csv.stderr);
        assert.equal(csv.stdout, await apiText('/experiment/support-prompt/results/export?format=csv'));
        assert.match(csv.stdout, /^logId,variantKey,/);
      },
    );

    await t.test(
      'results export --output writes the file and says so; nothing is left on failure',
      async () => {
        const file = join(dir, 'results.csv');
        writeFileSync(file, 'an older export\n');
        const run = await cli([
          ...root,
          'results',
          'export',
          'support-prompt',
          '--format',
          'csv',
          '--output',
          file,
        ]);
        assert.equal(run.code, 0, run.stderr);
        const written = readFileSync(file, 'utf8');
        assert.equal(written, await apiText('/experiment/support-prompt/results/export?format=csv'));
        assert.equal(
          run.stdout,
          `exported support-prompt results to ${file} (${Buffer.byteLength(written).toLocaleString('en-US')} bytes, csv)\n`,
        );
        const quiet = await cli([
          ...root,
          '--json',
          'results',
          'export',
          'support-prompt',
          '--output',
          join(dir, 'r.ndjson'),
        ]);
        assert.deepEqual(quiet, { code: 0, stdout: '', stderr: '' });
        assert.equal(
          readFileSync(join(dir, 'r.ndjson'), 'utf8'),
          await apiText('/experiment/support-prompt/results/export'),
        );
        assertFailsWith(
          await cli([
            ...root,
            'results',
            'export',
            'support-prompt',
            '--output',
            join(dir, 'no-dir', 'r.csv'),
          ]),
          `agentsplit: cannot write ${join(dir, 'no-dir', 'r.csv')}: no such directory`,
        );
        assertFailsWith(
          await cli([...root, 'results', 'export', 'support-prompt', '--output', dir]),
          `agentsplit: cannot write ${dir}: it is a directory`,
        );
        assert.deepEqual(
          readdirSync(dir).filter((f) => f.endsWith('.partial')),
          [],
          'no partial file left behind',
        );
        assertFailsWith(
          await cli([...root, 'results', 'export', 'support-prompt', '--format', 'xml']),
          /^agentsplit: option '--format <format>' argument 'xml' is invalid.*\n$/,
        );
      },
    );

    await t.test(
      'experiments list follows nextCursor past one page of 100; --limit across pages',
      async () => {
        const before = (await api<{ experiments: unknown[] }>('GET', '/experiments?limit=100')).experiments
          .length;
        for (let i = 0; i < 101; i++) {
          await api('POST', '/experiments', {
            slug: `bulk-${String(i).padStart(3, '0')}`,
            variants: [{ key: 'A', payload: {}, trafficPercent: 100 }],
          });
        }
        const total = before + 101;
        const run = await cli([...root, 'experiments', 'list']);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stdout.trimEnd().split('\n').length, 1 + total);
        assert.match(run.stdout, /^bulk-100\s+draft\s+random\s+A 100%\s+1\n$/m);
        const json = await cli([...root, '--json', 'experiments', 'list']);
        const listed = JSON.parse(json.stdout) as {
          experiments: { slug: string }[];
          nextCursor: string | null;
        };
        assert.equal(listed.experiments.length, total);
        assert.equal(listed.nextCursor, null);
        const firstPage = JSON.parse(await apiText('/experiments?limit=100')) as typeof listed;
        assert.deepEqual(listed.experiments.slice(0, 100), firstPage.experiments);
        const limited = JSON.parse(
          (await cli([...root, '--json', 'experiments', 'list', '--limit', '102'])).stdout,
        ) as typeof listed;
        assert.equal(limited.experiments.length, 102);
        assert.notEqual(limited.nextCursor, null, 'the cursor to go on from');
      },
    );
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

test('results export cut off midway exits 1 with one line and leaves no file', async () => {
  // A server that starts the export, sends a few lines, then drops the connection.
  const server = createHttpServer((req, res) => {
    if (req.headers['x-api-key'] !== ROOT_KEY) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Unauthorized"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('{"logId":"1"}\n{"logId":"2"}\n');
    setTimeout(() => res.socket?.destroy(), 50);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cut-'));
  try {
    const file = join(dir, 'results.ndjson');
    assertFailsWith(
      await cli(['--url', url, '--key', ROOT_KEY, 'results', 'export', 'x', '--output', file]),
      /^agentsplit: the transfer stopped midway: .+\n$/,
    );
    assert.deepEqual(readdirSync(dir), [], 'neither the file nor a partial one');
    const toStdout = await cli(['--url', url, '--key', ROOT_KEY, 'results', 'export', 'x']);
    assert.equal(toStdout.code, 1);
    assert.equal(toStdout.stdout, '{"logId":"1"}\n{"logId":"2"}\n', 'what arrived, then the error');
    assert.match(toStdout.stderr, /^agentsplit: the transfer stopped midway: .+\n$/);
    assertFailsWith(
      await cli(['--url', url, '--key', 'wrong-key-0123456789', 'results', 'export', 'x']),
      'agentsplit: 401 Unauthorized',
    );
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const closed = `http://127.0.0.1:${await closedPort()}`;
  assertFailsWith(
    await cli(['--url', closed, '--key', ROOT_KEY, 'results', 'export', 'x']),
    `agentsplit: cannot reach ${closed}: connection refused`,
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
