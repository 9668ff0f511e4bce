// Segments (issue 26): an experiment declares context keys; GET analysis?segment=key splits its results by
// their value (own context first, else the context of the assign their assignmentId names: server-issued or
// client-made, its exposure before, with or after the result), top 50 values and the rest as "(other)".
// Every count, mean, standard deviation and effect is checked against sums computed here from what was sent,
// and each segment's Welch p-value against scipy.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { clientAssignmentIdFor } from '../src/core/assignment-id.js';
import {
  type Api,
  alternating,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

interface Sent {
  variant: string;
  /** The segment value expected (undefined: no value). */
  plan: string | undefined;
  score: number;
}

interface VariantReading {
  key: string;
  n: number;
  mean: number | null;
  stdDev: number | null;
  pValue?: number | null;
  absolute?: { estimate: number | null; pValue: number | null };
}
interface SegmentReading {
  value: string;
  mergedValues?: number;
  results: Record<string, number>;
  metrics: Array<{ name: string; variants: VariantReading[] }>;
  warnings: string[];
}

function near(actual: number | null | undefined, expected: number, what: string, tol = 1e-9): void {
  assert.ok(typeof actual === 'number', `${what} is ${actual}`);
  assert.ok(
    Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)),
    `${what}: ${actual} vs ${expected}`,
  );
}

function moments(xs: number[]): { n: number; mean: number; sd: number } {
  const n = xs.length;
  const mean = xs.reduce((a, x) => a + x, 0) / n;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  return { n, mean, sd };
}

/** Welch's two-sided p-values from scipy, one per pair of samples. */
function welch(pairs: Array<[number[], number[]]>): number[] {
  const code =
    'import json,sys\nfrom scipy import stats\npairs=json.load(sys.stdin)\n' +
    'print(json.dumps([float(stats.ttest_ind(b,a,equal_var=False).pvalue) for a,b in pairs]))';
  const run = spawnSync('python3', ['-c', code], { input: JSON.stringify(pairs), encoding: 'utf8' });
  if (run.status !== 0)
    assert.fail(`python3 with scipy is required for this test: ${run.error?.message ?? run.stderr}`);
  return JSON.parse(run.stdout) as number[];
}

