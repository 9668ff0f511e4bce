import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exceedsDepth, isJsonObject } from './json.js';

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

test('exceedsDepth counts objects and arrays as levels', () => {
  assert.equal(exceedsDepth(nested(64)), false);
  assert.equal(exceedsDepth(nested(65)), true);
  assert.equal(exceedsDepth('x'), false);
  assert.equal(exceedsDepth(null), false);
});

test('exceedsDepth survives 100k levels without a stack overflow', () => {
  assert.equal(exceedsDepth(nested(100_000)), true);
});

test('isJsonObject rejects arrays and null', () => {
  assert.equal(isJsonObject({}), true);
  assert.equal(isJsonObject([]), false);
  assert.equal(isJsonObject(null), false);
});
