// GET /experiment/:slug/analysis/timeseries and GET /experiment/:slug/versions (issue 15, section 5):
// results committed in known hours, their cumulative effect per hour and per day, the last period equal
// to the analysis, and the payload history of an experiment.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Exposure } from '../src/core/exposure.js';
import type { NewResult } from '../src/core/writes.js';
import { toExposureBatches } from '../src/ingest/exposure-queue.js';
import {
  type Api,
  assertError,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
} from './helpers/app.js';

const DAY_1_09 = '2026-03-02T09:15:00.000Z';
const DAY_1_10 = '2026-03-02T10:45:30.000Z';
const DAY_2_08 = '2026-03-03T08:05:00.000Z';
const hour = (iso: string) => `${iso.slice(0, 13)}:00:00.000Z`;
const day = (iso: string) => `${iso.slice(0, 10)}T00:00:00.000Z`;

// latency per hour and variant; ok is true for latency < 10. Integers, so every sum is exact and the
// hourly sums add up to exactly the live rollups the analysis reads.
const LATENCY: Array<[string, 'A' | 'B', number[]]> = [
  [DAY_1_09, 'A', [10, 12]],
  [DAY_1_09, 'B', [9]],
  [DAY_1_10, 'A', [11]],
  [DAY_1_10, 'B', [8, 7]],
  [DAY_2_08, 'A', [13, 12]],
  [DAY_2_08, 'B', [6]],
];
const EXPOSURES: Array<[string, 'A' | 'B', number]> = [
  [DAY_1_09, 'A', 2],
  [DAY_1_09, 'B', 1],
  [DAY_1_10, 'B', 2],
  [DAY_2_08, 'A', 2],
  [DAY_2_08, 'B', 1],
];

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;

/** Every value of `variant` logged up to the end of the period `end` (exclusive upper bound). */
function upTo(variant: 'A' | 'B', end: string): number[] {
  return LATENCY.filter(([at, v]) => v === variant && at < end).flatMap(([, , xs]) => xs);
}

interface SeriesVariant {
  key: string;
  n: number;
  mean: number | null;
  absolute?: unknown;
  relative?: unknown;
  significant?: boolean;
  better?: boolean | null;
  worse?: boolean | null;
  chanceToWin?: number | null;
}
interface SeriesPeriod {
  start: string;
  exposures: Record<string, number>;
  variants: SeriesVariant[];
}

