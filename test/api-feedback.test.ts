// POST /experiment/:slug/feedback (issue 15): late values counted for the variant of the assignment or
// result they name, upserted per metric, 404 for ids the service never issued; and log's check of an
// assignmentId against its variantKey. Read back through GET analysis and GET results.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  alternating,
  assertError,
  assertUuidV7,
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
interface MetricReading {
  name: string;
  kind: string;
  variants: VariantReading[];
}

function close(actual: number | null, expected: number, what: string): void {
  assert.ok(typeof actual === 'number', `${what} is ${actual}`);
  assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${what}: ${actual}`);
}

describe('feedback', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'feedback', { random: alternating() });
    api = runtime.api;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const feedback = (slug: string, body: unknown, headers?: Record<string, string>) =>
    api.call({ method: 'POST', url: `/experiment/${slug}/feedback`, body, headers });

  /** Sends feedback and checks the answer is exactly {success: true, feedbackId: <UUIDv7>}. */
  async function give(slug: string, body: unknown): Promise<string> {
    const res = await feedback(slug, body);
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json();
    assert.deepEqual(Object.keys(answer).sort(), ['feedbackId', 'success']);
    assert.equal(answer.success, true);
    assertUuidV7(answer.feedbackId);
    return answer.feedbackId;
  }

  /** The metric's reading in GET analysis, or undefined when it has no data. */
  async function metric(slug: string, name: string, query = ''): Promise<MetricReading | undefined> {
    const res = await api.get(`/experiment/${slug}/analysis${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().metrics as MetricReading[]).find((m) => m.name === name);
  }

  /** An assignment to `key`: users are assigned until one lands there (alternating: at most two). */
  let users = 0;
  async function assignTo(slug: string, key: string): Promise<string> {
    for (;;) {
      const a = await api.assign(slug, { userId: `user-${++users}` });
      if (a.variant === key) return a.assignmentId;
    }
  }

  async function variant(slug: string, name: string, key: string, query = ''): Promise<VariantReading> {
    const m = await metric(slug, name, query);
    assert.ok(m, `no data for ${name}`);
    return m.variants.find((v) => v.key === key)!;
  }

  test('feedback on an assignment counts for the variant it was assigned', async () => {
    const { slug } = await api.createExperiment();
    await give(slug, { assignmentId: await assignTo(slug, 'A'), metrics: { rating: 4 }, comment: 'good' });
    await give(slug, { assignmentId: await assignTo(slug, 'B'), metrics: { rating: 2 } });
    await give(slug, { assignmentId: await assignTo(slug, 'A'), metrics: { rating: 5 } });
    const rating = await metric(slug, 'rating');
    assert.equal(rating?.kind, 'mean');
    const [a, b] = rating!.variants;
    assert.deepEqual([a!.key, a!.n, b!.key, b!.n], ['A', 2, 'B', 1]);
    close(a!.mean, 4.5, 'A mean');
    close(b!.mean, 2, 'B mean');
  });

  test('feedback on a result counts for the variant the result was logged under', async () => {
    const { slug } = await api.createExperiment();
    const onB = await api.log(slug, { variantKey: 'B', metrics: { latency: 900 } });
    const onA = await api.log(slug, { variantKey: 'A', metrics: { latency: 700 } });
    await give(slug, { logId: onB.logId, metrics: { thumbs_up: true } });
    await give(slug, { logId: onA.logId, metrics: { thumbs_up: false } });
    const thumbs = await metric(slug, 'thumbs_up');
    assert.equal(thumbs?.kind, 'proportion');
    assert.deepEqual(
      thumbs!.variants.map((v) => [v.key, v.n, v.mean]),
      [
        ['A', 1, 0],
        ['B', 1, 1],
      ],
    );
    // The result's own metric is untouched: feedback is a value of its own.
    assert.deepEqual(
      (await metric(slug, 'latency'))!.variants.map((v) => v.n),
      [1, 1],
    );
  });

  test('the same metric for the same target again replaces the value: n unchanged, the mean moves', async () => {
    const { slug } = await api.createExperiment();
    const first = { assignmentId: await assignTo(slug, 'A') };
    const second = { assignmentId: await assignTo(slug, 'A') };
    const logged = await api.log(slug, { variantKey: 'A', metrics: { latency: 1 } });
    await give(slug, { assignmentId: first.assignmentId, metrics: { rating: 1 } });
    await give(slug, { assignmentId: second.assignmentId, metrics: { rating: 3 } });
    await give(slug, { logId: logged.logId, metrics: { rating: 2 } });
    let a = await variant(slug, 'rating', 'A');
    assert.equal(a.n, 3);
    close(a.mean, 2, 'mean before the correction');

    // A correction of the first value: (5 + 3 + 2) / 3.
    await give(slug, { assignmentId: first.assignmentId, metrics: { rating: 5 } });
    a = await variant(slug, 'rating', 'A');
    assert.equal(a.n, 3, 'replaced, not added');
    close(a.mean, 10 / 3, 'mean after the correction');

    // Retries of the same request (without an Idempotency-Key) never double-count either.
    await give(slug, { assignmentId: first.assignmentId, metrics: { rating: 5 } });
    await give(slug, { assignmentId: first.assignmentId, metrics: { rating: 5 } });
    // The same metric on a result replaces per result, independently of the assignments.
    await give(slug, { logId: logged.logId, metrics: { rating: 4 } });
    await give(slug, { logId: logged.logId, metrics: { rating: 4 } });
    a = await variant(slug, 'rating', 'A');
    assert.equal(a.n, 3, 'retries are not counted again');
    close(a.mean, 12 / 3, 'mean after retries');

    // One submission may replace one metric and add another.
    await give(slug, { assignmentId: second.assignmentId, metrics: { rating: 0, helpful: true } });
    a = await variant(slug, 'rating', 'A');
    assert.equal(a.n, 3);
    close(a.mean, 9 / 3, 'mean after the second correction');
    const helpful = await variant(slug, 'helpful', 'A');
    assert.deepEqual([helpful.n, helpful.mean], [1, 1]);
  });

  test('concurrent corrections of one target leave exactly one of the values sent', async () => {
    const { slug } = await api.createExperiment();
    const assignmentId = await assignTo(slug, 'B');
    const sent = Array.from({ length: 12 }, (_, i) => i + 1);
    await Promise.all(sent.map((rating) => give(slug, { assignmentId, metrics: { rating } })));
    const b = await variant(slug, 'rating', 'B');
    assert.equal(b.n, 1);
    assert.ok(sent.includes(b.mean!), `mean ${b.mean} is one of the values sent`);
    // The rollups agree with the stored row: a rebuild from it reads the same.
    const found = await runtime.store.findExperiment(slug);
    await runtime.store.rebuildRollups(found!.id);
    assert.deepEqual(await variant(slug, 'rating', 'B'), b);
  });

  test('feedback on an assignment made milliseconds earlier counts at once, before its exposure is written', async () => {
    const { slug } = await api.createExperiment();
    // Assign and give feedback straight away, twenty users at once; nothing waits for exposures to drain.
    const variants = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await api.post(`/experiment/${slug}/assign`, { userId: `fast-${i}` });
        assert.equal(res.statusCode, 200, res.body);
        const { assignmentId, variant: key } = res.json();
        await give(slug, { assignmentId, metrics: { score: i } });
        return { key, score: i };
      }),
    );
    const score = await metric(slug, 'score');
    for (const key of ['A', 'B']) {
      const mine = variants.filter((v) => v.key === key);
      const reading = score!.variants.find((v) => v.key === key)!;
      assert.equal(reading.n, mine.length, `n of ${key}`);
      close(reading.mean, mine.reduce((s, v) => s + v.score, 0) / mine.length, `mean of ${key}`);
    }
    assert.equal(
      score!.variants.reduce((s, v) => s + v.n, 0),
      20,
    );
  });

  test("an assignment of an earlier version is read with that version's variants, by feedback and by log", async () => {
    const { slug, variants } = await api.createExperiment();
    const old = { assignmentId: await assignTo(slug, 'A') };
    // Version 2 lists B first: the old id's variant index (0) now names B, but the id was issued for A.
    const res = await api.patch(`/experiment/${slug}`, { variants: [variants[1], variants[0]] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().version, 2);
    await give(slug, { assignmentId: old.assignmentId, metrics: { rating: 3 } });
    const inV1 = await metric(slug, 'rating', '?version=1');
    assert.deepEqual(
      inV1!.variants.map((v) => [v.key, v.n]),
      [
        ['A', 1],
        ['B', 0],
      ],
    );
    const inV2 = await api.get(`/experiment/${slug}/analysis?version=2`);
    assert.equal(inV2.statusCode, 200, inV2.body);
    assert.deepEqual(inV2.json().metrics, [], 'nothing counted in version 2');
    // log checks the old id against version 1's variants too.
    assert.equal(
      (await api.log(slug, { variantKey: 'A', assignmentId: old.assignmentId })).warning,
      undefined,
    );
    const other = await api.log(slug, { variantKey: 'B', assignmentId: old.assignmentId });
    assert.match(other.warning ?? '', /issued for variant 'A', not 'B'/);
  });

  test('an id the service never issued is 404 and counts nothing', async () => {
    const { slug } = await api.createExperiment();
    const other = await api.createExperiment();
    const mine = { assignmentId: await assignTo(slug, 'A') };
    const theirs = await api.assign(other.slug, { userId: 'real-user' });
    const theirResult = await api.log(other.slug, { variantKey: 'A', metrics: { latency: 1 } });
    const [uuid, version, index, user, check] = mine.assignmentId.split('.') as [
      string,
      string,
      string,
      string,
      string,
    ];
    const flip = (c: string) => (c === '0' ? '1' : '0');
    const tampered = {
      variant: [uuid, version, flip(index), user, check].join('.'),
      user: [uuid, version, index, Buffer.from('someone-else').toString('base64url'), check].join('.'),
      check: [uuid, version, index, user, flip(check[0]!) + check.slice(1)].join('.'),
      version: [uuid, '2', index, user, check].join('.'),
      uuid: [randomUUID(), version, index, user, check].join('.'),
    };
    const assignmentIds = {
      garbage: 'not-an-assignment-id',
      bareUuid: uuid,
      randomUuid: randomUUID(),
      otherExperiment: theirs.assignmentId,
      ...tampered,
    };
    for (const [what, assignmentId] of Object.entries(assignmentIds)) {
      const res = await feedback(slug, { assignmentId, metrics: { rating: 1 } });
      assertError(res, 404, /issued no assignment/);
      assert.ok(res.json().error.includes(slug), `${what}: the message names the experiment`);
    }
    const logIds = {
      garbage: 'not-a-log-id',
      randomUuid: randomUUID(),
      otherExperiment: theirResult.logId,
      assignmentIdAsLogId: mine.assignmentId,
    };
    for (const logId of Object.values(logIds)) {
      assertError(await feedback(slug, { logId, metrics: { rating: 1 } }), 404, /has no result with logId/);
    }
    assertError(
      await feedback('no-such-experiment', { assignmentId: mine.assignmentId, metrics: { rating: 1 } }),
      404,
      /no experiment with slug 'no-such-experiment'/,
    );
    assert.equal(await metric(slug, 'rating'), undefined, 'nothing was counted');
    // The real id still works: the checks above were about the ids, not the experiment.
    await give(slug, { assignmentId: mine.assignmentId, metrics: { rating: 1 } });
    assert.equal((await variant(slug, 'rating', 'A')).n, 1);
  });

  test('exactly one of assignmentId and logId: both or neither is 400', async () => {
    const { slug } = await api.createExperiment();
    const { assignmentId } = await api.assign(slug, { userId: 'u1' });
    const { logId } = await api.log(slug, { variantKey: 'A' });
    assertError(
      await feedback(slug, { assignmentId, logId, metrics: { rating: 1 } }),
      400,
      /exactly one of assignmentId and logId/,
    );
    assertError(
      await feedback(slug, { metrics: { rating: 1 } }),
      400,
      /exactly one of assignmentId and logId/,
    );
    assert.equal(await metric(slug, 'rating'), undefined, 'nothing was counted');
  });

  test('metric values that are not numbers or true/false are 400 and count nothing', async () => {
    const { slug } = await api.createExperiment();
    const { assignmentId } = await api.assign(slug, { userId: 'u1' });
    for (const value of ['5', null, { stars: 5 }, [5]]) {
      // The valid metric next to it is not counted either: a submission is all or nothing.
      const res = await feedback(slug, { assignmentId, metrics: { fine: 1, rating: value } });
      assertError(res, 400, /rating/);
    }
    assertError(await feedback(slug, { assignmentId, metrics: {} }), 400);
    assertError(await feedback(slug, { assignmentId }), 400, /metrics/);
    assertError(await feedback(slug, { assignmentId, metrics: 5 }), 400, /metrics/);
    const analysis = await api.get(`/experiment/${slug}/analysis`);
    assert.deepEqual(analysis.json().metrics, [], 'nothing was counted');
  });

  test('an Idempotency-Key replays the first answer and counts the value once', async () => {
    const { slug } = await api.createExperiment();
    const assignmentId = await assignTo(slug, 'A');
    const body = { assignmentId, metrics: { rating: 4 } };
    const keyed = { 'idempotency-key': 'feedback-retry-1' };
    const first = await feedback(slug, body, keyed);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const second = await feedback(slug, body, keyed);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.body, first.body, 'the same feedbackId, byte for byte');
    assert.equal(second.headers['idempotent-replayed'], 'true');
    const reused = await feedback(slug, { assignmentId, metrics: { rating: 1 } }, keyed);
    assertError(reused, 422, /already used with a different request/);
    const a = await variant(slug, 'rating', 'A');
    assert.equal(a.n, 1);
    close(a.mean, 4, 'the first value stands');
  });

  test('log with an assignmentId of another variant answers a warning and the result reads back flagged', async () => {
    const { slug } = await api.createExperiment();
    const onA = { assignmentId: await assignTo(slug, 'A') };
    const mismatched = await api.log(slug, {
      variantKey: 'B',
      assignmentId: onA.assignmentId,
      metrics: { latency: 1 },
    });
    assert.match(mismatched.warning ?? '', /assignmentId was issued for variant 'A', not 'B'/);
    const matched = await api.log(slug, { variantKey: 'A', assignmentId: onA.assignmentId });
    assert.equal(matched.warning, undefined);
    // An id of the client's own making is stored unchecked.
    const own = await api.log(slug, { variantKey: 'B', assignmentId: 'client-trace-42' });
    assert.equal(own.warning, undefined);
    const batch = await api.post(`/experiment/${slug}/logs`, {
      results: [{ variantKey: 'B', assignmentId: onA.assignmentId }],
    });
    assert.equal(batch.statusCode, 200, batch.body);
    assert.match(batch.json().warnings.join('\n'), /assignmentId was issued for variant 'A', not 'B'/);

    // Another experiment's id (this service's form, made for another experiment): stored and flagged, where
    // /exposures and /feedback refuse it; the same in a batch.
    const other = (await api.createExperiment()).slug;
    const elsewhere = await assignTo(other, 'A');
    const foreign = await api.log(slug, { variantKey: 'A', assignmentId: elsewhere });
    assert.match(
      foreign.warning ?? '',
      new RegExp(`assignmentId '.+' was not made for experiment '${slug}' .*: stored and flagged`),
    );
    const foreignBatch = await api.post(`/experiment/${slug}/logs`, {
      results: [{ variantKey: 'A', assignmentId: elsewhere }],
    });
    assert.equal(foreignBatch.statusCode, 200, foreignBatch.body);
    assert.match(foreignBatch.json().warnings.join('\n'), /was not made for experiment/);
    const refused = await api.post(`/experiment/${slug}/feedback`, {
      assignmentId: elsewhere,
      metrics: { rating: 1 },
    });
    assert.ok(refused.statusCode >= 400 && refused.statusCode < 500, refused.body);

    const results = await api.allResults(slug);
    const byId = new Map(results.map((r) => [r.logId, r as typeof r & { assignedVariant: string | null }]));
    const flagged = byId.get(mismatched.logId)!;
    assert.equal(flagged.variantKey, 'B', 'stored under the variant it was logged for');
    assert.equal(flagged.assignedVariant, 'A');
    assert.equal(byId.get(batch.json().logIds[0])!.assignedVariant, 'A');
    assert.equal(byId.get(matched.logId)!.assignedVariant, null);
    assert.equal(byId.get(own.logId)!.assignedVariant, null);
    assert.equal(byId.get(foreign.logId)!.assignmentId, elsewhere, 'kept as sent');
  });
});
