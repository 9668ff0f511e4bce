// The client's entry evaluation against the real server's (ADR 0038): an experiment with every rule
// (overrides by id and by condition, a layer, targeting, coverage, a defaultVariant) made through the
// client's createExperiment; then, for 1,500 users with varied contexts, the server's assign and the
// client's local evaluation of the same rules give the same variant, inExperiment and reason, and the
// server's ids carry the `x` mark exactly when the unit did not enter. Preview and GET /layers/:key through
// the client's calls, and a layer overlap refused.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { savedGroups } from '../src/conditions.js';
import { readAssignmentId } from '../src/conformance.js';
import { AgentSplit, AgentSplitError, type EntryRules } from '../src/index.js';
import { compileDefinition, evaluate } from '../src/local.js';
import { memoryLogger, ROOT_KEY, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

test('1,500 users: the local evaluation equals the server on variant, inExperiment and reason', async () => {
  const clients: AgentSplit[] = [];
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: memoryLogger() });
  try {
    const rules: EntryRules = {
      targeting: { $or: [{ plan: { $in: ['pro', 'team'] } }, { country: { $regex: '^(FR|DE)$' } }] },
      coverage: 60,
      layer: { key: 'prompts', range: [0.1, 0.9] },
      overrides: [
        { variant: 'C', userIds: ['qa-1', 'qa-2'] },
        { variant: 'A', condition: { email: { $regex: '@qa\\.example$' } } },
      ],
      defaultVariant: 'B',
    };
    const created = await client.createExperiment({
      slug: 'entry-cross',
      status: 'running',
      assignment: 'sticky',
      variants: [
        { key: 'A', trafficPercent: 20, payload: { p: 'a' } },
        { key: 'B', trafficPercent: 30, payload: { p: 'b' } },
        { key: 'C', trafficPercent: 50, payload: { p: 'c' } },
      ],
      ...rules,
    });
    assert.deepEqual(
      {
        targeting: created.targeting,
        coverage: created.coverage,
        layer: created.layer,
        overrides: created.overrides,
        defaultVariant: created.defaultVariant,
      },
      rules,
    );
    const defs = (await server.api('GET', '/experiments/definitions')).body.experiments as any[];
    const def = defs.find((d) => d.slug === 'entry-cross');
    // The rules as the definitions will carry them (the server's answer may already have them).
    const c = compileDefinition({ ...rules, ...def });
    const key = def.assignmentIdKey as number;
    // The server's definitions carry the rules themselves (ADR 0038): a local client assigns from them.
    assert.deepEqual(def.coverage, 60);
    const localClient = new AgentSplit({
      baseUrl: server.baseUrl,
      apiKey: ROOT_KEY,
      local: true,
      logger: memoryLogger(),
    });
    await localClient.refreshDefinitions();
    clients.push(localClient);

    const plans = ['free', 'pro', 'team', undefined];
    const countries = ['FR', 'DE', 'US', 'FRA'];
    const counts = new Map<string, number>();
    for (let i = 0; i < 1500; i++) {
      const userId = i % 250 === 0 ? 'qa-2' : `user-${i}`;
      const context: Record<string, string> = { country: countries[i % 4]! };
      const plan = plans[(i >> 2) % 4];
      if (plan !== undefined) context.plan = plan;
      if (i % 97 === 0) context.email = `t${i}@qa.example`;
      const remote = await client.assign('entry-cross', userId, { context });
      assert.equal(remote.source, 'server');
      const local = evaluate(c, userId, context, savedGroups({}));
      const viaClient = localClient.assignLocal('entry-cross', userId, { context });
      assert.deepEqual(
        [viaClient.source, viaClient.variant, viaClient.inExperiment, viaClient.reason],
        ['local', remote.variant, remote.inExperiment, remote.reason],
      );
      const want = {
        variant: c.keys[local.index],
        inExperiment: local.inExperiment,
        reason: local.reason,
      };
      assert.deepEqual(
        { variant: remote.variant, inExperiment: remote.inExperiment, reason: remote.reason },
        want,
        `${userId} ${JSON.stringify(context)}`,
      );
      const read = readAssignmentId(remote.assignmentId, key);
      assert.ok(read, remote.assignmentId);
      assert.equal(read.inExperiment, local.inExperiment);
      assert.equal(read.variantIndex, local.index);
      const k = local.reason ?? 'entered';
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    // Every step decided some of them.
    for (const k of ['override', 'layer', 'targeting', 'coverage', 'entered']) {
      assert.ok((counts.get(k) ?? 0) > 10, `${k}: ${JSON.stringify([...counts])}`);
    }
  } finally {
    await client.close();
    for (const c of clients) await c.close();
  }
});

