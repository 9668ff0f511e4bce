import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor, decodeTimeIdCursor, encodeCursor, encodeTimeIdCursor } from './cursor.js';
import { ValidationError } from './errors.js';

const ID = '01934f6e-7a1c-7c3e-9d2a-5b8e0f4c2a11';

test('a time-and-id cursor round-trips, at millisecond precision', () => {
  const position = { at: '2025-06-02T09:00:00.123Z', id: ID };
  assert.deepEqual(decodeTimeIdCursor('k', encodeTimeIdCursor('k', position)), position);
});

test('a cursor of another list, another form, or a forged one is a ValidationError', () => {
  const forged = (text: string) => Buffer.from(text).toString('base64url');
  for (const cursor of [
    encodeTimeIdCursor('e', { at: '2025-06-02T09:00:00.000Z', id: ID }),
    encodeCursor('k', 50),
    forged(`k:1748854800000.${ID}\u0000`),
    forged('k:1748854800000.'),
    forged(`k:1748854800000.${'a'.repeat(65)}`),
    forged(`k:253402300800000.${ID}`),
    forged(`k:-1.${ID}`),
    '',
    '***',
  ]) {
    assert.throws(() => decodeTimeIdCursor('k', cursor), ValidationError, cursor);
  }
  // And a time-and-id cursor is not a cursor of a numbered list.
  assert.throws(
    () => decodeCursor('k', encodeTimeIdCursor('k', { at: '2025-06-02T09:00:00.000Z', id: ID })),
    ValidationError,
  );
});
