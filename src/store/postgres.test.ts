import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUnavailable } from './postgres.js';

test('every "cannot take this now" error of PostgreSQL is unavailable (503), others are not', () => {
  for (const code of [
    '55000', // database refusing connections (ALLOW_CONNECTIONS false)
    '3D000',
    '28P01',
    '28000',
    '57P01',
    '57P02',
    '57P03',
    '57P04',
    '53000',
    '53100',
    '53200',
    '53300',
    '08006',
    '08001',
    '58030',
    '25006',
    '40001',
    '40P01',
    'ECONNREFUSED',
    'ECONNRESET',
  ]) {
    assert.ok(isUnavailable({ code }), code);
  }
  assert.ok(isUnavailable(new Error('Connection terminated unexpectedly')));
  assert.ok(isUnavailable(new Error('timeout exceeded when trying to connect')));
  for (const code of ['23505', '23503', '22P02', '42P01', '42703', 'XX000', '']) {
    assert.ok(!isUnavailable({ code }), code);
  }
  assert.ok(!isUnavailable(new Error('syntax error')));
  assert.ok(!isUnavailable(undefined));
});
