import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compileCondition, type SavedGroups } from './condition.js';

const cases = JSON.parse(
  readFileSync(new URL('../../test/fixtures/growthbook/cases.json', import.meta.url), 'utf8'),
);
type Case = [string, unknown, Record<string, unknown>, boolean, Record<string, (string | number)[]>?];

export function toGroups(raw: Record<string, (string | number)[]> = {}): SavedGroups {
  return new Map(Object.entries(raw).map(([k, v]) => [k, new Set(v)]));
}

for (const [name, condition, attributes, expected, groups] of cases.evalCondition as Case[]) {
  test(`evalCondition: ${name}`, () => {
    assert.equal(compileCondition(condition).matches(attributes, toGroups(groups)), expected);
  });
}

test('all 248 vendored evalCondition cases are present', () => {
  assert.equal(cases.evalCondition.length, 248);
});
