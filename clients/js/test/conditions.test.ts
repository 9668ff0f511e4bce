// The local evaluator of targeting conditions: GrowthBook's conformance cases, a regex that cannot stall,
// saved groups of 100,000 values.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { compileCondition, savedGroups } from '../src/conditions.js';
import { repoRoot } from './server.js';

type Case = [string, unknown, Record<string, unknown>, boolean, Record<string, unknown[]>?];
const cases = JSON.parse(
  readFileSync(join(repoRoot, 'test', 'fixtures', 'growthbook', 'cases.json'), 'utf8'),
) as {
  evalCondition: Case[];
};

test('every vendored evalCondition case (248)', () => {
  assert.equal(cases.evalCondition.length, 248);
  for (const [name, condition, attributes, expected, groups] of cases.evalCondition) {
    assert.equal(compileCondition(condition).matches(attributes, savedGroups(groups ?? {})), expected, name);
  }
});

test('(a+)+$ against 50 a and a b is answered at once', () => {
  for (const op of ['$regex', '$regexi']) {
    const c = compileCondition({ s: { [op]: '(a+)+$' } });
    const started = performance.now();
    assert.equal(c.matches({ s: `${'a'.repeat(50)}b` }), false);
    assert.equal(c.matches({ s: 'a'.repeat(50) }), true);
    assert.ok(performance.now() - started < 1000);
  }
});

test('a backreference or lookaround evaluates to false', () => {
  for (const p of ['(a)\\1', '(?=a)a'])
    assert.equal(compileCondition({ s: { $regex: p } }).matches({ s: 'aa' }), false);
});

test('saved groups of 100,000 values', () => {
  const ids = Array.from({ length: 100_000 }, (_, i) => `user-${i}`);
  const g = savedGroups({ beta: ids, nums: Array.from({ length: 100_000 }, (_, i) => i) });
  const c = compileCondition({ id: { $inGroup: 'beta' }, n: { $notInGroup: 'nums' } });
  assert.equal(c.matches({ id: 'user-99999', n: -1 }, g), true);
  assert.equal(c.matches({ id: 'user-100000', n: -1 }, g), false);
  assert.equal(c.matches({ id: ['x', 'user-5'], n: 100_000 }, g), true);
  assert.equal(c.matches({ id: 'user-5', n: 5 }, g), false);
});
