// Tests the cumulative time series on literal hourly rollups: running arms per bucket, day buckets, the
// exposures of each bucket alone, the kind chosen once, and the last bucket equal to the whole-data comparison.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dayOf } from '../core/time.js';
import { foldArms, type MetricKind, toArmData } from './arms.js';
import { compareArms } from './compare.js';
import { cumulativeSeries, type HourlyCount, type HourlyRow, type SeriesOptions } from './timeseries.js';

const H0 = '2026-03-02T08:00:00.000Z';
const H1 = '2026-03-02T09:00:00.000Z';
const H2 = '2026-03-02T10:00:00.000Z';
const H3 = '2026-03-03T08:00:00.000Z';

function row(
  bucket: string,
  version: number,
  variantKey: string,
  values: number[],
  kind: MetricKind = 'mean',
): HourlyRow {
  return {
    hour: bucket,
    version,
    variantKey,
    metric: 'latency',
    kind,
    n: values.length,
    sum: values.reduce((a, x) => a + x, 0),
    sumSquares: values.reduce((a, x) => a + x * x, 0),
  };
}

// A: 1, 3 | 5 (version 2); B: 2 | 4, 6 | 8 (version 2); Z is no variant.
const ROWS: HourlyRow[] = [
  row(H1, 1, 'A', [1, 3]),
  row(H1, 1, 'B', [2]),
  row(H2, 2, 'A', [5]),
  row(H2, 1, 'B', [4, 6]),
  row(H3, 2, 'B', [8]),
  row(H3, 2, 'Z', [100]),
];
const EXPOSURES: HourlyCount[] = [
  { hour: H0, variantKey: 'A', n: 1 },
  { hour: H1, variantKey: 'A', n: 3 },
  { hour: H1, variantKey: 'B', n: 1 },
  { hour: H3, variantKey: 'A', n: 2 },
  { hour: H3, variantKey: 'A', n: 1 },
  { hour: H3, variantKey: 'Z', n: 5 },
];

const OPTIONS: SeriesOptions = {
  variantKeys: ['A', 'B'],
  control: 'A',
  method: 'frequentist',
  alpha: 0.05,
  sided: 'two',
  direction: null,
  periodOf: (hour) => hour,
};

const summary = (s: ReturnType<typeof cumulativeSeries>) =>
  s.periods.map((b) => [b.start, b.exposures, b.variants.map((v) => [v.key, v.n, v.mean])]);

describe('cumulativeSeries', () => {
  it('sums the hours into running arms, oldest first, with each hour’s own exposures', () => {
    const s = cumulativeSeries(ROWS, EXPOSURES, OPTIONS);
    assert.equal(s.kind, 'mean');
    assert.deepEqual(summary(s), [
      [
        H0,
        { A: 1, B: 0 },
        [
          ['A', 0, null],
          ['B', 0, null],
        ],
      ],
      [
        H1,
        { A: 3, B: 1 },
        [
          ['A', 2, 2],
          ['B', 1, 2],
        ],
      ],
      [
        H2,
        { A: 0, B: 0 },
        [
          ['A', 3, 3],
          ['B', 3, 4],
        ],
      ],
      [
        H3,
        { A: 3, B: 0 },
        [
          ['A', 3, 3],
          ['B', 4, 5],
        ],
      ],
    ]);
    // Before any value there is no effect to estimate; the control never has one.
    assert.equal(s.periods[0]!.variants[1]!.absolute?.estimate, null);
    assert.ok(s.periods.every((b) => b.variants[0]!.absolute === undefined));
    assert.equal(s.periods[2]!.variants[1]!.absolute?.estimate, 1);
  });

  it('day buckets sum their hours', () => {
    const s = cumulativeSeries(ROWS, EXPOSURES, { ...OPTIONS, periodOf: dayOf });
    assert.deepEqual(summary(s), [
      [
        '2026-03-02T00:00:00.000Z',
        { A: 4, B: 1 },
        [
          ['A', 3, 3],
          ['B', 3, 4],
        ],
      ],
      [
        '2026-03-03T00:00:00.000Z',
        { A: 3, B: 0 },
        [
          ['A', 3, 3],
          ['B', 4, 5],
        ],
      ],
    ]);
  });

  it('the last bucket compares exactly what a comparison of all the data compares', () => {
    for (const method of ['frequentist', 'sequential', 'bayesian'] as const) {
      const o = { ...OPTIONS, method, direction: 'increase' as const, sided: 'better' as const };
      const last = cumulativeSeries(ROWS, EXPOSURES, o).periods.at(-1)!.variants[1]!;
      const { kind, arms } = foldArms(ROWS, ['A', 'B']);
      const whole = compareArms(toArmData(kind, arms.get('A')!), toArmData(kind, arms.get('B')!), o);
      assert.deepEqual(last.absolute, whole.absolute, method);
      assert.deepEqual(last.relative, whole.relative, method);
      assert.equal(last.significant, whole.significant, method);
      assert.equal(last.chanceToWin, whole.chanceToWin, method);
      assert.equal(last.better, whole.better, method);
    }
  });

  it('chooses the kind once from every row and leaves the other kind out of every bucket', () => {
    const rows = [
      row(H1, 1, 'A', [1, 0], 'proportion'),
      row(H1, 1, 'B', [1, 1], 'proportion'),
      row(H2, 1, 'A', [7]),
    ];
    const s = cumulativeSeries(rows, [], OPTIONS);
    assert.equal(s.kind, 'proportion');
    assert.ok(s.warnings.some((w) => /both numbers and true\/false/.test(w)));
    assert.deepEqual(
      s.periods.map((b) => b.variants.map((v) => [v.n, v.mean])),
      [
        [
          [2, 0.5],
          [2, 1],
        ],
        [
          [2, 0.5],
          [2, 1],
        ],
      ],
    );
  });

  it('another control, and sided=better resolved by the direction', () => {
    const s = cumulativeSeries(ROWS, EXPOSURES, {
      ...OPTIONS,
      control: 'B',
      sided: 'better',
      direction: 'decrease',
    });
    assert.equal(s.sided, 'less');
    const [a, b] = s.periods.at(-1)!.variants;
    assert.equal(b!.absolute, undefined);
    assert.equal(a!.absolute?.estimate, -2);
    assert.equal(a!.absolute?.ci[0], null, 'a one-sided interval has one bound');
  });

  it('keeps the latest bucket’s comparison warnings, by treatment', () => {
    const s = cumulativeSeries([row(H1, 1, 'A', [1]), row(H2, 1, 'A', [2, 4])], [], OPTIONS);
    assert.deepEqual([...s.variantWarnings.keys()], ['B']);
    const latest = s.variantWarnings.get('B')!;
    assert.ok(latest.length > 0, 'an empty arm is reported');
    assert.deepEqual(s.warnings, []);
  });
});
