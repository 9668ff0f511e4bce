// Saved groups' validation and events (core/groups.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_ACTOR } from './events.js';
import {
  groupDiff,
  groupSaved,
  MAX_GROUP_VALUES,
  validateGroupDescription,
  validateGroupKey,
  validateGroupValues,
} from './groups.js';

describe('saved groups: validation', () => {
  it('keys follow the slug pattern', () => {
    assert.equal(validateGroupKey('beta.testers_2-x'), 'beta.testers_2-x');
    for (const bad of ['', '-a', 'a b', 'a/b', 'x'.repeat(101), 7]) {
      assert.throws(() => validateGroupKey(bad), /group key must be 1-100 characters/);
    }
  });

  it('values: strings and finite numbers, duplicates dropped (first kept), "7" and 7 apart, -0 as 0', () => {
    assert.deepEqual(validateGroupValues(['b', 'a', 'b', 7, '7', 7, -0, 0, 1.5]), ['b', 'a', 7, '7', 0, 1.5]);
    assert.ok(Object.is(validateGroupValues([-0])[0], 0));
    assert.deepEqual(validateGroupValues([]), []);
    assert.equal(validateGroupValues(['x'.repeat(512)])[0]!.toString().length, 512);
  });

  it('values: the 400 names the first bad index', () => {
    assert.throws(() => validateGroupValues('a'), /values must be an array/);
    assert.throws(
      () => validateGroupValues(['a', true, null]),
      /^ValidationError: values\[1\] must be a string or a finite number$/,
    );
    assert.throws(
      () => validateGroupValues(['a', 'b', '']),
      /values\[2\] must be a string of 1-512 characters \(it has 0\)/,
    );
    assert.throws(() => validateGroupValues(['x'.repeat(513)]), /values\[0\].*\(it has 513\)/);
    assert.throws(() => validateGroupValues([1, Number.NaN]), /values\[1\]/);
    assert.throws(() => validateGroupValues([Number.POSITIVE_INFINITY]), /values\[0\]/);
    assert.throws(() => validateGroupValues([{}]), /values\[0\]/);
    const many = Array.from({ length: MAX_GROUP_VALUES + 1 }, (_, i) => i);
    assert.throws(() => validateGroupValues(many), /100001 entries; at most 100000/);
    assert.equal(validateGroupValues(many.slice(1)).length, MAX_GROUP_VALUES);
  });

  it('description: absent is empty; at most 1000 characters', () => {
    assert.equal(validateGroupDescription(undefined), '');
    assert.equal(validateGroupDescription('d'.repeat(1000)).length, 1000);
    assert.throws(() => validateGroupDescription('d'.repeat(1001)), /at most 1000/);
    assert.throws(() => validateGroupDescription(3), /description/);
  });
});

describe('saved groups: events', () => {
  it('group.saved counts what was added and removed, never the values', () => {
    assert.deepEqual(groupDiff(['a', 'b', 1], ['b', 1, '1', 'c']), { added: 2, removed: 1 });
    const src = { actor: ROOT_ACTOR, at: '2026-01-01T00:00:00.000Z', newId: () => 'id-1' };
    assert.deepEqual(groupSaved(src, 'vip', undefined, ['a', 'b']), [
      {
        id: 'id-1',
        type: 'group.saved',
        at: src.at,
        actor: ROOT_ACTOR,
        experiment: null,
        data: { key: 'vip', size: 2, added: 2, removed: 0, created: true },
      },
    ]);
    assert.deepEqual(groupSaved(src, 'vip', ['a', 'b'], ['b'])[0]!.data, {
      key: 'vip',
      size: 1,
      added: 0,
      removed: 1,
      created: false,
    });
  });
});
