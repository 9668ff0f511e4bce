// Two variants' results grouped by input (issue 36): GET /experiment/:slug/results/compare answers, per
// input (the same JSON whatever its key order), n, mean score and win rate per variant and the newest
// outputs, checked against values computed by hand; pages of inputs; 400s for what cannot be compared.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

interface Side {
  n: number;
  scored: number;
  mean: number | null;
  outputs: Array<{ logId: string; output: unknown; createdAt: string }>;
}
interface Compared {
  input: unknown;
  n: number;
  lastAt: string;
  winRate: number | null;
  a: Side;
  b: Side;
}
interface Answer {
  a: string;
  b: string;
  metric: string | null;
  inputs: Compared[];
  total: number;
  scanned: { a: number; b: number };
  truncated: boolean;
  nextCursor: string | null;
}

describe('compare two variants per input', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  const ids: Record<string, string> = {};

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'compare');
    api = runtime.api;
    ({ slug } = await api.createExperiment());
    const log = async (name: string, body: Record<string, unknown>) => {
      ids[name] = (await api.log(slug, body)).logId;
    };
    // X, sent with its keys in two orders. A: 3, 1, none, 5 corrected to 2 by feedback; B: 2, true (1).
    await log('a1', {
      variantKey: 'A',
      input: { q: 'x', lang: 'en' },
      output: { text: 'a1' },
      metrics: { score: 3 },
    });
    await log('b1', {
      variantKey: 'B',
      input: { lang: 'en', q: 'x' },
      output: { text: 'b1' },
      metrics: { score: 2 },
    });
    await log('a2', {
      variantKey: 'A',
      input: { lang: 'en', q: 'x' },
      output: { text: 'a2' },
      metrics: { score: 1 },
    });
    await log('a3', { variantKey: 'A', input: { q: 'x', lang: 'en' }, output: { text: 'a3' } });
    await log('b2', {
      variantKey: 'B',
      input: { q: 'x', lang: 'en' },
      output: { text: 'b2' },
      metrics: { score: true },
    });
    await log('a4', {
      variantKey: 'A',
      input: { q: 'x', lang: 'en' },
      output: { text: 'a4' },
      metrics: { score: 5 },
    });
    const fb = await api.post(`/experiment/${slug}/feedback`, { logId: ids.a4, metrics: { score: 2 } });
    assert.equal(fb.statusCode, 200, fb.body);
    // Z: A 4; B false (0), 4.
    await log('z1', { variantKey: 'B', input: { q: 'z' }, metrics: { score: false } });
    await log('z2', { variantKey: 'A', input: { q: 'z' }, metrics: { score: 4 } });
    await log('z3', { variantKey: 'B', input: { q: 'z' }, metrics: { score: 4 } });
    // Y: A only; then a result without input.
    await log('y1', { variantKey: 'A', input: { q: 'y' }, metrics: { score: 0 } });
    await log('none', { variantKey: 'A', output: { text: 'no input' } });
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  async function compare(query: string): Promise<Answer> {
    const res = await api.get(`/experiment/${slug}/results/compare?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Answer;
  }

  test('n, mean score and win rate per input, as computed by hand', async () => {
    const got = await compare('a=A&b=B&metric=score');
    assert.equal(got.metric, 'score');
    assert.deepEqual(got.scanned, { a: 7, b: 4 });
    assert.equal(got.truncated, false);
    assert.equal(got.total, 4);
    assert.equal(got.nextCursor, null);
    // Most results first; Y and the input-less result have one each: the newer first.
    assert.deepEqual(
      got.inputs.map((i) => i.input),
      [{ q: 'x', lang: 'en' }, { q: 'z' }, null, { q: 'y' }],
    );
    const [x, z, none, y] = got.inputs as [Compared, Compared, Compared, Compared];
    assert.equal(x.n, 6);
    assert.deepEqual({ n: x.a.n, scored: x.a.scored, mean: x.a.mean }, { n: 4, scored: 3, mean: 2 });
    assert.deepEqual({ n: x.b.n, scored: x.b.scored, mean: x.b.mean }, { n: 2, scored: 2, mean: 1.5 });
    // A (3, 1, 2) over B (2, 1): 3>2, 3>1, 1<2, 1=1 (½), 2=2 (½), 2>1 → 4 of 6.
    assert.ok(Math.abs(x.winRate! - 4 / 6) < 1e-12, String(x.winRate));
    // The newest three outputs, newest first.
    assert.deepEqual(
      x.a.outputs.map((o) => [o.logId, o.output]),
      [
        [ids.a4, { text: 'a4' }],
        [ids.a3, { text: 'a3' }],
        [ids.a2, { text: 'a2' }],
      ],
    );
    assert.deepEqual(
      x.b.outputs.map((o) => o.logId),
      [ids.b2, ids.b1],
    );
    // Z: A (4) over B (0, 4): a win and a tie.
    assert.equal(z.n, 3);
    assert.equal(z.winRate, 0.75);
    assert.deepEqual([z.a.mean, z.b.mean], [4, 2]);
    assert.equal(z.b.outputs[0]!.output, null);
    // One side only: no pairs, no win rate.
    assert.deepEqual([y.n, y.a.n, y.b.n, y.a.mean, y.b.mean, y.winRate], [1, 1, 0, 0, null, null]);
    assert.deepEqual([none.a.n, none.a.scored, none.winRate], [1, 0, null]);
    assert.deepEqual(none.a.outputs[0]!.output, { text: 'no input' });
  });

  test('b over a is the complement, and without a metric there are no scores', async () => {
    const swapped = await compare('a=B&b=A&metric=score');
    const x = swapped.inputs[0]!;
    assert.ok(Math.abs(x.winRate! - 2 / 6) < 1e-12);
    assert.deepEqual([x.a.n, x.b.n], [2, 4]);
    const plain = await compare('a=A&b=B');
    assert.equal(plain.metric, null);
    assert.deepEqual(
      plain.inputs.map((i) => [i.n, i.winRate, i.a.mean, i.b.mean, i.a.scored]),
      [
        [6, null, null, null, 0],
        [3, null, null, null, 0],
        [1, null, null, null, 0],
        [1, null, null, null, 0],
      ],
    );
  });

  test('pages of inputs read the same results, whatever is logged between pages', async () => {
    const first = await compare('a=A&b=B&metric=score&limit=3');
    assert.equal(first.inputs.length, 3);
    assert.ok(first.nextCursor);
    // A new result after the first page: the next page still reads the results of the first.
    await api.log(slug, { variantKey: 'B', input: { q: 'y' }, metrics: { score: 9 } });
    const second = await compare(
      `a=A&b=B&metric=score&limit=3&cursor=${encodeURIComponent(first.nextCursor)}`,
    );
    assert.deepEqual(
      second.inputs.map((i) => [i.input, i.n, i.winRate]),
      [[{ q: 'y' }, 1, null]],
    );
    assert.equal(second.nextCursor, null);
    // A fresh read sees it: Y now has one result of each, B's 9 beats A's 0.
    const fresh = await compare('a=A&b=B&metric=score');
    const y = fresh.inputs.find((i) => JSON.stringify(i.input) === '{"q":"y"}')!;
    assert.deepEqual([y.n, y.winRate], [2, 0]);
  });

  test('since and until keep the results logged in that time', async () => {
    const got = await compare('a=A&b=B&metric=score&since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00Z');
    assert.deepEqual([got.inputs, got.total, got.scanned], [[], 0, { a: 0, b: 0 }]);
  });

  test('what cannot be compared is a 400, an unknown experiment a 404', async () => {
    const get = (q: string, s = slug) => api.get(`/experiment/${s}/results/compare?${q}`);
    assertError(await get('a=A&b=A'), 400, /different variants/);
    assertError(await get('a=A&b=C'), 400, /'C' is not a variant/);
    assertError(await get('a=A'), 400);
    assertError(await get('a=A&b=B&cursor=nope'), 400, /cursor/);
    assertError(await get('a=A&b=B&limit=0'), 400);
    assertError(await get('a=A&b=B&since=2001-01-02T00:00:00Z&until=2001-01-01T00:00:00Z'), 400, /before/);
    assertError(await get('a=A&b=B', 'no-such-experiment'), 404);
    const noKey = await api.get(`/experiment/${slug}/results/compare?a=A&b=B`, null);
    assert.equal(noKey.statusCode, 401);
  });
});