describe('segments', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'segments', { random: alternating() });
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

  async function create(body: Record<string, unknown>): Promise<string> {
    const slug = uniqueSlug('seg');
    const res = await api.post('/experiments', { slug, status: 'running', variants, ...body });
    assert.equal(res.statusCode, 201, res.body);
    return slug;
  }

  async function log(slug: string, body: Record<string, unknown>): Promise<void> {
    const res = await api.post(`/experiment/${slug}/log`, body);
    assert.equal(res.statusCode, 200, res.body);
  }

  async function assign(slug: string, userId: string, context?: Record<string, unknown>) {
    const res = await api.post(`/experiment/${slug}/assign`, { userId, context });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { variant: string; assignmentId: string };
  }

  /** A client-made assignment id (docs/client-contract.md), as a client assigning in-process makes it. */
  async function clientId(slug: string, variantIndex: number, userId: string): Promise<string> {
    const res = await api.get('/experiments/definitions');
    const d = (
      res.json() as { experiments: Array<{ slug: string; assignmentIdKey: number; version: number }> }
    ).experiments.find((e) => e.slug === slug)!;
    const uuid = randomUUID().replace(/^(.{14})./, '$17');
    return clientAssignmentIdFor(uuid, d.assignmentIdKey, { version: d.version, variantIndex, userId });
  }

  async function exposure(slug: string, assignmentId: string, context: Record<string, unknown>) {
    const res = await api.post('/exposures', { exposures: [{ experiment: slug, assignmentId, context }] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().accepted, 1, res.body);
  }

  async function analysis(slug: string, query: string) {
    const res = await api.get(`/experiment/${slug}/analysis?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as {
      segment: string;
      segmentNote: string;
      withoutSegment: number;
      segments: SegmentReading[];
      verdict: unknown;
      metrics: Array<{ name: string }>;
    };
  }

  test('segments is validated on create and update: up to 5 unique context keys', async () => {
    for (const [segments, why] of [
      ['plan', /segments/],
      [['a', 'b', 'c', 'd', 'e', 'f'], /segments/],
      [['plan', 'plan'], /segments\[1\] 'plan' is declared twice/],
      [['has space'], /segments/],
      [[''], /segments/],
      [[7], /segments/],
    ] as const) {
      const res = await api.post('/experiments', { slug: uniqueSlug('seg'), variants, segments });
      assertError(res, 400);
      assert.match(res.json().error, why, res.body);
    }
    const slug = await create({ segments: ['plan'] });
    const read = await api.get(`/experiment/${slug}`);
    assert.deepEqual(read.json().segments, ['plan']);
    const patched = await api.patch(`/experiment/${slug}`, { segments: ['plan', 'region'] });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual(patched.json().segments, ['plan', 'region']);
    const bad = await api.patch(`/experiment/${slug}`, { segments: ['region', 'region'] });
    assertError(bad, 400);
    assert.match(bad.json().error, /declared twice/);
    assert.deepEqual((await api.get(`/experiment/${slug}`)).json().segments, ['plan', 'region']);
    const plain = await create({});
    assert.deepEqual((await api.get(`/experiment/${plain}`)).json().segments, []);
  });

  test('a key the experiment does not declare is a 400', async () => {
    const slug = await create({ segments: ['plan'] });
    const res = await api.get(`/experiment/${slug}/analysis?segment=region`);
    assertError(res, 400);
    assert.match(res.json().error, /segment 'region' is not declared .*segments: plan/);
    const none = await create({});
    assertError(await api.get(`/experiment/${none}/analysis?segment=plan`), 400);
  });

  test("values from the result's own context, else its assign's (server-issued and client-made ids, either order)", async () => {
    const slug = await create({ segments: ['plan'] });
    const sent: Sent[] = [];
    let i = 0;
    const score = () => ((i++ * 7919) % 101) / 10;
    // Own context (strings, numbers and true/false as their JSON text; objects and null have no value).
    for (const [plan, expected] of [
      ['pro', 'pro'],
      ['pro', 'pro'],
      ['pro', 'pro'],
      [3, '3'],
      [3, '3'],
      [true, 'true'],
      [null, undefined],
      [{ tier: 1 }, undefined],
    ] as const) {
      for (const variant of ['A', 'B']) {
        const s = score();
        await log(slug, { variantKey: variant, context: { plan }, metrics: { score: s } });
        sent.push({ variant, plan: expected, score: s });
      }
    }
    // Server-issued ids: logged at once, in the same batch as the assign's exposure or just after it.
    for (let u = 0; u < 12; u++) {
      const plan = u % 3 === 0 ? 'free' : 'team';
      const a = await assign(slug, `user-${u}`, { plan, region: 'eu' });
      const s = score();
      await log(slug, { variantKey: a.variant, assignmentId: a.assignmentId, metrics: { score: s } });
      sent.push({ variant: a.variant, plan, score: s });
    }
    // The result's own context wins over its assign's.
    const own = await assign(slug, 'user-own', { plan: 'free' });
    await log(slug, {
      variantKey: own.variant,
      assignmentId: own.assignmentId,
      context: { plan: 'pro' },
      metrics: { score: 9.5 },
    });
    sent.push({ variant: own.variant, plan: 'pro', score: 9.5 });
    // An assign whose context has no value: none.
    const bare = await assign(slug, 'user-bare', { region: 'us' });
    await log(slug, { variantKey: bare.variant, assignmentId: bare.assignmentId, metrics: { score: 1 } });
    sent.push({ variant: bare.variant, plan: undefined, score: 1 });
    // Client-made ids: the exposure before the result, and after it (the result waits for it).
    for (let u = 0; u < 8; u++) {
      const variantIndex = u % 2;
      const id = await clientId(slug, variantIndex, `client-${u}`);
      const plan = u < 4 ? 'team' : 'enterprise';
      const s = score();
      if (u % 4 < 2) await exposure(slug, id, { plan });
      await log(slug, { variantKey: variants[variantIndex]!.key, assignmentId: id, metrics: { score: s } });
      if (u % 4 >= 2) await exposure(slug, id, { plan });
      sent.push({ variant: variants[variantIndex]!.key, plan, score: s });
    }
    // A client's result whose exposure never comes: no value.
    const lost = await clientId(slug, 0, 'client-lost');
    await log(slug, { variantKey: 'A', assignmentId: lost, metrics: { score: 4 } });
    sent.push({ variant: 'A', plan: undefined, score: 4 });

    const answer = await analysis(slug, 'segment=plan');
    assert.equal(answer.segment, 'plan');
    assert.match(answer.segmentNote, /exploratory: no verdict per segment.*multiple comparisons/);
    assert.ok(answer.verdict, 'the whole analysis keeps its verdict');
    assert.equal(answer.withoutSegment, sent.filter((s) => s.plan === undefined).length);

    // Expected, from what was sent.
    const byPlan = new Map<string, Sent[]>();
    for (const s of sent) if (s.plan !== undefined) byPlan.set(s.plan, [...(byPlan.get(s.plan) ?? []), s]);
    const order = [...byPlan]
      .sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))
      .map(([v]) => v);
    assert.deepEqual(
      answer.segments.map((s) => s.value),
      order,
    );
    const pairs: Array<[number[], number[]]> = [];
    const readings: VariantReading[] = [];
    for (const seg of answer.segments) {
      const rows = byPlan.get(seg.value)!;
      const scores = (v: string) => rows.filter((r) => r.variant === v).map((r) => r.score);
      assert.deepEqual(seg.results, { A: scores('A').length, B: scores('B').length }, seg.value);
      const metric = seg.metrics.find((m) => m.name === 'score')!;
      assert.ok(metric, `${seg.value}: score`);
      const [a, b] = metric.variants;
      for (const [reading, xs] of [
        [a!, scores('A')],
        [b!, scores('B')],
      ] as const) {
        assert.equal(reading.n, xs.length, `${seg.value} ${reading.key} n`);
        if (xs.length === 0) continue;
        const m = moments(xs);
        near(reading.mean, m.mean, `${seg.value} ${reading.key} mean`);
        if (xs.length > 1) near(reading.stdDev, m.sd, `${seg.value} ${reading.key} stdDev`, 1e-7);
      }
      if (scores('A').length > 1 && scores('B').length > 1) {
        near(
          b!.absolute?.estimate,
          moments(scores('B')).mean - moments(scores('A')).mean,
          `${seg.value} effect`,
        );
        pairs.push([scores('A'), scores('B')]);
        readings.push(b!);
      }
      assert.ok(!('verdict' in seg), 'no verdict per segment');
    }
    assert.ok(pairs.length >= 3, `segments with both variants compared: ${pairs.length}`);
    for (const [k, p] of welch(pairs).entries()) {
      near(readings[k]!.absolute?.pValue, p, `Welch p-value of the absolute effect ${k}`, 1e-6);
    }

    // Without ?segment the answer has no segments.
    const whole = await api.get(`/experiment/${slug}/analysis`);
    assert.equal(whole.json().segments, undefined);
  });

  test('the 50 values with most results are shown, the rest merged as one "(other)"', async () => {
    const slug = await create({ segments: ['cohort'] });
    const results: Array<Record<string, unknown>> = [];
    const expected = new Map<string, { A: number[]; B: number[] }>();
    // 60 values: value c has (c % 7) + 1 results per variant, a few of them 1..7 wide.
    for (let c = 0; c < 60; c++) {
      const value = `c${String(c).padStart(2, '0')}`;
      const per = (c % 7) + 1;
      const e = { A: [] as number[], B: [] as number[] };
      for (let k = 0; k < per; k++) {
        for (const variant of ['A', 'B'] as const) {
          const x = c + k / 10 + (variant === 'B' ? 0.5 : 0);
          e[variant].push(x);
          results.push({ variantKey: variant, context: { cohort: value }, metrics: { x } });
        }
      }
      expected.set(value, e);
    }
    const res = await api.post(`/experiment/${slug}/logs`, { results });
    assert.equal(res.statusCode, 200, res.body);
    const answer = await analysis(slug, 'segment=cohort');
    assert.equal(answer.segments.length, 51);
    const ranked = [...expected]
      .sort((a, b) => b[1].A.length - a[1].A.length || (a[0] < b[0] ? -1 : 1))
      .map(([v]) => v);
    const top = ranked.slice(0, 50);
    assert.deepEqual(
      answer.segments.slice(0, 50).map((s) => s.value),
      top,
    );
    const other = answer.segments[50]!;
    assert.equal(other.value, '(other)');
    assert.equal(other.mergedValues, 10);
    const rest = ranked.slice(50).map((v) => expected.get(v)!);
    const xsA = rest.flatMap((e) => e.A);
    const xsB = rest.flatMap((e) => e.B);
    assert.deepEqual(other.results, { A: xsA.length, B: xsB.length });
    const metric = other.metrics.find((m) => m.name === 'x')!;
    near(metric.variants[0]!.mean, moments(xsA).mean, 'other A mean');
    near(metric.variants[1]!.mean, moments(xsB).mean, 'other B mean');
    near(metric.variants[1]!.stdDev, moments(xsB).sd, 'other B stdDev', 1e-7);
    assert.equal(answer.withoutSegment, 0);
  });
});
