import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exceedsDepth, findJsonProblem, isJsonObject } from './json.js';

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

test('findJsonProblem names numbers beyond a double and excess depth', () => {
  assert.equal(
    findJsonProblem(JSON.parse('{"a":[1e400]}'), 'body'),
    'body/a/0 is a number too large to represent (beyond ±1.8e308)',
  );
  assert.match(findJsonProblem(JSON.parse('-1e400')) ?? '', /too large/);
  assert.equal(findJsonProblem(nested(65), 'body'), 'body nests JSON deeper than 64 levels');
  assert.equal(findJsonProblem({ a: [1.5e308, -0, 'x', null, true] }), null);
});

test('findJsonProblem refuses NUL characters and lone surrogates in values and keys, with their location', () => {
  assert.equal(
    findJsonProblem({ a: ['ok', 'x\u0000y'] }, 'body'),
    'body/a/1 contains a NUL character (\\u0000), which cannot be stored',
  );
  assert.equal(
    findJsonProblem({ 'bad\ud800': 1 }, 'body'),
    'body has a key that contains a lone UTF-16 surrogate (not valid Unicode)',
  );
  assert.equal(
    findJsonProblem('\udc00', 'body'),
    'body contains a lone UTF-16 surrogate (not valid Unicode)',
  );
  assert.equal(findJsonProblem({ emoji: '😀', accents: 'héllo' }), null);
});
