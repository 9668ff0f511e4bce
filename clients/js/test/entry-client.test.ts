// Who enters, through the client: a stand-in for the server's definitions (the ADR 0038 fields and the
// top-level groups) and exposures routes, so the client's local assign is checked end to end: marked ids,
// no exposure for units that did not enter, groups from the answer, a pathological regex answered at once,
// and remote mode passing the server's inExperiment and reason through.
// biome-ignore-all lint/suspicious/noExplicitAny: JSON bodies
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { readAssignmentId } from '../src/conformance.js';
import { AgentSplit } from '../src/index.js';
import { memoryLogger } from './server.js';

const KEY = 99_001;
const definition = {
  slug: 'entry',
  assignmentIdKey: KEY,
  version: 2,
  assignment: 'sticky',
  seed: 'entry-seed',
  variants: [
    { key: 'control', trafficPercent: 50, payload: { p: 'c' } },
    { key: 'treat', trafficPercent: 50, payload: { p: 't' } },
  ],
  targeting: { $or: [{ plan: { $in: ['pro', 'team'] } }, { userId: { $inGroup: 'beta' } }] },
  coverage: 100,
  layer: null,
  overrides: [{ variant: 'treat', userIds: ['qa-1'] }],
  defaultVariant: 'control',
};
const regex = {
  ...definition,
  slug: 'regex',
  targeting: { name: { $regex: '(a+)+$' } },
  overrides: [],
};

let server: Server;
let baseUrl = '';
const exposures: any[] = [];
let remoteAnswer: any = {};

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && req.url === '/experiments/definitions') {
        res.end(JSON.stringify({ experiments: [definition, regex], groups: { beta: ['beta-1', 'beta-2'] } }));
      } else if (req.method === 'POST' && req.url === '/exposures') {
        exposures.push(...JSON.parse(body).exposures);
        res.end('{}');
      } else if (req.method === 'POST' && req.url === '/experiment/entry/assign') {
        res.end(JSON.stringify(remoteAnswer));
      } else {
        res.statusCode = 404;
        res.end('{"error":"not found"}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

test('local assign: entered units are exposed; others get the default, a marked id and no exposure', async () => {
  const client = new AgentSplit({ baseUrl, apiKey: 'k', local: true, logger: memoryLogger() });
  try {
    const pro = await client.assign('entry', 'user-1', { context: { plan: 'pro' } });
    assert.equal(pro.source, 'local');
    assert.equal(pro.inExperiment, true);
    assert.equal(pro.reason, null);
    assert.equal(readAssignmentId(pro.assignmentId, KEY)?.inExperiment, true);

    const free = client.assignLocal('entry', 'user-2', { context: { plan: 'free' } });
    assert.deepEqual(
      { variant: free.variant, payload: free.payload, inExperiment: free.inExperiment, reason: free.reason },
      { variant: 'control', payload: { p: 'c' }, inExperiment: false, reason: 'targeting' },
    );
    assert.match(free.assignmentId, /\.2\.x0\./);
    assert.deepEqual(readAssignmentId(free.assignmentId, KEY), {
      version: 2,
      variantIndex: 0,
      userId: 'user-2',
      inExperiment: false,
    });

    const qa = client.assignLocal('entry', 'qa-1', { context: { plan: 'free' } });
    assert.deepEqual([qa.variant, qa.inExperiment, qa.reason], ['treat', false, 'override']);
    assert.match(qa.assignmentId, /\.2\.x1\./);

    // The group comes from the definitions answer; attributes carry userId.
    const beta = client.assignLocal('entry', 'beta-2');
    assert.equal(beta.inExperiment, true);

    assert.equal(await client.flush(5000), true);
    const ids = exposures.map((e) => e.assignmentId);
    assert.deepEqual(ids.sort(), [pro.assignmentId, beta.assignmentId].sort());
  } finally {
    await client.close();
  }
});

test('(a+)+$ against 50 a and a b in targeting: local assign answers at once', async () => {
  const client = new AgentSplit({ baseUrl, apiKey: 'k', local: true, logger: memoryLogger() });
  try {
    await client.refreshDefinitions();
    const started = performance.now();
    const a = client.assignLocal('regex', 'u', { context: { name: `${'a'.repeat(50)}b` } });
    assert.ok(performance.now() - started < 1000);
    assert.deepEqual([a.source, a.inExperiment, a.reason], ['local', false, 'targeting']);
    assert.equal(client.assignLocal('regex', 'u', { context: { name: 'a'.repeat(50) } }).inExperiment, true);
  } finally {
    await client.close();
  }
});

test("remote assign passes the server's inExperiment and reason; an older server's answer means entered", async () => {
  const client = new AgentSplit({ baseUrl, apiKey: 'k', logger: memoryLogger() });
  try {
    remoteAnswer = {
      variant: 'control',
      payload: { p: 'c' },
      assignmentId: 'x',
      inExperiment: false,
      reason: 'coverage',
    };
    const out = await client.assign('entry', 'u');
    assert.deepEqual(
      [out.source, out.variant, out.inExperiment, out.reason],
      ['server', 'control', false, 'coverage'],
    );
    remoteAnswer = { variant: 'treat', payload: { p: 't' }, assignmentId: 'y' };
    const old = await client.assign('entry', 'u');
    assert.deepEqual([old.variant, old.inExperiment, old.reason], ['treat', true, null]);
    remoteAnswer = { ...remoteAnswer, inExperiment: true };
    assert.equal((await client.assign('entry', 'u')).inExperiment, true);
  } finally {
    await client.close();
  }
});

test('a fail-open default assignment is not in the experiment', async () => {
  const client = new AgentSplit({ baseUrl, apiKey: 'k', local: true, logger: memoryLogger() });
  try {
    const d = await client.assign('unknown', 'u', { default: { p: 'd' } });
    assert.deepEqual([d.source, d.inExperiment, d.reason], ['default', false, null]);
  } finally {
    await client.close();
  }
});

test("OpenFeature provider: the server's OFREP reasons (SPLIT, TARGETING_MATCH, DEFAULT) and entry metadata", async () => {
  const { OpenFeature } = await import('@openfeature/server-sdk');
  const { AgentSplitProvider } = await import('../src/index.js');
  const client = new AgentSplit({ baseUrl, apiKey: 'k', local: true, logger: memoryLogger() });
  try {
    await OpenFeature.setProviderAndWait('entry-of', new AgentSplitProvider(client));
    const of = OpenFeature.getClient('entry-of');
    const before = exposures.length;
    const split = await of.getObjectDetails('entry', {}, { targetingKey: 'of-1', plan: 'team' });
    assert.equal(split.reason, 'SPLIT');
    assert.equal(split.flagMetadata.inExperiment, true);
    const qa = await of.getObjectDetails('entry', {}, { targetingKey: 'qa-1', plan: 'free' });
    assert.deepEqual(
      [qa.reason, qa.variant, qa.flagMetadata.entryReason],
      ['TARGETING_MATCH', 'treat', 'override'],
    );
    const out = await of.getObjectDetails('entry', {}, { targetingKey: 'of-2', plan: 'free' });
    assert.deepEqual(
      [out.reason, out.variant, out.value, out.flagMetadata.inExperiment, out.flagMetadata.entryReason],
      ['DEFAULT', 'control', { p: 'c' }, false, 'targeting'],
    );
    assert.match(String(out.flagMetadata.assignmentId), /\.2\.x0\./);
    assert.equal(await client.flush(5000), true);
    assert.deepEqual(
      exposures.slice(before).map((e) => e.assignmentId),
      [split.flagMetadata.assignmentId],
    );
  } finally {
    await client.close();
  }
});
