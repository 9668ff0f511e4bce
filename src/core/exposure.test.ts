import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeExposure, type Exposure, encodeExposure, type StoredExposure } from './exposure.js';

const AT = '2026-11-21T10:00:00.000Z';

const exposure: Exposure = {
  assignmentId: 'id-1',
  experimentId: 3,
  version: 2,
  variantKey: 'B"',
  userId: 'u-1',
  context: { plan: 'pro', 'q"k': 'é😀\n\u2028' },
  createdAt: AT,
};

test('the stored form is [assignmentId, variantKey, userId, context, createdAt] and reads back whole', () => {
  const json = encodeExposure(exposure);
  assert.deepEqual(JSON.parse(json), ['id-1', 'B"', 'u-1', exposure.context, AT]);
  assert.deepEqual(decodeExposure(JSON.parse(json) as StoredExposure, 3, 2), exposure);
});

test('no context is stored and read back as null', () => {
  const json = encodeExposure({ ...exposure, context: null });
  assert.equal(decodeExposure(JSON.parse(json) as StoredExposure, 3, 2).context, null);
});

// Rows written by releases that stored the assign request's own text (ADR 0009) must still read.
test('the earlier request form [assignmentId, variantKey, createdAt, request] still reads', () => {
  const text = ` {"context": {"plan":"pro","q\\"k":"\\u00e9\\ud83d\\ude00\\n\\u2028"}, "userId": "u-1"} `;
  const earlier = JSON.parse(`["id-1",${JSON.stringify('B"')},"${AT}",${text}]`);
  assert.deepEqual(decodeExposure(earlier, 3, 2), exposure);
  const bare = JSON.parse(`["id-1","B\\"","${AT}",{"userId":"u-1"}]`);
  assert.deepEqual(decodeExposure(bare, 3, 2), { ...exposure, context: null });
  // A key written twice: JSON.parse keeps the last, as the parsed request did.
  const duplicated = JSON.parse(`["id-1","B\\"","${AT}",{"userId":"x","userId":"u-1","context":{"a":1}}]`);
  assert.deepEqual(decodeExposure(duplicated, 3, 2), { ...exposure, context: { a: 1 } });
});
