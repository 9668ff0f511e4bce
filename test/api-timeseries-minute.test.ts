// GET /experiment/:slug/analysis/timeseries?interval=minute (issue 36): an experiment's first hours minute by
// minute, read from the raw rows; its last minute of an hour reads as that hour, and 6 hours is the bound.
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

// Two hours of latency per variant, several minutes in each.
const LATENCY: Array<[string, 'A' | 'B', number[]]> = [
  ['2026-03-02T09:15:10.000Z', 'A', [10, 12]],
  ['2026-03-02T09:15:40.000Z', 'B', [9]],
  ['2026-03-02T09:48:00.000Z', 'A', [11]],
  ['2026-03-02T09:59:59.000Z', 'B', [8, 7]],
  ['2026-03-02T10:02:00.000Z', 'A', [13]],
  ['2026-03-02T10:30:00.000Z', 'B', [6, 5]],
];
const EXPOSURES: Array<[string, 'A' | 'B', number]> = [
  ['2026-03-02T09:15:00.000Z', 'A', 2],
  ['2026-03-02T09:15:00.000Z', 'B', 1],
  ['2026-03-02T09:59:00.000Z', 'B', 2],
  ['2026-03-02T10:02:00.000Z', 'A', 1],
];

interface Period {
  start: string;
  exposures: Record<string, number>;
  variants: Array<{ key: string; n: number; mean: number | null; absolute?: { estimate?: number } }>;
}

