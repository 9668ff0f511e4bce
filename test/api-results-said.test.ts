// Results carry what was said about them (issue 26): each result read back (a page, the NDJSON and CSV
// export) has the feedback given on its logId or its assignmentId and the context its assignment was
// made with; GET results reads newest first (order=desc), keeps results by a metric's value (own or
// feedback; metric, min, max) and sorts by it (sort=metric), with cursors that only continue their order.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  assertError,
  makeTempDir,
  parseCsv,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

interface SaidResult {
  logId: string;
  variantKey: string;
  assignmentId: string | null;
  metrics: Record<string, unknown> | null;
  feedback: Record<string, number | boolean>;
  assignmentContext: Record<string, unknown> | null;
}

interface Page {
  results: SaidResult[];
  nextCursor: string | null;
}

interface Definition {
  slug: string;
  assignmentIdKey: number;
  version: number;
}

function fnv(s: string, h = 0x811c9dc5): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** An assignment id a client made itself (docs/client-contract.md, the FNV check), for variant index `v`. */
function clientId(d: Definition, v: number, userId: string): string {
  const uuid = randomUUID().replace(/^(.{14})./, '$17');
  const body = `${uuid}.${d.version.toString(36)}.${v.toString(36)}.${Buffer.from(userId).toString('base64')}`;
  let h = Math.imul(0x811c9dc5 ^ (d.assignmentIdKey & 0xffff), 0x01000193);
  h = Math.imul(h ^ (d.assignmentIdKey >>> 16), 0x01000193);
  return `${body}.${fnv(body, h).toString(16).padStart(8, '0')}`;
}

