// Who enters from the command line (ADR 0038): `agentsplit target`, `preview`, `layers show`, `groups` and
// the who-enters line of `experiments show`, run as users run them (`node bin/agentsplit.mjs`, a child
// process) against the real server process on a temporary SQLite file. What the CLI prints is checked
// against what the API holds and answers, read directly.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertFailsWith, assertOk, cli } from './helpers/cli.js';
import { startServer } from './helpers/server.js';

const ROOT_KEY = 'cli-entry-root-key-0123456789';

const variants = [
  { key: 'A', payload: { prompt: 'helpful' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'concise' }, trafficPercent: 50 },
];

test('--help lists the who-enters commands and their options', async () => {
  const top = await cli(['--help']);
  assert.equal(top.code, 0);
  for (const command of [
    'target [options] <slug>',
    'preview [options] <slug> <userId>',
    'layers',
    'groups',
  ]) {
    assert.ok(top.stdout.includes(`\n  ${command} `), `--help lists ${command}:\n${top.stdout}`);
  }
  const target = await cli(['target', '--help']);
  for (const option of [
    '--targeting <condition>',
    '--no-targeting',
    '--coverage <percent>',
    '--layer <key:start-end>',
    '--no-layer',
    '--default-variant <key>',
    '--override <variant=ids>',
    '--no-overrides',
  ]) {
    assert.ok(target.stdout.includes(option), `target --help mentions ${option}`);
  }
  const groups = await cli(['groups', '--help']);
  for (const command of ['list', 'show <key>', 'put [options] <key>', 'delete <key>']) {
    assert.ok(groups.stdout.includes(`\n  ${command}`), `groups --help lists ${command}:\n${groups.stdout}`);
  }
});

