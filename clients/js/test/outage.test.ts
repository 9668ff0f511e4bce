// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
// The server SIGKILLed mid-run: assign answers defaults within the timeout, nothing raises, and the logs
// queued meanwhile arrive after it restarts (same port, same database), each exactly once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentSplit, type Assignment } from '../src/index.js';
import {
  allResults,
  createExperiment,
  memoryLogger,
  ROOT_KEY,
  startServer,
  type TestServer,
} from './server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

test('SIGKILL mid-run: defaults within the timeout, then every queued result exactly once', async () => {
  const slug = await createExperiment(server, 'outage');
  const logger = memoryLogger();
  const timeoutMs = 400;
  const client = new AgentSplit({
    baseUrl: server.baseUrl,
    apiKey: ROOT_KEY,
    timeoutMs,
    logger,
    batchSize: 25,
    flushIntervalMs: 50,
    retryBaseMs: 100,
    retryMaxMs: 800,
  });
  // Assignments made while the server is up; results logged across the outage.
  const assignments: Assignment[] = [];
  for (let i = 0; i < 40; i++) assignments.push(await client.assign(slug, `user-${i}`));
  assert.ok(assignments.every((a) => a.source === 'server'));

  let sent = 0;
  const logSome = (n: number, phase: string) => {
    for (let k = 0; k < n; k++) {
      const a = assignments[sent % assignments.length]!;
      client.log(slug, {
        variantKey: a.variant,
        assignmentId: a.assignmentId,
        userId: a.userId,
        input: { seq: sent, phase },
        metrics: { tokens: sent },
      });
      client.feedback(slug, { assignmentId: a.assignmentId, metrics: { judge: sent % 5 } });
      sent++;
    }
  };

  // Up: batches flowing, some in flight when the kill lands.
  for (let round = 0; round < 10; round++) {
    logSome(20, 'before');
    await sleep(10);
  }
  await server.kill();
  const killedAt = performance.now();

  // Down: assign answers defaults within the timeout, log/track/feedback/flush never raise.
  const downAssign: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const a = await client.assign(slug, `down-${i}`, { default: { prompt: 'fallback' } });
    downAssign.push(performance.now() - t0);
    assert.equal(a.source, 'default');
    assert.deepEqual(a.payload, { prompt: 'fallback' });
    assert.equal(await client.track(a, () => 'ran'), 'ran');
  }
  assert.ok(Math.max(...downAssign) < timeoutMs + 100, `down assigns took ${downAssign.join(', ')} ms`);
  for (let round = 0; round < 10; round++) {
    logSome(20, 'down');
    await sleep(20);
  }
  assert.equal(await client.flush(200), false, 'a flush while down gives up in time, without raising');
  assert.ok(client.stats().retries > 0, JSON.stringify({ s: client.stats(), w: logger.warns }));
  // Down for a second at least, so that retries back off.
  await sleep(Math.max(0, 1000 - (performance.now() - killedAt)));

  await server.restart();
  logSome(100, 'after');
  assert.equal(await client.flush(20_000), true);
  const stats = client.stats();
  await client.close();

  const results = await allResults(server, slug);
  const seqs = results.map((r) => r.input.seq as number);
  const counts = new Map<number, number>();
  for (const s of seqs) counts.set(s, (counts.get(s) ?? 0) + 1);
  const missing = Array.from({ length: sent }, (_, i) => i).filter((i) => !counts.has(i));
  const twice = [...counts].filter(([, c]) => c > 1).map(([s]) => s);
  assert.deepEqual(missing, [], 'every queued result arrived');
  assert.deepEqual(twice, [], 'no result arrived twice');
  assert.equal(results.length, sent);
  assert.equal(sent, 500);
  assert.equal(stats.dropped, 0);
  assert.equal(stats.failed, 0);
  assert.equal(stats.delivered, sent * 2);
  assert.deepEqual(logger.errors, []);

  // The latest feedback per assignment is what counts: judge values of the last sends.
  const analysis = await server.api('GET', `/experiment/${slug}/analysis`);
  const judge = (analysis.body.metrics as any[]).find((m) => m.name === 'judge');
  assert.ok(judge);
  assert.equal(
    (judge.variants as any[]).reduce((s, v) => s + v.n, 0),
    40,
  );
});
