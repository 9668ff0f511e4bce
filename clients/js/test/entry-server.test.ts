// The client's entry evaluation against the real server's (ADR 0038): an experiment with every rule
// (overrides by id and by condition, a layer, targeting, coverage, a defaultVariant) made through the
// client's createExperiment; then, for 1,500 users with varied contexts, the server's assign and the
// client's local evaluation of the same rules give the same variant, inExperiment and reason, and the
// server's ids carry the `x` mark exactly when the unit did not enter.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { savedGroups } from '../src/conditions.js';
import { readAssignmentId } from '../src/conformance.js';
import { AgentSplit, type EntryRules } from '../src/index.js';
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
  }
});
