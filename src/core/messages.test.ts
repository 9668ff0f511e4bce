import assert from 'node:assert/strict';
import { test } from 'node:test';
import { someOf } from './messages.js';

test('a long list is named in part and the rest counted; a short one whole', () => {
  const names = Array.from({ length: 25 }, (_, i) => `m${i}`);
  assert.equal(someOf(names, 3), "'m0', 'm1', 'm2' and 22 more");
  assert.equal(someOf(names.slice(0, 2), 3, false), 'm0, m1');
  assert.equal(someOf(names).split(', ').length, 10);
  assert.equal(someOf([]), '');
});
