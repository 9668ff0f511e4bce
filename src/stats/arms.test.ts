// Tests arm folding on literal rollup rows: sums per variant, the kind chosen for mixed metrics, stray keys.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  countExposures,
  foldArms,
  groupByMetric,
  type MetricKind,
  type MetricRollupRow,
  toArmData,
  unknownVariantKeys,
} from './arms.js';

function row(
  version: number,
  variantKey: string,
  kind: MetricKind,
  n: number,
  sum: number,
  sumSquares: number,
  metric = 'm',
): MetricRollupRow {
  return { version, variantKey, metric, kind, n, sum, sumSquares };
}

describe('foldArms', () => {
  it('sums each variant’s rows across versions', () => {
    // A: values 1, 2 in v1 and 3 in v2 -> n 3, sum 6, sum of squares 1 + 4 + 9 = 14.
    const folded = foldArms(
      [row(1, 'A', 'mean', 2, 3, 5), row(2, 'A', 'mean', 1, 3, 9), row(1, 'B', 'mean', 1, 10, 100)],
      ['A', 'B'],
    );
    assert.equal(folded.kind, 'mean');
    assert.deepEqual(
      folded.arms,
      new Map([
        ['A', { n: 3, sum: 6, sumSquares: 14 }],
        ['B', { n: 1, sum: 10, sumSquares: 100 }],
      ]),
    );
    assert.deepEqual(folded.warnings, []);
  });

  it('analyses a metric with both kinds as the kind with more values, and warns', () => {
    // 12 numbers (10 + 2) against 8 true/false values (5 + 3): a mean; the proportion rows are left out.
    const folded = foldArms(
      [
        row(1, 'A', 'mean', 10, 50, 300),
        row(1, 'A', 'proportion', 5, 2, 2),
        row(1, 'B', 'proportion', 3, 3, 3),
        row(1, 'B', 'mean', 2, 4, 10),
      ],
      ['A', 'B'],
    );
    assert.equal(folded.kind, 'mean');
    assert.deepEqual(folded.arms.get('A'), { n: 10, sum: 50, sumSquares: 300 });
    assert.deepEqual(folded.arms.get('B'), { n: 2, sum: 4, sumSquares: 10 });
    assert.deepEqual(folded.warnings, [
      'has both numbers and true/false values; analysed as a mean, the others ignored',
    ]);
  });

  it('picks proportion when true/false values are the majority, and mean on a tie', () => {
    const more = foldArms([row(1, 'A', 'mean', 2, 2, 2), row(1, 'A', 'proportion', 3, 1, 1)], ['A']);
    assert.equal(more.kind, 'proportion');
    assert.deepEqual(more.arms.get('A'), { n: 3, sum: 1, sumSquares: 1 });
    assert.match(more.warnings[0]!, /analysed as a proportion/);
    const tie = foldArms([row(1, 'A', 'mean', 3, 2, 2), row(1, 'A', 'proportion', 3, 1, 1)], ['A']);
    assert.equal(tie.kind, 'mean');
  });

  it('ignores rows of unknown variant keys and gives variants without rows an empty arm', () => {
    const folded = foldArms(
      [row(1, 'A', 'mean', 2, 3, 5), row(1, 'ghost', 'mean', 100, 1e6, 1e12)],
      ['A', 'B'],
    );
    assert.deepEqual(
      folded.arms,
      new Map([
        ['A', { n: 2, sum: 3, sumSquares: 5 }],
        ['B', { n: 0, sum: 0, sumSquares: 0 }],
      ]),
    );
  });

  it('counts rows of unknown variant keys when choosing the kind', () => {
    // The stray key's 100 true/false values outweigh the 2 numbers: the metric is a proportion.
    const folded = foldArms([row(1, 'A', 'mean', 2, 3, 5), row(1, 'ghost', 'proportion', 100, 5, 5)], ['A']);
    assert.equal(folded.kind, 'proportion');
    assert.deepEqual(folded.arms.get('A'), { n: 0, sum: 0, sumSquares: 0 });
  });
});

describe('toArmData', () => {
  it('reads a proportion’s sum as its successes and keeps a mean’s moments', () => {
    assert.deepEqual(toArmData('proportion', { n: 8, sum: 3, sumSquares: 3 }), { n: 8, successes: 3 });
    assert.deepEqual(toArmData('mean', { n: 2, sum: 3, sumSquares: 5 }), { n: 2, sum: 3, sumSquares: 5 });
  });
});

describe('groupByMetric', () => {
  it('groups rows by metric name, keeping their order', () => {
    const a1 = row(1, 'A', 'mean', 1, 1, 1, 'latency');
    const b1 = row(1, 'B', 'proportion', 1, 1, 1, 'converted');
    const a2 = row(2, 'A', 'mean', 1, 2, 4, 'latency');
    assert.deepEqual(
      groupByMetric([a1, b1, a2]),
      new Map([
        ['latency', [a1, a2]],
        ['converted', [b1]],
      ]),
    );
  });
});

describe('unknownVariantKeys', () => {
  it('lists the keys that are not variants once each, in order of first appearance', () => {
    const rows = [{ variantKey: 'z' }, { variantKey: 'A' }, { variantKey: 'y' }, { variantKey: 'z' }];
    assert.deepEqual(unknownVariantKeys(rows, ['A', 'B']), ['z', 'y']);
  });
});

describe('countExposures', () => {
  it('sums exposures per variant, with 0 for a variant without any and stray keys left out', () => {
    const counts = countExposures(
      [
        { variantKey: 'A', n: 5 },
        { variantKey: 'ghost', n: 7 },
        { variantKey: 'A', n: 2 },
      ],
      ['A', 'B'],
    );
    assert.deepEqual(counts, { A: 7, B: 0 });
  });

  it('treats a variant named __proto__ as a plain key', () => {
    const counts = countExposures([{ variantKey: '__proto__', n: 3 }], ['__proto__']);
    assert.equal(Object.getOwnPropertyDescriptor(counts, '__proto__')?.value, 3);
    assert.equal(Object.getPrototypeOf(counts), Object.prototype);
  });
});
