// The rollups' min and max as the analysis and the time series read them: folded per variant across versions
// and hours, unknown (null, rows from before migration 017) read unclamped with a warning, absent (callers that
// keep none) read unclamped silently; and both answers' quantiles within them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AnalysisInput, analyzeRollups } from './analyze.js';
import type { MetricRollupRow } from './arms.js';
import { ExtremesFold, type SketchRowLike } from './metric-quantiles.js';
import { sketchBin } from './sketch.js';
import { cumulativeSeries, type HourlyRow } from './timeseries.js';

type Extremes = Pick<MetricRollupRow, 'minValue' | 'maxValue'>;

/** One rollup row of these values (of `rating`), with their min and max unless `extremes` says otherwise. */
function row(variantKey: string, values: number[], extremes?: Extremes, version = 1): MetricRollupRow {
  return {
    version,
    variantKey,
    metric: 'rating',
    kind: 'mean',
    n: values.length,
    sum: values.reduce((a, x) => a + x, 0),
    sumSquares: values.reduce((a, x) => a + x * x, 0),
    ...(extremes ?? { minValue: Math.min(...values), maxValue: Math.max(...values) }),
  };
}

/** The sketch bins of these values, as the store counts them. */
function bins(
  variantKey: string,
  values: number[],
  version = 1,
): Array<SketchRowLike & { version: number; metric: string }> {
  const counts = new Map<string, SketchRowLike & { version: number; metric: string }>();
  for (const v of values) {
    const { side, key } = sketchBin(v);
    const b = counts.get(`${side}:${key}`) ?? { version, variantKey, metric: 'rating', side, key, count: 0 };
    b.count++;
    counts.set(`${side}:${key}`, b);
  }
  return [...counts.values()];
}

const RATINGS = Array.from({ length: 500 }, (_, i) => 1 + (i % 5));

function input(
  rows: MetricRollupRow[],
  sketches: Array<SketchRowLike & { version: number; metric: string }>,
): AnalysisInput {
  const variants = [
    { key: 'A', trafficPercent: 50 },
    { key: 'B', trafficPercent: 50 },
  ];
  return {
    experiment: {
      slug: 'x',
      assignment: 'random',
      variants,
      metrics: [{ name: 'rating', direction: 'increase', role: 'primary', statistic: 'p95' }],
    },
    versions: [{ version: 1, variants }],
    rollups: {
      exposures: [],
      results: [],
      metrics: rows,
      units: [],
      sketches,
    },
    options: { control: 'A', method: 'frequentist', alpha: 0.05, sided: 'two', version: null },
  };
}

describe('ExtremesFold', () => {
  it('folds rows per variant; numeric rows with values only; unknown once any row is; absent rows untracked', () => {
    const fold = new ExtremesFold();
    fold.add(row('A', [3, 4]));
    fold.add(row('A', [1, 2], undefined, 2));
    fold.add({ ...row('A', [-50]), kind: 'proportion' });
    fold.add({ ...row('A', [99]), n: 0 });
    fold.add(row('B', [5]));
    fold.add(row('B', [6], { minValue: null, maxValue: null }));
    fold.add(row('B', [7]));
    fold.add(row('C', [5], {}));
    fold.add(row('D', [5], {}));
    fold.add(row('D', [6]));
    assert.deepEqual(fold.get('A'), { min: 1, max: 4 });
    assert.equal(fold.get('B'), null);
    assert.equal(fold.get('C'), undefined);
    assert.equal(fold.get('D'), null, 'rows with and without extremes: unknown');
    assert.equal(fold.get('E'), undefined);
    assert.deepEqual(fold.unknown(['A', 'B', 'C', 'D', 'E']), ['B', 'D']);
  });
});