describe('timeseries per minute', { skip: SKIP_BACKEND }, () => {
  let dir: string;
  let runtime: TestRuntime;
  let api: Api;
  let slug: string;
  let id: number;
  let n = 0;

  const append = async (latency: typeof LATENCY, exposed: typeof EXPOSURES) => {
    const results = latency.flatMap(([createdAt, variantKey, xs]) =>
      xs.map(
        (value): NewResult => ({
          logId: `tm-${++n}`,
          experimentId: id,
          version: 1,
          variantKey,
          knownVariant: true,
          userId: null,
          assignmentId: null,
          input: null,
          output: null,
          metrics: JSON.stringify({ latency: value, ok: value < 10 }),
          context: null,
          timestamp: null,
          createdAt,
        }),
      ),
    );
    const exposures = exposed.flatMap(([createdAt, variantKey, count]) =>
      Array.from(
        { length: count },
        (): Exposure => ({
          assignmentId: `am-${++n}`,
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
  };

  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, 'tsminute');
    api = runtime.api;
    slug = (await api.createExperiment({ metrics: [{ name: 'latency', direction: 'decrease' }] })).slug;
    const found = await runtime.store.findExperiment(slug);
    assert.ok(found);
    id = found.id;
    await append(LATENCY, EXPOSURES);
  });

  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });

  const series = async (query: string): Promise<Period[]> => {
    const res = await api.get(`/experiment/${slug}/analysis/timeseries?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().interval, query.includes('minute') ? 'minute' : 'hour');
    return res.json().periods;
  };

  for (const metric of ['latency', 'ok']) {
    test(`${metric}: the minutes of an hour end where the hour ends, and add up its exposures`, async () => {
      const minutes = await series(`metric=${metric}&interval=minute`);
      const hours = await series(`metric=${metric}&interval=hour`);
      assert.deepEqual(
        minutes.map((p) => p.start),
        [
          '2026-03-02T09:15:00.000Z',
          '2026-03-02T09:48:00.000Z',
          '2026-03-02T09:59:00.000Z',
          '2026-03-02T10:02:00.000Z',
          '2026-03-02T10:30:00.000Z',
        ],
      );
      assert.equal(hours.length, 2);
      // The last minute with data of each hour holds the cumulative reading of that hour.
      for (const [minute, hour] of [
        [minutes[2]!, hours[0]!],
        [minutes[4]!, hours[1]!],
      ] as const) {
        assert.deepEqual(
          minute.variants.map((v) => [v.key, v.n, v.mean, v.absolute]),
          hour.variants.map((v) => [v.key, v.n, v.mean, v.absolute]),
          `${minute.start} vs ${hour.start}`,
        );
      }
      for (const [i, hour] of hours.entries()) {
        const inHour = minutes.filter((p) => p.start.slice(0, 13) === hour.start.slice(0, 13));
        for (const key of ['A', 'B']) {
          const sum = inHour.reduce((a, p) => a + (p.exposures[key] ?? 0), 0);
          assert.equal(sum, hour.exposures[key] ?? 0, `exposures ${key} in hour ${i}`);
        }
      }
      assert.ok(minutes[0]!.variants.every((v) => v.n > 0));
      assert.equal(minutes[0]!.variants[0]!.n, 2);
    });
  }

  test('sticky: per-user sums minute by minute; the last minute of an hour reads as that hour', async () => {
    const sticky = (
      await api.createExperiment({
        assignment: 'sticky',
        metrics: [{ name: 'latency', direction: 'decrease' }],
      })
    ).slug;
    const found = await runtime.store.findExperiment(sticky);
    assert.ok(found);
    // u1 and u2 in A, u3 in B; u1 comes back in the second hour (its unit's sum moves, no new unit).
    const rows: Array<[string, 'A' | 'B', string, number]> = [
      ['2026-03-02T09:10:00.000Z', 'A', 'u1', 10],
      ['2026-03-02T09:10:30.000Z', 'A', 'u1', 14],
      ['2026-03-02T09:20:00.000Z', 'B', 'u3', 9],
      ['2026-03-02T09:58:00.000Z', 'A', 'u2', 20],
      ['2026-03-02T10:05:00.000Z', 'A', 'u1', 30],
      ['2026-03-02T10:40:00.000Z', 'B', 'u3', 3],
    ];
    await runtime.store.appendBatch({
      results: rows.map(
        ([createdAt, variantKey, userId, value]): NewResult => ({
          logId: `ts-${++n}`,
          experimentId: found.id,
          version: 1,
          variantKey,
          knownVariant: true,
          userId,
          unit: true,
          assignmentId: null,
          input: null,
          output: null,
          metrics: JSON.stringify({ latency: value }),
          context: null,
          timestamp: null,
          createdAt,
        }),
      ),
      exposures: [],
    });
    const read = async (interval: string): Promise<Period[]> => {
      const res = await api.get(
        `/experiment/${sticky}/analysis/timeseries?metric=latency&interval=${interval}`,
      );
      assert.equal(res.statusCode, 200, res.body);
      return res.json().periods;
    };
    const minutes = await read('minute');
    const hours = await read('hour');
    assert.equal(minutes.length, 5); // 09:10 (twice), 09:20, 09:58, 10:05, 10:40
    assert.equal(hours.length, 2);
    for (const [minute, hour] of [
      [minutes[2]!, hours[0]!],
      [minutes[4]!, hours[1]!],
    ] as const) {
      assert.deepEqual(
        minute.variants.map((v) => [v.key, v.n, v.mean, v.absolute]),
        hour.variants.map((v) => [v.key, v.n, v.mean, v.absolute]),
        `${minute.start} vs ${hour.start}`,
      );
    }
    // In 09:10, u1 alone in A: one unit whose mean per call is (10 + 14) / 2.
    const a = minutes[0]!.variants.find((v) => v.key === 'A')!;
    assert.equal(a.n, 1);
    assert.equal(a.mean, 12);
    // At the end: A's users u1 (10, 14, 30) and u2 (20): 2 units, mean per call 74 / 4.
    const end = minutes[4]!.variants.find((v) => v.key === 'A')!;
    assert.equal(end.n, 2);
    assert.equal(end.mean, 18.5);
  });

  test('past the first 6 hours: 400 naming the bound', async () => {
    const long = (await api.createExperiment({ metrics: [{ name: 'latency', direction: 'decrease' }] })).slug;
    const found = await runtime.store.findExperiment(long);
    assert.ok(found);
    id = found.id;
    await append([...LATENCY, ['2026-03-02T16:00:00.000Z', 'A', [9]]], []);
    const res = await api.get(`/experiment/${long}/analysis/timeseries?metric=latency&interval=minute`);
    assertError(res, 400, /first 6 hours.*spans 8 hours.*interval=hour/);
    const bad = await api.get(`/experiment/${slug}/analysis/timeseries?metric=latency&interval=second`);
    assert.equal(bad.statusCode, 400, bad.body);
  });
});
