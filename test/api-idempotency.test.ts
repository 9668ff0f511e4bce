// Idempotency-Key on POST log, logs and experiments (ADR 0016): the same key and body answer the first
// answer again and store nothing new; another body is 422; a key in flight is 409; keys are per API key;
// a failed first request leaves the key unused; answers survive a restart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  API_KEY,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  SQLITE_ONLY,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const dir = makeTempDir();
let rt: TestRuntime;

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'idempotency');
  await rt.api.createExperiment({ slug: 'exp', status: 'running' });
});

after(async () => {
  await rt?.close();
  removeTempDir(dir);
});

function post(url: string, body: unknown, key: string, apiKey: string = API_KEY) {
  return rt.api.call({ method: 'POST', url, body, key: apiKey, headers: { 'idempotency-key': key } });
}

async function resultCount(slug: string): Promise<number> {
  const rows = await rt.rows<{ n: number | string }>(
    sql`select count(*) as n from results r join experiments e on e.id = r.experiment_id where e.slug = ${slug}`,
  );
  return Number(rows[0]!.n);
}

describe('Idempotency-Key', { skip: SKIP_BACKEND }, () => {
  test('a retried log answers the first answer again and stores one result', async () => {
    const body = { variantKey: 'A', metrics: { latency_ms: 812 } };
    const before = await resultCount('exp');
    const first = await post('/experiment/exp/log', body, 'log-retry-1');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const second = await post('/experiment/exp/log', body, 'log-retry-1');
    assert.equal(second.statusCode, 200);
    assert.equal(second.body, first.body, 'byte for byte the first answer');
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(await resultCount('exp'), before + 1);
  });

  test('the quoted form of the header (an RFC 8941 string) names the same key', async () => {
    const body = { variantKey: 'B' };
    const first = await post('/experiment/exp/log', body, 'quoted-1');
    const second = await post('/experiment/exp/log', body, '"quoted-1"');
    assert.equal(second.statusCode, 200);
    assert.equal(second.json().logId, first.json().logId);
  });

  test('a retried batch (logs) answers the same logIds and stores the batch once', async () => {
    const body = { results: [{ variantKey: 'A' }, { variantKey: 'B' }, { variantKey: 'nope' }] };
    const before = await resultCount('exp');
    const first = await post('/experiment/exp/logs', body, 'logs-retry-1');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().logIds.length, 3);
    assert.ok(first.json().warnings.length > 0, 'the unknown variant is warned about');
    const second = await post('/experiment/exp/logs', body, 'logs-retry-1');
    assert.equal(second.statusCode, 200);
    assert.deepEqual(second.json(), first.json());
    assert.equal(await resultCount('exp'), before + 3);
  });

  test('a retried POST /experiments answers 201 with the same experiment, not 409', async () => {
    const body = { slug: 'made-once', variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] };
    const first = await post('/experiments', body, 'create-1');
    assert.equal(first.statusCode, 201, first.body);
    const second = await post('/experiments', body, 'create-1');
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(second.body, first.body);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    const without = await rt.api.post('/experiments', body);
    assert.equal(without.statusCode, 409, 'without the key it is a new request');
  });

  test('the same key with another body, path or method is 422 and stores nothing', async () => {
    await post('/experiment/exp/log', { variantKey: 'A' }, 'reused-1');
    const before = await resultCount('exp');
    const other = await post('/experiment/exp/log', { variantKey: 'B' }, 'reused-1');
    assert.equal(other.statusCode, 422);
    assert.match(other.json().error, /Idempotency-Key 'reused-1' was already used with a different request/);
    const otherPath = await post('/experiment/exp/logs', { results: [{ variantKey: 'A' }] }, 'reused-1');
    assert.equal(otherPath.statusCode, 422);
    assert.equal(await resultCount('exp'), before);
  });

  test('a retry while the first request is still running is 409 with Retry-After, and exactly one result is stored', async () => {
    const body = { results: Array.from({ length: 1000 }, (_, i) => ({ variantKey: 'A', metrics: { i } })) };
    // Eight at once usually catch the first in flight; when the machine runs them one after the other
    // (the first committed before the next was read), every one is a replay: try again with a new key.
    let conflicts = 0;
    for (let attempt = 1; attempt <= 5 && conflicts === 0; attempt++) {
      const key = `concurrent-${attempt}`;
      const before = await resultCount('exp');
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => post('/experiment/exp/logs', body, key)),
      );
      const statuses = answers.map((a) => a.statusCode);
      assert.ok(
        statuses.every((s) => s === 200 || s === 409),
        `only 200 and 409: ${statuses}`,
      );
      const conflict = answers.find((a) => a.statusCode === 409);
      if (conflict) {
        conflicts++;
        assert.match(conflict.json().error, /still being processed/);
        assert.equal(conflict.headers['retry-after'], '1', 'the in-flight 409 says when to retry');
      }
      const ids = new Set(answers.filter((a) => a.statusCode === 200).map((a) => a.json().logIds.join()));
      assert.equal(ids.size, 1, 'every 200 is the same answer');
      assert.equal(await resultCount('exp'), before + 1000);
      const later = await post('/experiment/exp/logs', body, key);
      assert.equal(later.statusCode, 200);
      assert.equal(later.headers['idempotent-replayed'], 'true');
    }
    assert.ok(conflicts > 0, 'in 5 rounds of 8 at once, at least one retry found the first in flight');
  });

  test('keys are scoped per API key: the same Idempotency-Key from another key is a new request', async () => {
    const created = await rt.api.post('/keys', { name: 'agent', scopes: ['log'] });
    const agentKey = created.json().key as string;
    const body = { variantKey: 'A' };
    const root = await post('/experiment/exp/log', body, 'shared-name', API_KEY);
    const agent = await post('/experiment/exp/log', body, 'shared-name', agentKey);
    assert.equal(agent.statusCode, 200);
    assert.notEqual(agent.json().logId, root.json().logId);
    const agentAgain = await post('/experiment/exp/log', body, 'shared-name', agentKey);
    assert.equal(agentAgain.json().logId, agent.json().logId);
  });

  test('a first request that fails (404) leaves the key unused: the retry runs once it can succeed', async () => {
    const body = { variantKey: 'A' };
    const missing = await post('/experiment/later/log', body, 'fails-first');
    assert.equal(missing.statusCode, 404);
    await rt.api.createExperiment({ slug: 'later', status: 'running' });
    const retried = await post('/experiment/later/log', body, 'fails-first');
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    assert.equal(await resultCount('later'), 1);
  });

  test('an invalid header is 400 and stores nothing', async () => {
    const before = await resultCount('exp');
    for (const key of ['', 'x'.repeat(256), 'tab\there', '""']) {
      const res = await post('/experiment/exp/log', { variantKey: 'A' }, key);
      assert.equal(res.statusCode, 400, JSON.stringify(key));
      assert.match(res.json().error, /Idempotency-Key must be/);
    }
    assert.equal(await resultCount('exp'), before);
  });

  test('the answer is committed in the same transaction as the results', async () => {
    const first = await post('/experiment/exp/log', { variantKey: 'A' }, 'stored-1');
    const rows = await rt.rows<{ state: string; status: number; answer: string; owner: string }>(
      sql`select state, status, answer, owner from idempotency_keys where key = 'stored-1'`,
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.state, 'done');
    assert.equal(Number(rows[0]!.status), 200);
    assert.equal(rows[0]!.owner, 'root');
    assert.equal(rows[0]!.answer, first.body);
  });

  test('a claim older than 24 hours is taken over; a fresh one is not, unless it is this instance’s own', async () => {
    const now = new Date().toISOString();
    const store = rt.store;
    assert.equal(await store.claimIdempotencyKey('root', 'aging', 'f1', now, now, now), true);
    assert.equal(
      await store.claimIdempotencyKey(
        'root',
        'aging',
        'f2',
        now,
        '1970-01-01T00:00:00.000Z',
        '1970-01-01T00:00:00.000Z',
      ),
      // On PostgreSQL the claim names this instance, and the service asks the store only for a key no
      // request of this process holds: a claim of its own it meets was left behind, and is taken over.
      // Another live instance's claim holds (test/idempotency-instances.test.ts).
      rt.backend === 'postgres',
      'a pending claim within the window and not stale holds (but for an own one left behind)',
    );
    const later = new Date(Date.now() + 1000).toISOString();
    assert.equal(
      await store.claimIdempotencyKey('root', 'aging', 'f3', later, later, '1970-01-01T00:00:00.000Z'),
      true,
    );
    assert.equal(
      (await store.findIdempotencyKey('root', 'aging', '1970-01-01T00:00:00.000Z'))?.fingerprint,
      'f3',
    );
    assert.equal((await store.pruneIdempotencyKeys(new Date(Date.now() + 60_000).toISOString())) > 0, true);
  });
});

describe('Idempotency-Key across a restart', { skip: SKIP_BACKEND || SQLITE_ONLY }, () => {
  test('the answer is replayed by the next process on the same database', async () => {
    const restartDir = makeTempDir();
    try {
      let first: string;
      const a = await startTestRuntime(restartDir, 'restart');
      try {
        await a.api.createExperiment({ slug: 'r', status: 'running' });
        const res = await a.api.call({
          method: 'POST',
          url: '/experiment/r/log',
          body: { variantKey: 'A' },
          headers: { 'idempotency-key': 'across-restart' },
        });
        assert.equal(res.statusCode, 200);
        first = res.body;
      } finally {
        await a.close();
      }
      const b = await startTestRuntime(restartDir, 'restart');
      try {
        const res = await b.api.call({
          method: 'POST',
          url: '/experiment/r/log',
          body: { variantKey: 'A' },
          headers: { 'idempotency-key': 'across-restart' },
        });
        assert.equal(res.statusCode, 200);
        assert.equal(res.body, first);
        assert.equal(res.headers['idempotent-replayed'], 'true');
      } finally {
        await b.close();
      }
    } finally {
      removeTempDir(restartDir);
    }
  });
});
