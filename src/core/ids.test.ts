import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoNow, newId } from './ids.js';

test('newId gives distinct UUIDv7s across many pool refills', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 5000; i++) ids.add(newId());
  assert.equal(ids.size, 5000);
  for (const id of [...ids].slice(0, 300)) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  }
});

test('newId carries the current millisecond timestamp', () => {
  const before = Date.now();
  const ms = Number.parseInt(newId().replaceAll('-', '').slice(0, 12), 16);
  assert.ok(ms >= before && ms <= Date.now());
});

test('isoNow formats a millisecond once and matches toISOString', () => {
  assert.equal(isoNow(0), '1970-01-01T00:00:00.000Z');
  const now = Date.now();
  assert.equal(isoNow(now), new Date(now).toISOString());
});