describe('the analysis reads quantiles within the rollups’ min and max', () => {
  const sketches = [...bins('A', RATINGS), ...bins('B', RATINGS)];
  const quantiles = (rows: MetricRollupRow[]) => {
    const a = analyzeRollups(input(rows, sketches));
    return { q: a.metrics[0]!.variants.map((v) => v.quantiles!), warnings: a.warnings };
  };

  it('known: clamped (ratings 1–5 read p99 = 5); unknown: unclamped with one warning; absent: unclamped, silent', () => {
    const known = quantiles([row('A', RATINGS), row('B', RATINGS)]);
    assert.deepEqual(
      known.q.map((q) => q.p99),
      [5, 5],
    );
    assert.ok(known.warnings.every((w) => !w.includes('clamped')));
    const unknown = quantiles([row('A', RATINGS, { minValue: null, maxValue: null }), row('B', RATINGS)]);
    assert.ok(unknown.q[0]!.p99! > 5 && unknown.q[1]!.p99 === 5, JSON.stringify(unknown.q));
    assert.deepEqual(
      unknown.warnings.filter((w) => w.includes('clamped')),
      [
        'rating: quantiles of A are not clamped to their min and max (values counted before those were kept: run npm run rollups:rebuild)',
      ],
    );
    const absent = quantiles([row('A', RATINGS, {}), row('B', RATINGS, {})]);
    assert.ok(absent.q.every((q) => q.p99! > 5));
    assert.ok(absent.warnings.every((w) => !w.includes('clamped')));
  });
});

describe('the time series reads each period within the min and max of the hours so far', () => {
  const H1 = '2026-03-02T08:00:00.000Z';
  const H2 = '2026-03-02T09:00:00.000Z';
  const hourly = (hour: string, variantKey: string, values: number[], extremes?: Extremes) =>
    ({ ...row(variantKey, values, extremes), hour }) as HourlyRow;
  const first = RATINGS.map((r) => Math.min(r, 3));
  const series = (rows: HourlyRow[]) =>
    cumulativeSeries(rows, [], {
      variantKeys: ['A', 'B'],
      control: 'A',
      method: 'frequentist',
      alpha: 0.05,
      sided: 'two',
      direction: 'increase',
      periodOf: (hour) => hour,
      quantile: {
        level: 0.99,
        sketches: [
          ...bins('A', first).map((b) => ({ ...b, hour: H1 })),
          ...bins('B', first).map((b) => ({ ...b, hour: H1 })),
          ...bins('A', RATINGS).map((b) => ({ ...b, hour: H2 })),
          ...bins('B', RATINGS).map((b) => ({ ...b, hour: H2 })),
        ],
      },
    });

  it('the first hour (values up to 3) reads within [1, 3], the cumulative one within [1, 5]', () => {
    const s = series([
      hourly(H1, 'A', first),
      hourly(H1, 'B', first),
      hourly(H2, 'A', RATINGS),
      hourly(H2, 'B', RATINGS),
    ]);
    const read = s.periods.map((p) => p.variants.map((v) => v.quantile));
    assert.ok(
      read[0]!.every((q) => q! > 2.9 && q! <= 3),
      JSON.stringify(read),
    );
    assert.ok(
      read[1]!.every((q) => q! > 4.9 && q! <= 5),
      JSON.stringify(read),
    );
    assert.deepEqual(s.warnings, []);
  });

  it('an hour without them (before migration 017) leaves every later period unclamped, with a warning', () => {
    const s = series([
      hourly(H1, 'A', first, { minValue: null, maxValue: null }),
      hourly(H1, 'B', first),
      hourly(H2, 'A', RATINGS),
      hourly(H2, 'B', RATINGS),
    ]);
    const a = s.periods.map((p) => p.variants[0]!.quantile!);
    assert.ok(a[0]! > 3 && a[1]! > 5, JSON.stringify(a));
    assert.deepEqual(s.warnings, [
      'quantiles of A are not clamped to their min and max (values counted before those were kept: run npm run rollups:rebuild)',
    ]);
  });
});
