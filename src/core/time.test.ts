import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeTime } from './time.js';

test('a time with an offset is the same instant in UTC, with milliseconds', () => {
  assert.equal(normalizeTime('2026-03-01T10:00:00-14:00', 't'), '2026-03-02T00:00:00.000Z');
  assert.equal(normalizeTime('2026-03-01T10:00:00Z', 't'), '2026-03-01T10:00:00.000Z');
});

test('years outside 0001-9999 (in UTC) are refused naming the field', () => {
  for (const value of ['+010000-01-01T00:00:00Z', '9999-12-31T23:00:00-14:00', '0000-12-31T23:59:59Z']) {
    assert.throws(() => normalizeTime(value, 'until'), /until must be between years 0001 and 9999/, value);
  }
  assert.equal(normalizeTime('0001-01-01T00:00:00Z', 't'), '0001-01-01T00:00:00.000Z');
  assert.equal(normalizeTime('9999-12-31T23:59:59.999Z', 't'), '9999-12-31T23:59:59.999Z');
});

test('text that is no time is refused naming the field', () => {
  assert.throws(() => normalizeTime('yesterday', 'since'), /since must be an ISO 8601 date-time/);
});