describe('timeseries', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'timeseries');
    api = runtime.api;
    slug = (await api.createExperiment({ metrics: [{ name: 'latency', direction: 'decrease' }] })).slug;
    const found = await runtime.store.findExperiment(slug);
    assert.ok(found);
    const id = found.id;
    let n = 0;
    const results = LATENCY.flatMap(([createdAt, variantKey, xs]) =>
      xs.map(
        (latency): NewResult => ({
          logId: `ts-${++n}`,
          experimentId: id,
          version: 1,
          variantKey,
          knownVariant: true,
          userId: null,
          assignmentId: null,
          input: null,
          output: null,
          metrics: JSON.stringify({ latency, ok: latency < 10 }),
          context: null,
          timestamp: null,
          createdAt,
        }),
      ),
    );
    const exposures = EXPOSURES.flatMap(([createdAt, variantKey, count]) =>
      Array.from(
        { length: count },
        (): Exposure => ({
          assignmentId: `as-${++n}`,
          experimentId: id,
          version: 1,
          variantKey,
          userId: `u${n}`,
          context: null,
          createdAt,
        }),
      ),
    );
    await runtime.store.appendBatch({ results, exposures: toExposureBatches(exposures) });
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const series = async (query: string) => {
    const res = await api.get(`/experiment/${slug}/analysis/timeseries?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  /** What every period must hold: that period's own exposures, and the values up to its end. */
  function assertPeriods(periods: SeriesPeriod[], starts: string[], next: (start: string) => string): void {
    assert.deepEqual(
      periods.map((b) => b.start),
      starts,
    );
    for (const b of periods) {
      const end = next(b.start);
      const exposed = (v: string) =>
        EXPOSURES.filter(([at, k]) => k === v && at >= b.start && at < end).reduce((a, [, , c]) => a + c, 0);
      assert.deepEqual(b.exposures, { A: exposed('A'), B: exposed('B') }, b.start);
      assert.deepEqual(
        b.variants.map((v) => [v.key, v.n, v.mean]),
        (['A', 'B'] as const).map((k) => [k, upTo(k, end).length, mean(upTo(k, end))]),
        b.start,
      );
      assert.equal(b.variants[0]!.absolute, undefined, 'the control has no effect');
      assert.ok(b.variants[1]!.absolute && b.variants[1]!.relative, 'the treatment has both effects');
    }
  }

  test('hour periods: each hour’s exposures, and n and means cumulative up to the end of the hour', async () => {
    const body = await series('metric=latency&interval=hour');
    assert.equal(body.slug, slug);
    assert.equal(body.metric, 'latency');
    assert.equal(body.kind, 'mean');
    assert.equal(body.direction, 'decrease');
    assert.equal(body.unit, 'call');
    assert.equal(body.interval, 'hour');
    assert.equal(body.control, 'A');
    const next = (start: string) => new Date(Date.parse(start) + 3600_000).toISOString();
    assertPeriods(body.periods, [hour(DAY_1_09), hour(DAY_1_10), hour(DAY_2_08)], next);
  });

  test('day periods (the default) sum their hours', async () => {
    const body = await series('metric=latency');
    assert.equal(body.interval, 'day');
    const next = (start: string) => new Date(Date.parse(start) + 86_400_000).toISOString();
    assertPeriods(body.periods, [day(DAY_1_09), day(DAY_2_08)], next);
  });

  test("the last period's cumulative effect is the analysis of all the data, for every method", async () => {
    const cases = [
      'metric=latency',
      'metric=latency&method=sequential&nStar=200',
      'metric=latency&method=bayesian&sided=better',
      'metric=latency&control=B&alpha=0.1&sided=less',
      'metric=ok&method=bayesian',
    ];
    for (const query of cases) {
      const q = new URLSearchParams(query);
      const metric = q.get('metric')!;
      q.delete('metric');
      const analysisRes = await api.get(`/experiment/${slug}/analysis?metrics=${metric}&${q}`);
      assert.equal(analysisRes.statusCode, 200, analysisRes.body);
      const analysed = analysisRes.json().metrics[0];
      const body = await series(query);
      assert.equal(body.kind, analysed.kind, query);
      assert.equal(body.sided, analysed.sided, query);
      const last: SeriesPeriod = body.periods.at(-1);
      assert.equal(last.variants.length, 2, query);
      for (const [i, v] of last.variants.entries()) {
        const a = analysed.variants[i];
        assert.deepEqual(
          [v.key, v.n, v.mean, v.absolute, v.relative, v.significant, v.better, v.worse, v.chanceToWin],
          [a.key, a.n, a.mean, a.absolute, a.relative, a.significant, a.better, a.worse, a.chanceToWin],
          `${query}: ${v.key}`,
        );
      }
    }
  });

  test('a proportion is the share of true, cumulatively', async () => {
    const body = await series('metric=ok&interval=hour');
    assert.equal(body.kind, 'proportion');
    assert.equal(body.direction, null);
    // B: 9 | 8, 7 | 6 are all below 10; A: none is.
    assert.deepEqual(
      body.periods.map((b: SeriesPeriod) => b.variants.map((v) => [v.n, v.mean])),
      [
        [
          [2, 0],
          [1, 1],
        ],
        [
          [3, 0],
          [3, 1],
        ],
        [
          [5, 0],
          [4, 1],
        ],
      ],
    );
  });

  test('an unknown metric is 400 naming the metrics with data; bad parameters 400; an unknown slug 404', async () => {
    const url = `/experiment/${slug}/analysis/timeseries`;
    assertError(await api.get(`${url}?metric=nope`), 400, /metric 'nope' has no data.*latency, ok/);
    assertError(await api.get(url), 400, /metric/);
    assertError(await api.get(`${url}?metric=latency&interval=week`), 400, /interval/);
    assertError(await api.get(`${url}?metric=latency&control=Z`), 400, /control 'Z'/);
    assertError(await api.get(`${url}?metric=latency&method=magic`), 400, /method/);
    assertError(await api.get(`${url}?metric=latency&alpha=2`), 400, /alpha/);
    assertError(await api.get('/experiment/no-such-experiment/analysis/timeseries?metric=latency'), 404);
    assertError(await api.get('/experiment/no-such-experiment/versions'), 404);
    const empty = (await api.createExperiment()).slug;
    assertError(
      await api.get(`/experiment/${empty}/analysis/timeseries?metric=latency`),
      400,
      /metrics: none yet/,
    );
  });

  test('a sticky experiment is read per user: its last period is the analysis, n, mean and standard error', async () => {
    const sticky = (await api.createExperiment({ assignment: 'sticky' })).slug;
    // Users calling 1 to 4 times; integer and boolean values (sums exact in any order), and a float metric.
    const results = [];
    for (let u = 0; u < 60; u++) {
      const variantKey = u % 2 === 0 ? 'A' : 'B';
      for (let c = 0; c <= u % 4; c++) {
        const score = (u * 7 + c * 3) % 11;
        results.push({
          variantKey,
          userId: `user-${u}`,
          metrics: { score, ok: (u + c) % 3 === 0, cost: score * 0.013 + c * 0.0007 },
        });
      }
    }
    await api.logMany(sticky, results.slice(0, 70));
    await api.logMany(sticky, results.slice(70));
    const analysis = (await api.get(`/experiment/${sticky}/analysis`)).json();
    for (const metric of ['score', 'ok', 'cost']) {
      const res = await api.get(`/experiment/${sticky}/analysis/timeseries?metric=${metric}&interval=hour`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.unit, 'user', metric);
      const last = body.periods.at(-1).variants;
      const read = analysis.metrics.find((m: { name: string }) => m.name === metric);
      assert.equal(read.unit, 'user');
      const exact = metric !== 'cost';
      read.variants.forEach((v: Compared, i: number) => {
        assert.equal(last[i].n, v.n, `${metric}/${v.key}: users`);
        same(last[i].mean, v.mean, exact, `${metric}/${v.key}: mean`);
        if (i > 0) {
          same(last[i].absolute.stdError, v.absolute!.stdError, exact, `${metric}/${v.key}: standard error`);
          same(last[i].absolute.pValue, v.absolute!.pValue, exact, `${metric}/${v.key}: p-value`);
        }
      });
    }
  });

  test('a quantile statistic: the series compares the p95, and its last period is the analysis', async () => {
    for (const assignment of ['random', 'sticky'] as const) {
      const { slug } = await api.createExperiment({
        assignment,
        metrics: [{ name: 'latency_ms', direction: 'decrease', role: 'primary', statistic: 'p95' }],
      });
      const results = [];
      for (let u = 0; u < 300; u++) {
        const variantKey = u % 2 === 0 ? 'A' : 'B';
        for (let c = 0; c <= u % 3; c++) {
          const latency = 400 + ((u * 37 + c * 101) % 500) * (variantKey === 'B' ? 0.8 : 1);
          results.push({ variantKey, userId: `user-${u}`, metrics: { latency_ms: Math.round(latency) } });
        }
      }
      await api.logMany(slug, results);
      const analysis = (await api.get(`/experiment/${slug}/analysis`)).json();
      const res = await api.get(`/experiment/${slug}/analysis/timeseries?metric=latency_ms&interval=hour`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.statistic, 'p95');
      const read = analysis.metrics.find((m: { name: string }) => m.name === 'latency_ms');
      assert.equal(read.statistic, 'p95');
      const last = body.periods.at(-1).variants;
      assert.ok(last[0].quantile > last[1].quantile, `${assignment}: B's p95 is lower`);
      const b = read.variants[1];
      same(last[1].absolute.estimate, b.absolute.estimate, false, `${assignment}: p95 difference`);
      same(last[1].absolute.stdError, b.absolute.stdError, false, `${assignment}: its standard error`);
      same(last[1].absolute.pValue, b.absolute.pValue, false, `${assignment}: its p-value`);
    }
  });

  test('versions: every variant definition, oldest first, a payload change starting version 2', async () => {
    const created = await api.createExperiment();
    const v1 = await api.get(`/experiment/${created.slug}/versions`);
    assert.equal(v1.statusCode, 200, v1.body);
    assert.deepEqual(v1.json(), {
      versions: [{ version: 1, createdAt: created.createdAt, variants: created.variants }],
    });
    const variants = [
      { key: 'A', payload: { prompt: 'You are terse.' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'You are verbose, and kind.' }, trafficPercent: 50 },
    ];
    const patched = await api.patch(`/experiment/${created.slug}`, { variants });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().version, 2);
    // A change that keeps the variants starts no version.
    assert.equal((await api.patch(`/experiment/${created.slug}`, { name: 'renamed' })).statusCode, 200);
    const res = await api.get(`/experiment/${created.slug}/versions`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      versions: [
        { version: 1, createdAt: created.createdAt, variants: created.variants },
        { version: 2, createdAt: patched.json().updatedAt, variants },
      ],
    });
  });
});

/** Equal exactly, or (sums of floats added in another grouping) to 1e-12 relative. */
function same(actual: number | null, expected: number | null, exact: boolean, what: string): void {
  if (exact || actual === null || expected === null) {
    assert.equal(actual, expected, what);
    return;
  }
  assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.abs(expected), `${what}: ${actual} vs ${expected}`);
}

/** A variant of the analysis, as this file reads it. */
interface Compared {
  key: string;
  n: number;
  mean: number | null;
  absolute?: { stdError: number | null; pValue: number | null };
}
