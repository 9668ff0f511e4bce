import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validate, version } from 'uuid';
import { isoNow, newId } from './ids.js';

test('newId gives distinct UUIDv7s across many pool refills', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 5000; i++) ids.add(newId());
  assert.equal(ids.size, 5000);
  for (const id of [...ids].slice(0, 300)) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(validate(id), `${id} is a valid UUID to the uuid package`);
    assert.equal(version(id), 7);
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

test('newId lays out a given millisecond as uuid does, and varies every random bit', () => {
  // 2026-11-25T23:00:00.123Z and the largest 48-bit time: the prefix is the big-endian timestamp.
  for (const ms of [Date.UTC(2026, 10, 25, 23, 0, 0, 123), 2 ** 48 - 1, 0]) {
    const realNow = Date.now;
    Date.now = () => ms;
    try {
      const hex = newId().replaceAll('-', '');
      assert.equal(Number.parseInt(hex.slice(0, 12), 16), ms);
    } finally {
      Date.now = realNow;
    }
  }
  // 74 random bits: over 2,000 ids, each of those positions takes both values.
  const seen = new Set<string>();
  const ids = Array.from({ length: 2000 }, () => newId().replaceAll('-', ''));
  for (const hex of ids) {
    const bits = BigInt(`0x${hex}`).toString(2).padStart(128, '0');
    for (let i = 0; i < 128; i++) seen.add(`${i}:${bits[i]}`);
  }
  const random = [...Array(128).keys()].filter((i) => (i >= 52 && i < 64) || i >= 66);
  for (const i of random) assert.ok(seen.has(`${i}:0`) && seen.has(`${i}:1`), `bit ${i} varies`);
});
