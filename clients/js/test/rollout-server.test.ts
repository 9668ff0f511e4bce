// A rollout (issue 38) in the client's local evaluation, against the real server: while a rollout ramps
// a variant, the definitions carry its split and the local evaluation gives every user the variant the
// server's assign gives (sticky and random experiments alike: the rollout hashes the unit); after a
// rollback, one refresh later, everyone gets the control locally too.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AgentSplit } from '../src/index.js';
import { memoryLogger, ROOT_KEY, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

for (const assignment of ['sticky', 'random'] as const) {
  test(`${assignment}: the local evaluation follows the rollout's step, then its rollback`, async () => {
    const slug = `rollout-${assignment}`;
    const created = await server.api('POST', '/experiments', {
      slug,
      status: 'running',
      assignment,
      variants: [
        { key: 'A', trafficPercent: 50, payload: { p: 'a' } },
        { key: 'B', trafficPercent: 50, payload: { p: 'b' } },
      ],
    });
    assert.equal(created.status, 201);
    const started = await server.api('POST', `/experiment/${slug}/rollout`, {
      variant: 'B',
      steps: [{ percent: 30 }, { percent: 100 }],
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const client = new AgentSplit({
      baseUrl: server.baseUrl,
      apiKey: ROOT_KEY,
      local: true,
      logger: memoryLogger(),
    });
    try {
      await client.refreshDefinitions();
      const def = ((await server.api('GET', '/experiments/definitions')).body.experiments as any[]).find(
        (d) => d.slug === slug,
      );
      assert.deepEqual(def.rollout, { variant: 'B', control: 'A', seed: `${slug}:rollout:B`, percent: 30 });
      let inB = 0;
      for (let i = 0; i < 600; i++) {
        const userId = `user-${i}`;
        const remote = await server.api('POST', `/experiment/${slug}/assign`, { userId });
        const local = client.assignLocal(slug, userId);
        assert.equal(local.source, 'local');
        assert.equal(local.variant, remote.body.variant, userId);
        if (local.variant === 'B') inB++;
      }
      assert.ok(inB > 120 && inB < 240, `${inB} of 600 in B at 30%`);
      const back = await server.api('PATCH', `/experiment/${slug}/rollout`, { action: 'rollback' });
      assert.equal(back.status, 200);
      await client.refreshDefinitions();
      for (let i = 0; i < 100; i++) assert.equal(client.assignLocal(slug, `user-${i}`).variant, 'A');
    } finally {
      await client.close();
    }
  });
}