test('preview and getLayer against the real routes; a layer overlap is a 409', async () => {
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: memoryLogger() });
  try {
    const rules: EntryRules = {
      targeting: { plan: { $in: ['pro', 'team'] } },
      layer: { key: 'checkout', range: [0, 0.5] },
      overrides: [{ variant: 'B', userIds: ['qa-1'] }],
      defaultVariant: 'A',
    };
    const variants = [
      { key: 'A', trafficPercent: 50, payload: { p: 'a' } },
      { key: 'B', trafficPercent: 50, payload: { p: 'b' } },
    ];
    await client.createExperiment({
      slug: 'preview-me',
      status: 'draft',
      assignment: 'sticky',
      variants,
      ...rules,
    });
    const def = compileDefinition({
      slug: 'preview-me',
      assignmentIdKey: 1,
      version: 1,
      assignment: 'sticky',
      seed: (await client.getExperiment('preview-me')).seed,
      variants,
      ...rules,
    });
    // A draft previews too; each answer equals the local evaluation.
    for (let i = 0; i < 60; i++) {
      const userId = i === 0 ? 'qa-1' : `p-${i}`;
      const context = { plan: i % 2 === 0 ? 'pro' : 'free' };
      const p = await client.preview('preview-me', userId, context);
      const e = evaluate(def, userId, context, savedGroups({}));
      assert.deepEqual([p.variant, p.inExperiment, p.reason], [def.keys[e.index], e.inExperiment, e.reason]);
      assert.equal(p.status, 'draft');
      assert.equal(typeof p.explanation, 'string');
      if (e.reason === 'targeting') assert.match(p.explanation, /plan/);
    }
    await client.updateExperiment('preview-me', { status: 'running' });
    assert.deepEqual(await client.getLayer('checkout'), {
      key: 'checkout',
      experiments: [{ experiment: 'preview-me', status: 'running', range: [0, 0.5] }],
      free: [[0.5, 1]],
    });
    await assert.rejects(
      client.createExperiment({
        slug: 'overlaps',
        status: 'running',
        variants,
        layer: { key: 'checkout', range: [0.4, 0.7] },
      }),
      (err: unknown) => err instanceof AgentSplitError && err.status === 409 && /preview-me/.test(err.error),
    );
    await assert.rejects(client.preview('no-such', 'u'), (err: unknown) => {
      return err instanceof AgentSplitError && err.status === 404;
    });
  } finally {
    await client.close();
  }
});

test('saved groups end to end: save, read, a targeting on $inGroup evaluated locally as by the server, delete refused while used', async (t) => {
  const client = new AgentSplit({ baseUrl: server.baseUrl, apiKey: ROOT_KEY, logger: memoryLogger() });
  const local = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    local: true,
    logger: memoryLogger(),
  });
  try {
    if ((await server.api('GET', '/groups')).status === 404) {
      t.skip('the server has no /groups routes yet');
      return;
    }
    const values = Array.from({ length: 300 }, (_, i) => `g-${i * 2}`);
    const saved = await client.saveGroup('beta', { values, description: 'even users' });
    assert.equal(saved.key, 'beta');
    assert.deepEqual((await client.getGroup('beta')).values, values);
    assert.ok((await client.listGroups()).some((g) => g.key === 'beta'));
    await client.createExperiment({
      slug: 'grouped',
      status: 'running',
      assignment: 'sticky',
      variants: [
        { key: 'A', trafficPercent: 50, payload: {} },
        { key: 'B', trafficPercent: 50, payload: {} },
      ],
      targeting: { userId: { $inGroup: 'beta' } },
      coverage: 70,
    });
    await local.refreshDefinitions();
    const kept = new Set<string | null>();
    for (let i = 0; i < 400; i++) {
      const userId = `g-${i}`;
      const remote = await client.assign('grouped', userId);
      const here = local.assignLocal('grouped', userId);
      assert.deepEqual(
        [here.source, here.variant, here.inExperiment, here.reason],
        ['local', remote.variant, remote.inExperiment, remote.reason],
        userId,
      );
      kept.add(here.reason);
    }
    assert.deepEqual([...kept].sort(), ['coverage', 'targeting', null].sort());
    await assert.rejects(client.deleteGroup('beta'), (err: unknown) => {
      return err instanceof AgentSplitError && err.status === 409;
    });
  } finally {
    await client.close();
    await local.close();
  }
});
