// Late feedback in segments (issue 26): a rating given on a result (logId) counts in that result's segment
// value (its own context, else its assign's), on an assignment in the assign's; a replacement moves the
// segment's sums by the difference, and a value given before the key was declared, never counted in the
// segment, enters it when replaced (nothing is taken out of it). Every n, mean and standard deviation is
// checked against the latest values sent, kept here per target, on both databases.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { clientAssignmentIdFor } from '../src/core/assignment-id.js';
import {
  type Api,
  alternating,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

/** The latest rating of one target, as sent: its variant and the segment value expected (none: undefined). */
interface Rated {
  variant: string;
  plan: string | undefined;
  rating: number;
}

interface VariantReading {
  key: string;
  n: number;
  mean: number | null;
  stdDev: number | null;
}
interface Reading {
  metrics: Array<{ name: string; variants: VariantReading[] }>;
}

function near(actual: number | null | undefined, expected: number, what: string, tol = 1e-9): void {
  assert.ok(typeof actual === 'number', `${what} is ${actual}`);
  assert.ok(
    Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)),
    `${what}: ${actual} vs ${expected}`,
  );
}

/** n, mean and sample standard deviation of `xs`. */
function moments(xs: number[]): { n: number; mean: number; sd: number } {
  const n = xs.length;
  const mean = xs.reduce((a, x) => a + x, 0) / n;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  return { n, mean, sd };
}

/** Checks the `rating` readings of `reading` (per variant) against the ratings `expected`. */
function checkRatings(reading: Reading | undefined, expected: Rated[], what: string): void {
  const metric = reading?.metrics.find((m) => m.name === 'rating');
  assert.ok(metric, `${what}: rating is analysed`);
  for (const v of metric.variants) {
    const xs = expected.filter((r) => r.variant === v.key).map((r) => r.rating);
    assert.equal(v.n, xs.length, `${what} ${v.key} n`);
    if (xs.length === 0) continue;
    const m = moments(xs);
    near(v.mean, m.mean, `${what} ${v.key} mean`);
    if (xs.length > 1) near(v.stdDev, m.sd, `${what} ${v.key} stdDev`, 1e-7);
  }
  assert.equal(
    metric.variants.reduce((a, v) => a + v.n, 0),
    expected.length,
    `${what}: every rating once`,
  );
}