describe('results with what was said about them', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'results_said');
    api = runtime.api;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  async function page(slug: string, query: string): Promise<Page> {
    const res = await api.get(`/experiment/${slug}/results?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Page;
  }

  /** Every page of a query, following nextCursor; `limit` per page. */
  async function walk(slug: string, query: string, limit: number): Promise<SaidResult[]> {
    const all: SaidResult[] = [];
    let cursor: string | null = null;
    do {
      const more: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const p = await page(slug, `limit=${limit}&${query}${more}`);
      assert.ok(p.results.length <= limit);
      all.push(...p.results);
      cursor = p.nextCursor;
    } while (cursor !== null);
    return all;
  }

  async function feedback(slug: string, body: unknown): Promise<void> {
    const res = await api.post(`/experiment/${slug}/feedback`, body);
    assert.equal(res.statusCode, 200, res.body);
  }

  test('feedback on the logId and on the assignmentId, and the context of server-issued and client-made assignments', async () => {
    const { slug } = await api.createExperiment();
    const def = (
      (await api.get('/experiments/definitions')).json() as { experiments: Definition[] }
    ).experiments.find((d) => d.slug === slug)!;
    // Server-issued, with a context; its exposure is written in the background, so drained before reading.
    const served = await api.assign(slug, { userId: 'u-pro', context: { plan: 'pro', n: [1, { x: 'é' }] } });
    const plain = await api.assign(slug, { userId: 'u-none' });
    // Client-made: the context comes with the exposure sent to POST /exposures.
    const made = clientId(def, 1, 'u-local');
    const sent = await api.post('/exposures', {
      exposures: [{ experiment: slug, assignmentId: made, context: { plan: 'free' } }],
    });
    assert.equal(sent.statusCode, 200, sent.body);
    const unsent = clientId(def, 0, 'u-unsent');
    await runtime.ingest.drain();

    const a = await api.log(slug, {
      variantKey: served.variant,
      assignmentId: served.assignmentId,
      metrics: { rating: 4 },
    });
    const a2 = await api.log(slug, { variantKey: served.variant, assignmentId: served.assignmentId });
    const b = await api.log(slug, {
      variantKey: plain.variant,
      assignmentId: plain.assignmentId,
      metrics: { tokens: 9 },
    });
    const c = await api.log(slug, { variantKey: 'B', assignmentId: made });
    const d = await api.log(slug, { variantKey: 'A', assignmentId: unsent });
    const e = await api.log(slug, { variantKey: 'A' });

    // On the assignment: every result of it shows it. On a result: that result only, over the assignment's.
    await feedback(slug, { assignmentId: served.assignmentId, metrics: { rating: 2, thumbs_up: false } });
    await feedback(slug, { logId: a.logId, metrics: { rating: 1 } });
    await feedback(slug, { logId: c.logId, metrics: { thumbs_up: true, judge: 0.25 } });
    // A correction replaces the value shown.
    await feedback(slug, { logId: c.logId, metrics: { judge: 0.75 } });

    const byId = new Map((await walk(slug, '', 100)).map((r) => [r.logId, r]));
    assert.equal(byId.size, 6);
    const got = (logId: string) => {
      const r = byId.get(logId)!;
      return { feedback: r.feedback, assignmentContext: r.assignmentContext };
    };
    assert.deepEqual(got(a.logId), {
      feedback: { rating: 1, thumbs_up: false },
      assignmentContext: { plan: 'pro', n: [1, { x: 'é' }] },
    });
    assert.deepEqual(got(a2.logId), {
      feedback: { rating: 2, thumbs_up: false },
      assignmentContext: { plan: 'pro', n: [1, { x: 'é' }] },
    });
    assert.deepEqual(got(b.logId), { feedback: {}, assignmentContext: null });
    assert.deepEqual(got(c.logId), {
      feedback: { thumbs_up: true, judge: 0.75 },
      assignmentContext: { plan: 'free' },
    });
    assert.deepEqual(got(d.logId), { feedback: {}, assignmentContext: null });
    assert.deepEqual(got(e.logId), { feedback: {}, assignmentContext: null });
    // The result's own metrics stay as logged.
    assert.deepEqual(byId.get(a.logId)!.metrics, { rating: 4 });

    // The export carries the same: NDJSON equal to the pages, CSV with the columns and feedback in metric:<name>.
    const ndjson = await api.get(`/experiment/${slug}/results/export`);
    assert.equal(ndjson.statusCode, 200);
    const exported = ndjson.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SaidResult);
    assert.deepEqual(new Map(exported.map((r) => [r.logId, r])), byId);
    const csv = await api.get(`/experiment/${slug}/results/export?format=csv`);
    assert.equal(csv.statusCode, 200);
    const [header, ...rows] = parseCsv(csv.body);
    const col = (name: string) => {
      const i = header!.indexOf(name);
      assert.ok(i >= 0, `column ${name} in ${header}`);
      return i;
    };
    const row = (logId: string) => rows.find((r) => r[col('logId')] === logId)!;
    assert.deepEqual(JSON.parse(row(a.logId)[col('feedback')]!), { rating: 1, thumbs_up: false });
    assert.deepEqual(JSON.parse(row(c.logId)[col('assignmentContext')]!), { plan: 'free' });
    assert.equal(row(b.logId)[col('assignmentContext')], '');
    assert.equal(row(a.logId)[col('metric:rating')], '1');
    assert.equal(row(a2.logId)[col('metric:rating')], '2');
    assert.equal(row(a.logId)[col('metric:thumbs_up')], 'false');
    assert.equal(row(c.logId)[col('metric:thumbs_up')], 'true');
    assert.equal(row(c.logId)[col('metric:judge')], '0.75');
    assert.equal(row(b.logId)[col('metric:tokens')], '9');
    assert.equal(row(e.logId)[col('metric:rating')], '');
  });

  test('order=asc|desc across pages with cursors; a cursor of one order is a 400 in the other', async () => {
    const { slug } = await api.createExperiment();
    const ids = await api.logMany(
      slug,
      Array.from({ length: 23 }, (_, i) => ({ variantKey: i % 3 === 0 ? 'B' : 'A', metrics: { i } })),
    );
    assert.deepEqual(
      (await walk(slug, 'order=asc', 5)).map((r) => r.logId),
      ids,
    );
    assert.deepEqual(
      (await walk(slug, '', 4)).map((r) => r.logId),
      ids,
    );
    const newest = await walk(slug, 'order=desc', 5);
    assert.deepEqual(
      newest.map((r) => r.logId),
      [...ids].reverse(),
    );
    // With a variant filter, newest first.
    assert.deepEqual(
      (await walk(slug, 'order=desc&variant=B', 3)).map((r) => r.metrics!.i),
      [21, 18, 15, 12, 9, 6, 3, 0],
    );
    const desc = await page(slug, 'order=desc&limit=5');
    const asc = await page(slug, 'order=asc&limit=5');
    assertError(
      await api.get(`/experiment/${slug}/results?order=asc&cursor=${desc.nextCursor}`),
      400,
      /order=desc/,
    );
    assertError(
      await api.get(`/experiment/${slug}/results?order=desc&cursor=${asc.nextCursor}`),
      400,
      /order=asc/,
    );
    assertError(await api.get(`/experiment/${slug}/results?cursor=${desc.nextCursor}`), 400, /cursor/);
    assertError(await api.get(`/experiment/${slug}/results?order=newest`), 400);
    assertError(await api.get(`/experiment/${slug}/results?order=desc&cursor=not-a-cursor`), 400, /cursor/);
  });

  test('metric with min/max keeps results by their own value or their feedback; sort=metric orders by it, across pages', async () => {
    const { slug } = await api.createExperiment({ assignment: 'random' });
    const logged: Array<{ logId: string; value: number | undefined }> = [];
    // Own ratings 1..5 repeating; every 4th gets a rating by feedback instead (on the result or on its
    // assignment), which counts over its own; thumbs (true/false) count as 1/0; some have no rating.
    for (let i = 0; i < 30; i++) {
      const assigned = await api.assign(slug, { userId: `u${i}` });
      const own = i % 7 === 6 ? undefined : (i % 5) + 1;
      const { logId } = await api.log(slug, {
        variantKey: assigned.variant,
        assignmentId: assigned.assignmentId,
        metrics: own === undefined ? { tokens: i } : { rating: own, tokens: i },
      });
      let value = own;
      if (i % 4 === 0) {
        value = (i % 3) + 0.5;
        const target = i % 8 === 0 ? { logId } : { assignmentId: assigned.assignmentId };
        await feedback(slug, { ...target, metrics: { rating: value } });
      }
      logged.push({ logId, value });
    }
    // A rating given as true/false (a proportion) on one result: it counts as 1 or 0.
    const boolTarget = logged.find((l) => l.value === undefined)!;
    await feedback(slug, { logId: boolTarget.logId, metrics: { rating: false } });
    boolTarget.value = 0;

    const rated = logged.filter((l) => l.value !== undefined);
    const at = (lo: number, hi: number) =>
      rated.filter((l) => l.value! >= lo && l.value! <= hi).map((l) => l.logId);
    // Filter, commit order both ways.
    assert.deepEqual(
      (await walk(slug, 'metric=rating&max=2', 4)).map((r) => r.logId),
      at(-Infinity, 2),
    );
    assert.deepEqual(
      (await walk(slug, 'metric=rating&min=2.5&max=4&order=desc', 3)).map((r) => r.logId),
      at(2.5, 4).reverse(),
    );
    assert.deepEqual(
      (await walk(slug, 'metric=rating', 7)).map((r) => r.logId),
      rated.map((l) => l.logId),
    );
    // Feedback-only names filter too.
    assert.deepEqual(
      (await walk(slug, 'metric=tokens&min=28', 10)).map((r) => r.metrics!.tokens),
      [28, 29],
    );

    // Sorted by value: lowest first (ties in commit order), and highest first (ties newest first).
    const expectAsc = rated
      .map((l, i) => ({ ...l, i }))
      .sort((x, y) => x.value! - y.value! || x.i - y.i)
      .map((l) => l.logId);
    const sortedAsc = await walk(slug, 'metric=rating&sort=metric', 4);
    assert.deepEqual(
      sortedAsc.map((r) => r.logId),
      expectAsc,
    );
    const expectDesc = rated
      .map((l, i) => ({ ...l, i }))
      .sort((x, y) => y.value! - x.value! || y.i - x.i)
      .map((l) => l.logId);
    assert.deepEqual(
      (await walk(slug, 'metric=rating&sort=metric&order=desc', 3)).map((r) => r.logId),
      expectDesc,
    );
    // Worst first within a range.
    assert.deepEqual(
      (await walk(slug, 'metric=rating&sort=metric&max=2', 2)).map((r) => r.logId),
      expectAsc.filter((id) => at(-Infinity, 2).includes(id)),
    );

    // Cursors continue only their own order and metric.
    const first = await page(slug, 'metric=rating&sort=metric&limit=3');
    assert.ok(first.nextCursor);
    const c = encodeURIComponent(first.nextCursor);
    assertError(await api.get(`/experiment/${slug}/results?metric=rating&cursor=${c}`), 400, /sort=metric/);
    assertError(
      await api.get(`/experiment/${slug}/results?metric=tokens&sort=metric&cursor=${c}`),
      400,
      /rating/,
    );
    assertError(
      await api.get(`/experiment/${slug}/results?metric=rating&sort=metric&order=desc&cursor=${c}`),
      400,
    );
    // Validation.
    assertError(await api.get(`/experiment/${slug}/results?max=2`), 400, /metric/);
    assertError(await api.get(`/experiment/${slug}/results?min=1`), 400, /metric/);
    assertError(await api.get(`/experiment/${slug}/results?sort=metric`), 400, /metric/);
    assertError(await api.get(`/experiment/${slug}/results?metric=rating&max=low`), 400);
    assertError(await api.get(`/experiment/${slug}/results?metric=rating&min=3&max=2`), 400, /min/);
    assertError(await api.get(`/experiment/${slug}/results?sort=value&metric=rating`), 400);
    assertError(await api.get(`/experiment/${slug}/results?metric=`), 400);
  });
});
