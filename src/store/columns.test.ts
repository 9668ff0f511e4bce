import assert from 'node:assert/strict';
import { test } from 'node:test';
import { columnOf, rowsOf } from './columns.js';

test('fields become snake_case columns; version and hour name their columns', () => {
  assert.deepEqual(
    ['experimentId', 'variantKey', 'sumX2', 'sumXY', 'sumSquares', 'version', 'hour', 'n'].map(columnOf),
    ['experiment_id', 'variant_key', 'sum_x2', 'sum_xy', 'sum_squares', 'experiment_version', 'bucket', 'n'],
  );
});

test('rows keep the fields’ order and only the fields named', () => {
  const row = rowsOf<{ hour: string; experimentId: number; extra: string }>(['experimentId', 'hour']);
  const made = row({ hour: '2025-06-02T09:00:00.000Z', experimentId: 7, extra: 'x' });
  assert.deepEqual(Object.keys(made), ['experiment_id', 'bucket']);
  assert.deepEqual(made, { experiment_id: 7, bucket: '2025-06-02T09:00:00.000Z' });
});