test('who enters from the command line against a real server', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-cli-entry-'));
  const server = await startServer({
    API_KEY: ROOT_KEY,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
    RATE_LIMIT_PER_SECOND: '0',
  });
  const base = server.baseUrl;
  const root = ['--url', base, '--key', ROOT_KEY];
  const run = (...args: string[]) => cli([...root, ...args]);
  const api = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
    return (text === '' ? {} : JSON.parse(text)) as T;
  };
  const create = (slug: string, extra: object = {}) =>
    api('POST', '/experiments', { slug, status: 'running', assignment: 'sticky', variants, ...extra });
  try {
    await t.test('target sends only the rules given; experiments show has the who-enters line', async () => {
      await create('checkout');
      const fresh = assertOk(await run('experiments', 'show', 'checkout'));
      assert.match(fresh, /^who enters {2}everyone$/m);

      const rule = join(dir, 'rule.json');
      writeFileSync(rule, '{"plan": {"$in": ["pro"]}}');
      const out = assertOk(
        await run(
          'target',
          'checkout',
          '--targeting',
          `@${rule}`,
          '--coverage',
          '20',
          '--layer',
          'prompts:0-0.5',
          '--override',
          'B=qa-1,qa-2',
          '--override',
          'A={"team": "qa"}',
          '--default-variant',
          'B',
        ),
      );
      const summary =
        'targeting {"plan":{"$in":["pro"]}} · coverage 20% · layer prompts [0, 0.5) · 2 overrides · default B';
      assert.equal(out, `experiment checkout (version 2, running)\nwho enters: ${summary}\n`);
      const stored = await api('GET', '/experiment/checkout');
      assert.deepEqual(
        {
          targeting: stored.targeting,
          coverage: stored.coverage,
          layer: stored.layer,
          overrides: stored.overrides,
          defaultVariant: stored.defaultVariant,
          version: stored.version,
        },
        {
          targeting: { plan: { $in: ['pro'] } },
          coverage: 20,
          layer: { key: 'prompts', range: [0, 0.5] },
          overrides: [
            { variant: 'B', userIds: ['qa-1', 'qa-2'] },
            { variant: 'A', condition: { team: 'qa' } },
          ],
          defaultVariant: 'B',
          version: 2,
        },
      );
      assert.match(
        assertOk(await run('experiments', 'show', 'checkout')),
        new RegExp(`^who enters  ${esc(summary)}$`, 'm'),
      );

      // Only what is given changes: coverage alone keeps the rest; the targeting from stdin.
      assertOk(await cli([...root, 'target', 'checkout', '--targeting', '-'], '{"country": "FR"}'));
      const json = JSON.parse(assertOk(await run('--json', 'target', 'checkout', '--coverage', '35.5')));
      // (The fields first: deepEqual narrows json to the type of what it is compared with.)
      assert.deepEqual([json.targeting, json.coverage, json.defaultVariant], [{ country: 'FR' }, 35.5, 'B']);
      assert.equal(json.overrides.length, 2);
      assert.deepEqual(json, await api('GET', '/experiment/checkout'), '--json prints the API answer');

      // An override and the default change what is served, not who is randomized: no new version.
      const before = json.version;
      const noOverrides = assertOk(await run('target', 'checkout', '--no-overrides', '--no-default-variant'));
      assert.match(noOverrides, new RegExp(`\\(version ${before}, running\\)`));
      const cleared = assertOk(
        await run('target', 'checkout', '--no-targeting', '--no-layer', '--coverage', '100'),
      );
      assert.match(cleared, /\nwho enters: everyone\n$/);

      // A long condition is cut on the show line; --json has it whole.
      const long = { tier: { $in: Array.from({ length: 40 }, (_, i) => `tier-${i}`) } };
      assertOk(await run('target', 'checkout', '--targeting', JSON.stringify(long)));
      const shown = assertOk(await run('experiments', 'show', 'checkout'));
      const line = shown.split('\n').find((l) => l.startsWith('who enters'))!;
      assert.match(line, /^who enters {2}targeting \{"tier":\{"\$in":\["tier-0",.*…$/);
      assert.equal(line.length, 'who enters  targeting '.length + 80);
    });

    await t.test('target refuses bad JSON and bad specs before any request', async () => {
      await create('refused');
      const version = (await api('GET', '/experiment/refused')).version;
      assertFailsWith(
        await run('target', 'refused', '--targeting', '{plan: pro}'),
        /^agentsplit: --targeting is not valid JSON: /,
      );
      assertFailsWith(
        await run('target', 'refused', '--targeting', '["pro"]'),
        'agentsplit: --targeting must be a JSON object, e.g. {"plan": "pro"}',
      );
      for (const spec of ['prompts', 'prompts:0.5', 'prompts:0.6-0.4', 'prompts:0-1.5', ':0-1']) {
        assertFailsWith(
          await run('target', 'refused', '--layer', spec),
          `agentsplit: invalid --layer '${spec}': expected key:start-end with 0 <= start < end <= 1, e.g. prompts:0-0.5`,
        );
      }
      assertFailsWith(
        await run('target', 'refused', '--coverage', '120'),
        "agentsplit: invalid --coverage '120': expected a percentage from 0 to 100",
      );
      assertFailsWith(
        await run('target', 'refused', '--override', 'B'),
        "agentsplit: invalid --override 'B': expected variant=id,id,... or variant={condition}",
      );
      assertFailsWith(await run('target', 'refused'), /^agentsplit: nothing to change: /);
      assertFailsWith(
        await run('target', 'refused', '--targeting', `@${join(dir, 'missing.json')}`),
        /^agentsplit: cannot read .*missing\.json: no such file\n$/,
      );
      assert.equal((await api('GET', '/experiment/refused')).version, version, 'nothing was sent');
    });

    await t.test("target prints the server's 400 naming the path and 409 on a layer overlap", async () => {
      await create('other');
      assertFailsWith(
        await run('target', 'other', '--targeting', '{"plan": {"$bogus": 1}}'),
        'agentsplit: 400 targeting.plan.$bogus: unknown operator $bogus',
      );
      assertFailsWith(
        await run('target', 'other', '--override', 'C=u1'),
        'agentsplit: 400 overrides[0].variant must name a variant (A, B)',
      );
      await create('first', { layer: { key: 'onboarding', range: [0, 0.5] } });
      assertFailsWith(
        await run('target', 'other', '--layer', 'onboarding:0.4-1'),
        "agentsplit: 409 layer 'onboarding' range [0.4, 1) overlaps running experiment 'first' ([0, 0.5)); free ranges of 'onboarding': [0.5, 1)",
      );
      assert.equal((await api('GET', '/experiment/other')).layer, null);
      assertOk(await run('target', 'other', '--layer', 'onboarding:0.5-1'));
    });

    await t.test('layers show lists the experiments and ranges, then the free ranges', async () => {
      await create('third', { status: 'draft', layer: { key: 'tools', range: [0.25, 0.5] } });
      await create('fourth', { layer: { key: 'tools', range: [0, 0.2] } });
      const out = assertOk(await run('layers', 'show', 'tools'));
      const answer = await api<{ free: number[][] }>('GET', '/layers/tools');
      assert.deepEqual(answer.free, [[0.2, 1]], 'a draft takes no range');
      assert.equal(
        out,
        [
          'EXPERIMENT  STATUS   RANGE',
          'fourth      running  [0, 0.2)',
          'third       draft    [0.25, 0.5)',
          'free: [0.2, 1)',
          '',
        ].join('\n'),
      );
      assert.deepEqual(JSON.parse(assertOk(await run('--json', 'layers', 'show', 'tools'))), answer);
      assert.equal(
        assertOk(await run('layers', 'show', 'unused')),
        'no experiments use layer unused\nfree: [0, 1)\n',
      );
    });

    await t.test('preview: a unit kept out, an override, an entered unit; errors', async () => {
      await create('preview-me', {
        targeting: { plan: { $in: ['pro', 'team'] } },
        overrides: [{ variant: 'B', userIds: ['qa-1'] }],
      });
      const context = '{"plan": "free"}';
      const out = assertOk(await run('preview', 'preview-me', 'user-1', '--context', context));
      const kept = await api<{ explanation: string }>('POST', '/experiment/preview-me/preview', {
        userId: 'user-1',
        context: { plan: 'free' },
      });
      assert.match(kept.explanation, /^targeting: /);
      assert.equal(out, `variant A · not in the experiment (targeting)\n${kept.explanation}\n`);

      assert.match(
        assertOk(await run('preview', 'preview-me', 'qa-1')),
        /^variant B · not in the experiment \(override\)\n/,
      );

      const entered = await api<{ variant: string; explanation: string }>(
        'POST',
        '/experiment/preview-me/preview',
        { userId: 'user-2', context: { plan: 'pro' } },
      );
      const enteredOut = assertOk(
        await run('preview', 'preview-me', 'user-2', '--context', '{"plan":"pro"}'),
      );
      assert.equal(enteredOut, `variant ${entered.variant} · in the experiment\n${entered.explanation}\n`);
      const json = JSON.parse(
        assertOk(await run('--json', 'preview', 'preview-me', 'user-2', '--context', '{"plan":"pro"}')),
      );
      assert.deepEqual([json.inExperiment, json.reason, json.status], [true, null, 'running']);
      assert.deepEqual(json, entered, '--json prints the API answer (sticky: the same every time)');

      assertFailsWith(
        await run('preview', 'preview-me', 'user-1', '--context', '{plan'),
        /^agentsplit: --context is not valid JSON: /,
      );
      assertFailsWith(
        await run('preview', 'nope', 'user-1'),
        "agentsplit: 404 no experiment with slug 'nope'",
      );
    });
    await t.test('groups put, list, show and delete; a condition using one; 409 while used', async () => {
      assert.equal(assertOk(await run('groups', 'list')), 'no saved groups\n');
      const put = await run('groups', 'put', 'beta', '--values', 'u1, u2,u3', '--description', 'opted in');
      assert.equal(assertOk(put), 'saved group beta: 3 values\n');
      const lines = join(dir, 'ids.txt');
      writeFileSync(lines, 'a\n\n b \nc\n');
      assert.equal(
        assertOk(await run('groups', 'put', 'lines', '--file', lines)),
        'saved group lines: 3 values\n',
      );
      const array = join(dir, 'ids.json');
      writeFileSync(array, '[1, 2, "x"]');
      assertOk(await run('groups', 'put', 'numbers', '--file', array));
      assert.deepEqual((await api('GET', '/groups/lines')).values, ['a', 'b', 'c']);
      assert.deepEqual((await api('GET', '/groups/numbers')).values, [1, 2, 'x']);

      await create('grouped');
      assertOk(await run('target', 'grouped', '--targeting', '{"userId": {"$inGroup": "beta"}}'));
      assert.match(assertOk(await run('preview', 'grouped', 'u2')), /^variant [AB] · in the experiment\n/);
      assert.match(
        assertOk(await run('preview', 'grouped', 'u9')),
        /^variant A · not in the experiment \(targeting\)\n/,
      );

      const listed = await api<{ groups: { key: string; usedBy: string[] }[] }>('GET', '/groups');
      assert.deepEqual(JSON.parse(assertOk(await run('--json', 'groups', 'list'))), listed);
      const table = assertOk(await run('groups', 'list')).split('\n');
      assert.match(table[0]!, /^KEY +SIZE +USED BY +UPDATED +DESCRIPTION$/);
      assert.match(table.find((l) => l.startsWith('beta '))!, /^beta +3 +grouped +\S+ +opted in$/);
      assert.match(table.find((l) => l.startsWith('lines '))!, /^lines +3 +no experiment +\S+$/);
      const shown = assertOk(await run('groups', 'show', 'beta'));
      assert.match(shown, /^used by +grouped$/m);
      assert.match(shown, /^values +u1, u2, u3$/m);
      assert.deepEqual(
        JSON.parse(assertOk(await run('--json', 'groups', 'show', 'beta'))),
        await api('GET', '/groups/beta'),
      );

      assertFailsWith(await run('groups', 'delete', 'beta'), /^agentsplit: 409 .*grouped/);
      assertFailsWith(
        await run('target', 'grouped', '--targeting', '{"userId": {"$inGroup": "nobody"}}'),
        /^agentsplit: 400 .*nobody/,
      );
      assertFailsWith(
        await run('groups', 'put', 'bad'),
        'agentsplit: give the ids with --values a,b,c or --file <path> (one of them)',
      );
      writeFileSync(array, '[{"id": 1}]');
      assertFailsWith(
        await run('groups', 'put', 'bad', '--file', array),
        `agentsplit: ${array} must hold a JSON array of strings and numbers (or one id per line)`,
      );
      assert.equal(assertOk(await run('groups', 'delete', 'lines')), 'deleted group lines\n');
      assertFailsWith(await run('groups', 'show', 'lines'), /^agentsplit: 404 /);
    });
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A literal string as a RegExp source. */
function esc(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
