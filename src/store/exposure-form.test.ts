import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  isStorableRequestText,
  readStoredExposure,
  type StoredExposure,
  storedExposureJson,
} from './exposure-form.js';

const AT = '2026-11-21T10:00:00.000Z';

test('both stored forms read back as the same exposure', () => {
  const body = { userId: 'u-1', context: { plan: 'pro', 'q"k': 'é😀\n' } };
  const text = ` {"context": {"plan":"pro","q\\"k":"\\u00e9\\ud83d\\ude00\\n"}, "userId": "u-1"} `;
  const full = storedExposureJson('id-1', 'B"', JSON.stringify('B"'), AT, body);
  const request = storedExposureJson('id-1', 'B"', JSON.stringify('B"'), AT, body, text);
  assert.deepEqual(JSON.parse(full), ['id-1', 'B"', 'u-1', body.context, AT]);
  assert.equal((JSON.parse(request) as unknown[]).length, 4);
  const expected = {
    assignmentId: 'id-1',
    variantKey: 'B"',
    userId: 'u-1',
    context: body.context,
    createdAt: AT,
  };
  assert.deepEqual(readStoredExposure(JSON.parse(full) as StoredExposure), expected);
  assert.deepEqual(readStoredExposure(JSON.parse(request) as StoredExposure), expected);
});

test('no context reads back as null in both forms', () => {
  const full = storedExposureJson('id-2', 'A', '"A"', AT, { userId: 'u' });
  const request = storedExposureJson('id-2', 'A', '"A"', AT, { userId: 'u' }, '{"userId":"u"}');
  for (const json of [full, request]) {
    assert.equal(readStoredExposure(JSON.parse(json) as StoredExposure).context, null);
  }
});

test('only a body of userId and context, with no \\u escape, is stored as its text', () => {
  const storable = (text: string) => isStorableRequestText(JSON.parse(text) as object, text);
  assert.equal(storable('{"userId":"u"}'), true);
  assert.equal(storable('{"userId":"u","context":{}}'), true);
  assert.equal(storable('{ "context" : {"é":"😀"}, "userId":"u" }'), true);
  assert.equal(storable('{"userId":"u","extra":1}'), false);
  assert.equal(storable('{"userId":"u","__proto__":{"x":1}}'), false);
  // A shadowed duplicate was never checked: with escapes it could hide a NUL or a lone surrogate.
  assert.equal(storable('{"userId":"\\u0000","userId":"u"}'), false);
  assert.equal(storable('{"userId":"u","context":{"a":"\\ud800"},"context":{}}'), false);
  assert.equal(storable('{"userId":"\\u00e9"}'), false);
});
