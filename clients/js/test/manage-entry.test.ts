// The management calls of ADR 0038 (saved groups, layers, preview, the entry fields on create/update),
// checked at the unit level against a stand-in that records each request: the method, the path (keys
// encoded), the body, and what comes back, including the server's {"error"} as an AgentSplitError.
// Preview and layers are also checked against the real server (entry-server.test.ts); the saved-group
// routes were not on main when this was written.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON bodies
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { AgentSplit, AgentSplitError } from '../src/index.js';
import { memoryLogger } from './server.js';

interface Seen {
  method: string;
  url: string;
  body: any;
}
let server: Server;
let client: AgentSplit;
let seen: Seen[] = [];
/** What the stand-in answers next: a status and a JSON body (undefined: none). */
let reply: { status: number; body?: unknown } = { status: 200, body: {} };

before(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += d;
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body: text === '' ? undefined : JSON.parse(text) });
      res.statusCode = reply.status;
      if (reply.body === undefined) res.end();
      else {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply.body));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  client = new AgentSplit({ baseUrl, apiKey: 'k', logger: memoryLogger() });
});

after(async () => {
  await client.close();
  await new Promise<void>((r) => server.close(() => r()));
});

function expect(status: number, body?: unknown): void {
  seen = [];
  reply = { status, body };
}

test('saveGroup: PUT /groups/:key with values and description', async () => {
  const group = {
    key: 'beta testers',
    description: 'early',
    size: 2,
    usedBy: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    values: ['u1', 2],
  };
  expect(200, group);
  assert.deepEqual(
    await client.saveGroup('beta testers', { values: ['u1', 2], description: 'early' }),
    group,
  );
  assert.deepEqual(seen, [
    { method: 'PUT', url: '/groups/beta%20testers', body: { values: ['u1', 2], description: 'early' } },
  ]);
  expect(200, group);
  await client.saveGroup('beta testers', { values: ['u1', 2] });
  assert.deepEqual(seen[0]!.body, { values: ['u1', 2] });
});

test('listGroups and getGroup: GET /groups (summaries), GET /groups/:key (with values)', async () => {
  const summary = {
    key: 'beta',
    description: '',
    size: 1,
    usedBy: ['checkout'],
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
  expect(200, { groups: [summary] });
  assert.deepEqual(await client.listGroups(), [summary]);
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url}`),
    ['GET /groups'],
  );
  expect(200, { ...summary, values: ['a'] });
  assert.deepEqual(await client.getGroup('beta'), { ...summary, values: ['a'] });
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url} ${s.body}`),
    ['GET /groups/beta undefined'],
  );
});

test('deleteGroup: DELETE /groups/:key, 204 or 200; a 409 is an AgentSplitError with the server error', async () => {
  expect(204);
  assert.equal(await client.deleteGroup('beta'), undefined);
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url}`),
    ['DELETE /groups/beta'],
  );
  expect(200, { deleted: true });
  await client.deleteGroup('beta');
  expect(409, { error: 'group beta is used by experiment checkout' });
  await assert.rejects(client.deleteGroup('beta'), (err: unknown) => {
    assert.ok(err instanceof AgentSplitError);
    assert.equal(err.status, 409);
    assert.equal(err.error, 'group beta is used by experiment checkout');
    return true;
  });
});

test('getLayer: GET /layers/:key', async () => {
  const layer = {
    key: 'prompts',
    experiments: [{ experiment: 'a', status: 'running', range: [0, 0.5] }],
    free: [[0.5, 1]],
  };
  expect(200, layer);
  assert.deepEqual(await client.getLayer('prompts'), layer);
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url}`),
    ['GET /layers/prompts'],
  );
});

test('preview: POST /experiment/:slug/preview {userId, context}', async () => {
  const answer = {
    variant: 'control',
    payload: { p: 1 },
    inExperiment: false,
    reason: 'targeting',
    explanation: 'targeting: `plan` is "free", rule wants {"$in":["pro","team"]}',
    status: 'running',
  };
  expect(200, answer);
  assert.deepEqual(await client.preview('my exp', 'u-1', { plan: 'free' }), answer);
  assert.deepEqual(seen, [
    {
      method: 'POST',
      url: '/experiment/my%20exp/preview',
      body: { userId: 'u-1', context: { plan: 'free' } },
    },
  ]);
  await client.preview('my exp', 'u-1');
  assert.deepEqual(seen[1]!.body, { userId: 'u-1' });
});

test('createExperiment and updateExperiment carry the entry fields', async () => {
  const entry = {
    targeting: { plan: { $in: ['pro'] } },
    coverage: 10,
    layer: { key: 'prompts', range: [0, 0.5] as [number, number] },
    overrides: [
      { variant: 'B', userIds: ['qa'] },
      { variant: 'A', condition: { email: { $exists: true } } },
    ],
    defaultVariant: 'A',
  };
  expect(201, { slug: 'x' });
  await client.createExperiment({
    slug: 'x',
    variants: [
      { key: 'A', trafficPercent: 50, payload: {} },
      { key: 'B', trafficPercent: 50, payload: {} },
    ],
    ...entry,
  });
  assert.deepEqual(
    { ...seen[0]!.body, slug: undefined, variants: undefined },
    {
      ...entry,
      slug: undefined,
      variants: undefined,
    },
  );
  expect(200, { slug: 'x' });
  await client.updateExperiment('x', { coverage: 50, targeting: null, defaultVariant: null });
  assert.deepEqual(seen[0], {
    method: 'PATCH',
    url: '/experiment/x',
    body: { coverage: 50, targeting: null, defaultVariant: null },
  });
});