describe('feedback in segments', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'segfeedback', { random: alternating() });
    api = runtime.api;
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const variants = [
    { key: 'A', payload: {}, trafficPercent: 50 },
    { key: 'B', payload: {}, trafficPercent: 50 },
  ];

  async function create(segments: string[]): Promise<string> {
    const slug = uniqueSlug('segfb');
    const res = await api.post('/experiments', { slug, status: 'running', variants, segments });
    assert.equal(res.statusCode, 201, res.body);
    return slug;
  }

  async function log(slug: string, body: Record<string, unknown>): Promise<string> {
    const res = await api.post(`/experiment/${slug}/log`, body);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().logId as string;
  }

  async function assign(slug: string, userId: string, context: Record<string, unknown>) {
    const res = await api.post(`/experiment/${slug}/assign`, { userId, context });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { variant: string; assignmentId: string };
  }

  async function feedback(slug: string, body: Record<string, unknown>): Promise<void> {
    const res = await api.post(`/experiment/${slug}/feedback`, body);
    assert.equal(res.statusCode, 200, res.body);
  }

  async function feedbackBatch(items: Array<Record<string, unknown>>): Promise<void> {
    const res = await api.post('/feedback', { feedback: items });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().rejected, [], res.body);
    assert.equal(res.json().accepted, items.length, res.body);
  }

  async function analysis(slug: string, query = '') {
    const res = await api.get(`/experiment/${slug}/analysis${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Reading & { segments?: Array<Reading & { value: string }> };
  }

  /** The whole analysis and each segment value's ratings against the latest ratings of `rated`. */
  async function check(slug: string, rated: Map<string, Rated>): Promise<void> {
    const all = [...rated.values()];
    checkRatings(await analysis(slug), all, 'whole');
    const answer = await analysis(slug, '?segment=plan');
    const plans = new Set(all.flatMap((r) => (r.plan === undefined ? [] : [r.plan])));
    for (const plan of plans) {
      const seg = answer.segments?.find((s) => s.value === plan);
      checkRatings(
        seg,
        all.filter((r) => r.plan === plan),
        `plan ${plan}`,
      );
    }
    for (const seg of answer.segments ?? []) {
      if (plans.has(seg.value)) continue;
      const metric = seg.metrics.find((m) => m.name === 'rating');
      assert.equal(metric?.variants.reduce((a, v) => a + v.n, 0) ?? 0, 0, `${seg.value}: no rating`);
    }
  }

  test('by logId in its result’s value, by assignmentId in its assign’s, single and batch; replacements move the means', async () => {
    const slug = await create(['plan']);
    const other = await create(['plan']);
    const rated = new Map<string, Rated>();
    let k = 0;
    const next = () => ((k++ * 37) % 11) / 2;
    const plans = ['pro', 'free', 'team'];
    // Results with their own context, rated by logId (the single route).
    const own: Array<{ logId: string; variant: string; plan: string }> = [];
    for (let i = 0; i < 12; i++) {
      const variant = i % 2 === 0 ? 'A' : 'B';
      const plan = plans[i % 3]!;
      const logId = await log(slug, { variantKey: variant, context: { plan }, metrics: { score: i } });
      own.push({ logId, variant, plan });
      const rating = next();
      await feedback(slug, { logId, metrics: { rating } });
      rated.set(`l:${logId}`, { variant, plan, rating });
    }
    // Assignments with a plan (and one without), rated by assignmentId through POST /feedback, with an
    // item for another experiment in the same batch; results naming them, rated by logId.
    const items: Array<Record<string, unknown>> = [];
    const assigned: Array<{ assignmentId: string; variant: string; plan: string | undefined }> = [];
    for (let u = 0; u < 9; u++) {
      const plan = u === 8 ? undefined : plans[u % 2]!;
      const a = await assign(slug, `user-${u}`, plan === undefined ? { region: 'eu' } : { plan });
      assigned.push({ assignmentId: a.assignmentId, variant: a.variant, plan });
      const rating = next();
      items.push({ experiment: slug, assignmentId: a.assignmentId, metrics: { rating } });
      rated.set(`a:${a.assignmentId}`, { variant: a.variant, plan, rating });
      const logId = await log(slug, { variantKey: a.variant, assignmentId: a.assignmentId });
      const onLog = next();
      items.push({ experiment: slug, logId, metrics: { rating: onLog } });
      rated.set(`l:${logId}`, { variant: a.variant, plan, rating: onLog });
    }
    // The result's own context wins over its assign's.
    const mixed = await assign(slug, 'user-mixed', { plan: 'free' });
    const mixedLog = await log(slug, {
      variantKey: mixed.variant,
      assignmentId: mixed.assignmentId,
      context: { plan: 'team' },
    });
    items.push({ experiment: slug, logId: mixedLog, metrics: { rating: 4.5 } });
    rated.set(`l:${mixedLog}`, { variant: mixed.variant, plan: 'team', rating: 4.5 });
    const elsewhere = await log(other, { variantKey: 'A', context: { plan: 'pro' } });
    items.push({ experiment: other, logId: elsewhere, metrics: { rating: 100 } });
    await feedbackBatch(items);
    await check(slug, rated);
    const otherRated = new Map([[`l:${elsewhere}`, { variant: 'A', plan: 'pro', rating: 100 }]]);
    await check(other, otherRated);

    // Replacements: by logId and by assignmentId, single and in a batch (twice for one target there).
    for (const r of own.slice(0, 6)) {
      const rating = next() + 10;
      await feedback(slug, { logId: r.logId, metrics: { rating } });
      rated.set(`l:${r.logId}`, { variant: r.variant, plan: r.plan, rating });
    }
    const again: Array<Record<string, unknown>> = [];
    for (const a of assigned.slice(0, 5)) {
      const rating = next() - 3;
      again.push({ experiment: slug, assignmentId: a.assignmentId, metrics: { rating: 99 } });
      again.push({ experiment: slug, assignmentId: a.assignmentId, metrics: { rating } });
      rated.set(`a:${a.assignmentId}`, { variant: a.variant, plan: a.plan, rating });
    }
    again.push({ experiment: other, logId: elsewhere, metrics: { rating: 1 } });
    otherRated.set(`l:${elsewhere}`, { variant: 'A', plan: 'pro', rating: 1 });
    await feedbackBatch(again);
    await check(slug, rated);
    await check(other, otherRated);
  });

  test('a rating given before the key was declared counts in the segment once replaced, never subtracted from it', async () => {
    const slug = await create([]);
    const rated = new Map<string, Rated>();
    const early: Array<{ logId: string; variant: string; plan: string }> = [];
    for (let i = 0; i < 8; i++) {
      const variant = i % 2 === 0 ? 'A' : 'B';
      const plan = i < 4 ? 'pro' : 'free';
      const logId = await log(slug, { variantKey: variant, context: { plan } });
      await feedback(slug, { logId, metrics: { rating: i + 1 } });
      early.push({ logId, variant, plan });
      // Not counted in any segment: the key is not declared yet.
      rated.set(`l:${logId}`, { variant, plan: undefined, rating: i + 1 });
    }
    // An assign before the declaration keeps no segment value: feedback on it never has one.
    const a = await assign(slug, 'user-early', { plan: 'pro' });
    const patched = await api.patch(`/experiment/${slug}`, { segments: ['plan'] });
    assert.equal(patched.statusCode, 200, patched.body);
    await feedback(slug, { assignmentId: a.assignmentId, metrics: { rating: 3 } });
    rated.set(`a:${a.assignmentId}`, { variant: a.variant, plan: undefined, rating: 3 });
    await check(slug, rated);
    // Replaced now: each enters its result's segment with its new value (n + 1 there, n unchanged overall).
    for (const [i, r] of early.entries()) {
      if (i % 4 === 3) continue;
      const rating = 10 + i * 0.5;
      await feedback(slug, { logId: r.logId, metrics: { rating } });
      rated.set(`l:${r.logId}`, { variant: r.variant, plan: r.plan, rating });
    }
    // A result logged after the declaration, rated and corrected.
    const late = await log(slug, { variantKey: 'B', context: { plan: 'free' } });
    await feedback(slug, { logId: late, metrics: { rating: 2 } });
    await feedback(slug, { logId: late, metrics: { rating: 8 } });
    rated.set(`l:${late}`, { variant: 'B', plan: 'free', rating: 8 });
    await check(slug, rated);
  });

  test('a client-made assignment: feedback before its exposure is in no segment; replaced after it, it is', async () => {
    const slug = await create(['plan']);
    const defs = (await api.get('/experiments/definitions')).json() as {
      experiments: Array<{ slug: string; assignmentIdKey: number; version: number }>;
    };
    const d = defs.experiments.find((e) => e.slug === slug)!;
    const rated = new Map<string, Rated>();
    const ids: Array<{ id: string; variant: string; logId: string }> = [];
    for (let u = 0; u < 4; u++) {
      const variantIndex = u % 2;
      const uuid = randomUUID().replace(/^(.{14})./, '$17');
      const id = clientAssignmentIdFor(uuid, d.assignmentIdKey, {
        version: d.version,
        variantIndex,
        userId: `client-${u}`,
      });
      const variant = variants[variantIndex]!.key;
      const logId = await log(slug, { variantKey: variant, assignmentId: id });
      await feedback(slug, { assignmentId: id, metrics: { rating: u } });
      await feedback(slug, { logId, metrics: { rating: u + 0.5 } });
      rated.set(`a:${id}`, { variant, plan: undefined, rating: u });
      rated.set(`l:${logId}`, { variant, plan: undefined, rating: u + 0.5 });
      ids.push({ id, variant, logId });
    }
    await check(slug, rated);
    const res = await api.post('/exposures', {
      exposures: ids.map((c) => ({ experiment: slug, assignmentId: c.id, context: { plan: 'pro' } })),
    });
    assert.equal(res.statusCode, 200, res.body);
    // The results resolved into "pro"; their feedback stays where it was counted until replaced.
    await check(slug, rated);
    for (const [u, c] of ids.entries()) {
      await feedback(slug, { assignmentId: c.id, metrics: { rating: 10 + u } });
      await feedback(slug, { logId: c.logId, metrics: { rating: 20 + u } });
      rated.set(`a:${c.id}`, { variant: c.variant, plan: 'pro', rating: 10 + u });
      rated.set(`l:${c.logId}`, { variant: c.variant, plan: 'pro', rating: 20 + u });
    }
    await check(slug, rated);
  });
});
