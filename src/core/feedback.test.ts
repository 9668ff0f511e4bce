import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FeedbackRow, feedbackKey, planFeedback } from './feedback.js';
import type { NewFeedback } from './writes.js';

const item = (
  value: number,
  kind: 'mean' | 'proportion' = 'mean',
  at = '2026-01-01T10:15:00.000Z',
): NewFeedback => ({
  feedbackId: `f-${value}`,
  experimentId: 1,
  target: 'l:log-1',
  version: 1,
  variantKey: 'B',
  userId: 'u1',
  unit: true,
  values: [{ metric: 'rating', kind, value }],
  comment: null,
  createdAt: at,
});

const never = () => false;

test('a first value adds one observation to every rollup, in its hour', () => {
  const plan = planFeedback([item(4)], new Map(), never);
  assert.deepEqual(
    plan.metrics.map((m) => [m.kind, m.n, m.sum, m.sumSquares]),
    [['mean', 1, 4, 16]],
  );
  assert.equal(plan.hourly[0]!.hour, '2026-01-01T10:00:00.000Z');
  assert.deepEqual(
    plan.units.map((u) => [u.userId, u.dn, u.dsum]),
    [['u1', 1, 4]],
  );
});

test('the same metric again replaces the value: the old one leaves, the new one enters, in the first hour', () => {
  const current = new Map<string, FeedbackRow>();
  planFeedback([item(4)], current, never);
  const plan = planFeedback([item(5, 'mean', '2026-01-02T08:00:00.000Z')], current, never);
  assert.deepEqual(
    plan.metrics.map((m) => [m.n, m.sum, m.sumSquares]),
    [
      [-1, -4, -16],
      [1, 5, 25],
    ],
  );
  assert.ok(plan.hourly.every((b) => b.hour === '2026-01-01T10:00:00.000Z'));
  const row = current.get(feedbackKey({ experimentId: 1, target: 'l:log-1', metric: 'rating' }))!;
  assert.equal(row.value, 5);
  assert.equal(row.feedbackId, 'f-5');
  assert.equal(row.createdAt, '2026-01-01T10:15:00.000Z');
});

test('min and max: the value entering carries its own, the value leaving none; segment rollups keep none', () => {
  const current = new Map<string, FeedbackRow>();
  const segments = () => ({ plan: 'pro' });
  planFeedback([item(4)], current, never, segments);
  const plan = planFeedback([item(2)], current, never, segments);
  for (const rows of [plan.metrics, plan.hourly]) {
    assert.deepEqual(
      rows.map((m) => [m.n, m.minValue, m.maxValue]),
      [
        [-1, null, null],
        [1, 2, 2],
      ],
    );
  }
  assert.equal(plan.segments.metrics.length, 2);
  assert.ok(plan.segments.metrics.every((m) => !('minValue' in m) && !('maxValue' in m)));
});

test('a name over the cap is stored, not rolled up', () => {
  const plan = planFeedback([item(4)], new Map(), () => true);
  assert.equal(plan.rows.length, 1);
  assert.equal(plan.rows[0]!.overCap, true);
  assert.deepEqual([plan.metrics, plan.hourly, plan.units], [[], [], []]);
});
