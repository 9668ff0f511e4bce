// POST /feedback (issue 26): feedback for many experiments in one request. Each item is checked and
// upserted as its own POST /experiment/:slug/feedback would be; the items that request would refuse are
// rejected by index with the same words, the others committed. Read back through GET analysis and the
// feedback table; run on both databases (AGENTSPLIT_TEST_BACKEND=postgres).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

interface VariantReading {
  key: string;
  n: number;
  mean: number | null;
}

interface BatchAnswer {
  success: boolean;
  accepted: number;
  rejected: Array<{ index: number; error: string }>;
}

describe('POST /feedback (a batch across experiments)', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'feedback-batch');
    api = runtime.api;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const batch = (feedback: unknown, headers?: Record<string, string>, key?: string) =>
    api.call({ method: 'POST', url: '/feedback', body: { feedback }, headers, key });

  /** Sends a batch and checks the answer's shape: exactly {success: true, accepted, rejected}. */
  async function send(items: unknown[], key?: string): Promise<BatchAnswer> {
    const res = await batch(items, undefined, key);
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json() as BatchAnswer;
    assert.deepEqual(Object.keys(answer).sort(), ['accepted', 'rejected', 'success']);
    assert.equal(answer.success, true);
    assert.equal(answer.accepted + answer.rejected.length, items.length);
    return answer;
  }

  /** Each variant's reading of `name` in GET analysis, by key; {} when the metric has no data. */
  async function readings(slug: string, name: string): Promise<Record<string, VariantReading>> {
    const res = await api.get(`/experiment/${slug}/analysis`);
    assert.equal(res.statusCode, 200, res.body);
    const metric = (res.json().metrics as Array<{ name: string; variants: VariantReading[] }>).find(
      (m) => m.name === name,
    );
    return Object.fromEntries((metric?.variants ?? []).map((v) => [v.key, v]));
  }

  /** Feedback rows stored for the experiment: what is really committed. */
  async function storedRows(slug: string): Promise<number> {
    const [row] = await runtime.rows<{ n: number }>(
      sql`SELECT COUNT(*) AS n FROM feedback f JOIN experiments e ON e.id = f.experiment_id WHERE e.slug = ${slug}`,
    );
    return Number(row?.n);
  }

  test('items for several experiments, on assignments and on results, count for their own variants', async () => {
    const first = await api.createExperiment();
    const second = await api.createExperiment();
    const a = await api.assign(first.slug, { userId: 'u-1' });
    const onB = await api.log(second.slug, { variantKey: 'B', metrics: { latency: 10 } });
    const onA = await api.log(second.slug, { variantKey: 'A' });
    const answer = await send([
      { experiment: first.slug, assignmentId: a.assignmentId, metrics: { rating: 4 }, comment: 'good' },
      { experiment: second.slug, logId: onB.logId, metrics: { rating: 2, thumbs_up: false } },
      { experiment: second.slug, logId: onA.logId, metrics: { thumbs_up: true } },
    ]);
    assert.deepEqual(answer, { success: true, accepted: 3, rejected: [] });
    const firstRating = await readings(first.slug, 'rating');
    const otherVariant = a.variant === 'A' ? 'B' : 'A';
    assert.equal(firstRating[otherVariant]?.n ?? 0, 0);
    assert.equal(firstRating[a.variant]!.n, 1);
    assert.equal(firstRating[a.variant]!.mean, 4);
    const thumbs = await readings(second.slug, 'thumbs_up');
    assert.deepEqual(
      [thumbs.A?.n, thumbs.A?.mean, thumbs.B?.n, thumbs.B?.mean],
      [1, 1, 1, 0],
      'true counts for A, false for B',
    );
    assert.equal((await readings(second.slug, 'rating')).B?.mean, 2);
    assert.equal(await storedRows(first.slug), 1);
    assert.equal(await storedRows(second.slug), 3, 'one row per target and metric');
  });

  test('items the single route would refuse are rejected by index with its words; the rest are committed', async () => {
    const { slug } = await api.createExperiment();
    const { assignmentId } = await api.assign(slug, { userId: 'u-2' });
    const { logId } = await api.log(slug, { variantKey: 'A' });
    const good = (rating: number) => ({
      experiment: slug,
      assignmentId,
      metrics: { [`r${rating}`]: rating },
    });
    const bad: Array<[unknown, number]> = [
      [{ experiment: slug, assignmentId, metrics: { rating: '5' } }, 400],
      [{ experiment: slug, assignmentId, logId, metrics: { rating: 1 } }, 400],
      [{ experiment: slug, metrics: { rating: 1 } }, 400],
      [{ experiment: slug, assignmentId, metrics: {} }, 400],
      [{ experiment: 'no-such-experiment', assignmentId, metrics: { rating: 1 } }, 404],
      [{ experiment: slug, assignmentId: `${randomUUID()}.1.0.dQ.00000000`, metrics: { rating: 1 } }, 404],
      [{ experiment: slug, logId: randomUUID(), metrics: { rating: 1 } }, 404],
    ];
    // Each one's error is what the single route answers for the same item.
    const single: string[] = [];
    for (const [item, status] of bad) {
      const { experiment, ...body } = item as { experiment: string };
      single.push(assertError(await api.post(`/experiment/${experiment}/feedback`, body), status));
    }
    const shapeless = [5, 'text', null, [], { assignmentId, metrics: { rating: 1 } }];
    const items = [good(1), ...bad.map(([item]) => item), good(2), ...shapeless, good(3)];
    const answer = await send(items);
    assert.equal(answer.accepted, 3);
    const badFrom = 1;
    const shapelessFrom = badFrom + bad.length + 1;
    assert.deepEqual(
      answer.rejected.map((r) => r.index),
      [...bad.map((_, i) => badFrom + i), ...shapeless.map((_, i) => shapelessFrom + i)],
    );
    assert.deepEqual(
      answer.rejected.slice(0, bad.length).map((r) => r.error.replace(/^feedback\/\d+/, 'body')),
      single,
      'the same message as the single route (its body is the item without `experiment`)',
    );
    const shapeErrors = answer.rejected.slice(bad.length).map((r) => r.error);
    assert.deepEqual(shapeErrors.slice(0, 4), [
      `feedback/${shapelessFrom} must be object`,
      `feedback/${shapelessFrom + 1} must be object`,
      `feedback/${shapelessFrom + 2} must be object`,
      `feedback/${shapelessFrom + 3} must be object`,
    ]);
    assert.equal(shapeErrors[4], `feedback/${shapelessFrom + 4} must have required property 'experiment'`);
    const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
    assert.deepEqual((analysis.metrics as Array<{ name: string }>).map((m) => m.name).sort(), [
      'r1',
      'r2',
      'r3',
    ]);
    assert.equal(await storedRows(slug), 3, 'only the accepted items are stored');
  });

  test('the same metric for the same target again replaces it, within a batch and across batches', async () => {
    const { slug } = await api.createExperiment();
    const { assignmentId, variant } = await api.assign(slug, { userId: 'u-3' });
    const item = (rating: number) => ({ experiment: slug, assignmentId, metrics: { rating } });
    await send([item(1), item(2), item(5)]);
    let reading = (await readings(slug, 'rating'))[variant]!;
    assert.deepEqual([reading.n, reading.mean], [1, 5], 'the last of the batch stands, counted once');
    await send([item(3)]);
    reading = (await readings(slug, 'rating'))[variant]!;
    assert.deepEqual([reading.n, reading.mean], [1, 3]);
    // And the single route upserts the same row.
    const res = await api.post(`/experiment/${slug}/feedback`, { assignmentId, metrics: { rating: 4 } });
    assert.equal(res.statusCode, 200, res.body);
    reading = (await readings(slug, 'rating'))[variant]!;
    assert.deepEqual([reading.n, reading.mean], [1, 4]);
    assert.equal(await storedRows(slug), 1);
  });

  test('an Idempotency-Key replays the first answer byte for byte and commits nothing twice', async () => {
    const first = await api.createExperiment();
    const second = await api.createExperiment();
    const logs = await api.logMany(first.slug, [{ variantKey: 'A' }, { variantKey: 'B' }]);
    const other = await api.log(second.slug, { variantKey: 'A' });
    const items = [
      { experiment: first.slug, logId: logs[0], metrics: { rating: 5 } },
      { experiment: first.slug, logId: logs[1], metrics: { rating: 1 } },
      { experiment: second.slug, logId: other.logId, metrics: { rating: 3 } },
      { experiment: second.slug, logId: randomUUID(), metrics: { rating: 3 } },
    ];
    const keyed = { 'idempotency-key': `batch-${randomUUID()}` };
    const once = await batch(items, keyed);
    assert.equal(once.statusCode, 200, once.body);
    assert.equal(once.headers['idempotent-replayed'], undefined);
    assert.equal(once.json().accepted, 3);
    assert.deepEqual(
      once.json().rejected.map((r: { index: number }) => r.index),
      [3],
    );
    const again = await batch(items, keyed);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.body, once.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assertError(await batch(items.slice(0, 1), keyed), 422, /already used with a different request/);
    const a = await readings(first.slug, 'rating');
    assert.deepEqual([a.A?.n, a.A?.mean, a.B?.n, a.B?.mean], [1, 5, 1, 1]);
    assert.equal((await readings(second.slug, 'rating')).A?.n, 1);
    assert.equal(await storedRows(first.slug), 2);
    assert.equal(await storedRows(second.slug), 1);
    // A batch whose items were all rejected keeps its answer too.
    const none = [{ experiment: 'nowhere', logId: randomUUID(), metrics: { rating: 1 } }];
    const noneKeyed = { 'idempotency-key': `none-${randomUUID()}` };
    const r1 = await batch(none, noneKeyed);
    assert.equal(r1.statusCode, 200, r1.body);
    assert.equal(r1.json().accepted, 0);
    const r2 = await batch(none, noneKeyed);
    assert.equal(r2.body, r1.body);
    assert.equal(r2.headers['idempotent-replayed'], 'true');
  });

  test('1000 items in one request are all committed; 1001 is a 400', async (t) => {
    const { slug } = await api.createExperiment();
    const logIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const results = Array.from({ length: 500 }, (_, j) => ({ variantKey: (i * 500 + j) % 2 ? 'B' : 'A' }));
      logIds.push(...(await api.logMany(slug, results)));
    }
    const items = logIds.map((logId, i) => ({ experiment: slug, logId, metrics: { score: i % 10 } }));
    const t0 = performance.now();
    const answer = await send(items);
    t.diagnostic(`1000 items by logId: ${(performance.now() - t0).toFixed(0)} ms (${runtime.backend})`);
    assert.deepEqual(answer, { success: true, accepted: 1000, rejected: [] });
    const score = await readings(slug, 'score');
    assert.equal(score.A?.n, 500);
    assert.equal(score.B?.n, 500);
    // A: i even → scores 0,2,4,6,8 equally often.
    assert.ok(Math.abs(score.A!.mean! - 4) < 1e-12, String(score.A?.mean));
    assert.ok(Math.abs(score.B!.mean! - 5) < 1e-12, String(score.B?.mean));
    assert.equal(await storedRows(slug), 1000);
    assertError(
      await batch([...items, items[0]]),
      400,
      /^body\/feedback must NOT have more than 1000 items$/,
    );
    assert.equal(await storedRows(slug), 1000);
  });

  test('a malformed envelope is a 400 {"error"} and commits nothing', async () => {
    const { slug } = await api.createExperiment();
    const { assignmentId } = await api.assign(slug, { userId: 'u-4' });
    const item = { experiment: slug, assignmentId, metrics: { rating: 1 } };
    const post = (body: unknown) => api.post('/feedback', body);
    assertError(await post([item]), 400, /^body must be object$/);
    assertError(await post({}), 400, /^body must have required property 'feedback'$/);
    assertError(await post({ feedback: item }), 400, /^body\/feedback must be array$/);
    assertError(await post({ feedback: [] }), 400, /^body\/feedback must NOT have fewer than 1 items$/);
    assertError(await post({ assignmentId, metrics: { rating: 1 } }), 400, /feedback/);
    assertError(await api.postRaw('/feedback', '{"feedback": ['), 400);
    assert.equal(await storedRows(slug), 0);
  });

  test("a key limited to some experiments: its items for others are rejected by index with the single route's 403 words", async () => {
    const mine = await api.createExperiment();
    const theirs = await api.createExperiment();
    const created = await api.post('/keys', { name: 'agent', scopes: ['log'], experiments: [mine.slug] });
    assert.equal(created.statusCode, 201, created.body);
    const key = created.json().key as string;
    const a = await api.assign(mine.slug, { userId: 'u-5' });
    const b = await api.assign(theirs.slug, { userId: 'u-5' });
    const answer = await send(
      [
        { experiment: theirs.slug, assignmentId: b.assignmentId, metrics: { rating: 1 } },
        { experiment: mine.slug, assignmentId: a.assignmentId, metrics: { rating: 2 } },
      ],
      key,
    );
    const refused = assertError(
      await api.call({
        method: 'POST',
        url: `/experiment/${theirs.slug}/feedback`,
        body: { assignmentId: b.assignmentId, metrics: { rating: 1 } },
        key,
      }),
      403,
    );
    assert.deepEqual(answer, { success: true, accepted: 1, rejected: [{ index: 0, error: refused }] });
    assert.equal(await storedRows(mine.slug), 1);
    assert.equal(await storedRows(theirs.slug), 0);
    // A key without the log scope may not call the route at all.
    const reader = await api.post('/keys', { name: 'reader', scopes: ['read'] });
    assertError(await batch([], undefined, reader.json().key), 403, /lacks the 'log' scope/);
    assertError(await batch([], undefined, 'wrong-key'), 401, /^Unauthorized$/);
  });
});
