// Management and reading from the client (issue 26): createExperiment, getExperiment, updateExperiment and
// analysis against a real server process, with the root key and with admin and read keys. Unlike the hot
// path they reject, with an AgentSplitError carrying the status and the server's message.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AgentSplit, AgentSplitError, type MetricDefinition } from '../src/index.js';
import { memoryLogger, ROOT_KEY, startServer, type TestServer } from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

const VARIANTS = [
  { key: 'big', payload: { model: 'big' }, trafficPercent: 50 },
  { key: 'small', payload: { model: 'small' }, trafficPercent: 50 },
];

function client(apiKey = ROOT_KEY): AgentSplit {
  return new AgentSplit({ baseUrl: server.baseUrl, apiKey, logger: memoryLogger(), flushOnExit: false });
}

async function key(scopes: string[]): Promise<string> {
  const res = await server.api('POST', '/keys', { name: `k-${scopes.join('-')}`, scopes });
  assert.equal(res.status, 201);
  return res.body.key;
}

/** Awaits `p`, which must reject with an AgentSplitError of `status` whose error matches `error`. */
async function refused(p: Promise<unknown>, status: number, error: RegExp): Promise<AgentSplitError> {
  const err = await p.then(
    () => assert.fail('expected an AgentSplitError'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AgentSplitError, String(err));
  assert.equal(err.status, status, err.message);
  assert.match(err.error, error);
  assert.match(err.message, new RegExp(`${status === 0 ? 'failed' : `answered ${status}`}: `));
  return err;
}

test('createExperiment, getExperiment and updateExperiment answer the experiment as the server has it', async () => {
  const c = client();
  const created = await c.createExperiment({
    slug: 'model-size',
    name: 'Big or small model',
    status: 'running',
    assignment: 'sticky',
    variants: VARIANTS,
    metrics: [{ name: 'rating', direction: 'increase', role: 'primary' }],
  });
  assert.equal(created.slug, 'model-size');
  assert.equal(created.status, 'running');
  assert.equal(created.active, true);
  assert.equal(created.version, 1);
  assert.deepEqual(
    created.variants.map((v) => v.key),
    ['big', 'small'],
  );
  assert.deepEqual(created.metrics, [{ name: 'rating', direction: 'increase', role: 'primary' }]);
  const read = await c.getExperiment('model-size');
  assert.deepEqual(read, created);
  const updated = await c.updateExperiment('model-size', {
    status: 'paused',
    description: 'cost vs quality',
  });
  assert.equal(updated.status, 'paused');
  assert.equal(updated.description, 'cost vs quality');
  assert.deepEqual(await c.getExperiment('model-size'), updated);
  const viaApi = await server.api('GET', '/experiment/model-size');
  assert.deepEqual(viaApi.body, updated, 'the same as the API answers');
  await c.close();
});

test('errors reject with the status and the server message', async () => {
  const c = client();
  await c.createExperiment({ slug: 'twice', variants: VARIANTS });
  await refused(c.createExperiment({ slug: 'twice', variants: VARIANTS }), 409, /twice/);
  await refused(c.getExperiment('no-such-experiment'), 404, /no experiment with slug 'no-such-experiment'/);
  await refused(c.updateExperiment('no-such-experiment', { name: 'x' }), 404, /no-such-experiment/);
  await refused(c.updateExperiment('twice', { status: 'bogus' as never }), 400, /status must be one of/);
  await refused(c.analysis('twice', { alpha: 2 }), 400, /alpha/);
  await refused(c.analysis('no-such-experiment'), 404, /no-such-experiment/);
  const down = new AgentSplit({ baseUrl: 'http://127.0.0.1:9', apiKey: ROOT_KEY, logger: memoryLogger() });
  await refused(down.getExperiment('twice'), 0, /./);
  await c.close();
  await refused(c.getExperiment('twice'), 0, /the client is closed/);
});

test('analysis answers the verdict first, and takes the analysis options', async () => {
  const c = client();
  await c.createExperiment({
    slug: 'analysed',
    status: 'running',
    variants: VARIANTS,
    metrics: [{ name: 'rating', direction: 'increase', role: 'primary' }],
  });
  for (let i = 0; i < 40; i++) {
    const a = await c.assign('analysed', `user-${i}`);
    c.log('analysed', {
      variantKey: a.variant,
      assignmentId: a.assignmentId,
      metrics: { rating: a.variant === 'small' ? 4 + (i % 2) : 2 + (i % 3), latency_ms: 100 + i },
    });
  }
  assert.equal(await c.flush(), true);
  const analysis = await c.analysis('analysed');
  assert.equal(Object.keys(analysis)[0], 'verdict');
  assert.equal(typeof analysis.verdict.status, 'string');
  assert.equal(typeof analysis.verdict.summary, 'string');
  const direct = await server.api('GET', '/experiment/analysed/analysis');
  assert.deepEqual(analysis, direct.body, 'the same content as the API answers');
  const rating = analysis.metrics.find((m) => m.name === 'rating')!;
  assert.equal(
    rating.variants.reduce((n, v) => n + v.n, 0),
    40,
  );
  const bayes = await c.analysis('analysed', {
    method: 'bayesian',
    metrics: ['latency_ms'],
    control: 'small',
  });
  assert.equal(bayes.method, 'bayesian');
  assert.equal(bayes.control, 'small');
  assert.deepEqual(
    bayes.metrics.map((m) => m.name),
    ['latency_ms'],
  );
  await c.close();
});

test('a ratio, a cap and a covariate are declared and answered in their typed fields', async () => {
  const c = client();
  const metrics: MetricDefinition[] = [
    { name: 'cost_per_success', direction: 'decrease', numerator: 'cost_usd', denominator: 'success' },
    { name: 'cost_usd', direction: 'decrease', cap: { percentile: 90 } },
    { name: 'latency_ms', direction: 'decrease', covariate: 'input_tokens' },
  ];
  const created = await c.createExperiment({
    slug: 'derived',
    status: 'running',
    assignment: 'sticky',
    variants: VARIANTS,
    metrics,
  });
  assert.deepEqual(
    created.metrics,
    metrics.map((m) => ({ ...m, role: 'secondary' })),
  );
  for (let u = 0; u < 60; u++) {
    const variantKey = u % 2 === 0 ? 'big' : 'small';
    for (let call = 0; call < 2; call++) {
      const tokens = 100 + ((u * 37) % 200);
      c.log('derived', {
        variantKey,
        userId: `user-${u}`,
        metrics: {
          input_tokens: tokens,
          latency_ms: 500 + 2 * tokens + ((u * 7 + call * 3) % 11),
          cost_usd: u % 10 === 0 ? 0.05 : 0.004 + (u % 5) / 1000,
          success: (u + call) % 3 !== 0,
        },
      });
    }
  }
  assert.equal(await c.flush(), true);
  const analysis = await c.analysis('derived');
  const metric = (name: string) => analysis.metrics.find((m) => m.name === name)!;
  assert.deepEqual(metric('cost_per_success').ratio, { numerator: 'cost_usd', denominator: 'success' });
  const cost = metric('cost_usd');
  assert.equal(cost.cap?.percentile, 90);
  assert.ok((cost.cap?.units ?? 0) > 0, 'the heaviest users are capped');
  assert.equal(typeof cost.variants[0]?.capped?.share, 'number');
  const latency = metric('latency_ms');
  assert.equal(latency.adjustment?.covariate, 'input_tokens');
  assert.equal(latency.adjustment?.adjusted, true);
  assert.ok((latency.adjustment?.varianceReduction ?? 0) > 0.5);
  const treatment = latency.variants[1]!;
  assert.equal(typeof treatment.unadjusted?.pValue, 'number');
  assert.equal(typeof treatment.unadjusted?.relative?.estimate, 'number');
  await c.close();
});

test('an admin key manages, a read key reads, an agent key (assign, log) is refused with 403', async () => {
  const admin = client(await key(['admin']));
  const reader = client(await key(['read']));
  const agent = client(await key(['assign', 'log']));
  const made = await admin.createExperiment({ slug: 'by-admin', variants: VARIANTS });
  assert.equal(made.slug, 'by-admin');
  assert.equal((await admin.updateExperiment('by-admin', { status: 'running' })).status, 'running');
  assert.equal((await reader.getExperiment('by-admin')).status, 'running');
  assert.equal(Object.keys(await reader.analysis('by-admin'))[0], 'verdict');
  await refused(
    reader.createExperiment({ slug: 'by-reader', variants: VARIANTS }),
    403,
    /lacks the 'admin' scope/,
  );
  await refused(reader.updateExperiment('by-admin', { name: 'x' }), 403, /admin/);
  await refused(agent.analysis('by-admin'), 403, /lacks the 'read' scope/);
  await refused(agent.getExperiment('by-admin'), 403, /read/);
  for (const c of [admin, reader, agent]) await c.close();
});
