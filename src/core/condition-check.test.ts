import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileCondition, type SavedGroups } from './condition.js';
import { checkCondition, groupsOf } from './condition-check.js';

test('checkCondition names the path and the problem of each bad condition', () => {
  const bad: [unknown, string][] = [
    [{ plan: { $foo: 1 } }, 'targeting.plan.$foo: unknown operator $foo'],
    [{ plan: { $in: 'pro' } }, 'targeting.plan.$in needs an array'],
    [{ plan: { $nin: 3 } }, 'targeting.plan.$nin needs an array'],
    [{ ua: { $regex: '(a)\\1' } }, 'targeting.ua.$regex: the regex is invalid'],
    [{ ua: { $regexi: '(?=x)' } }, 'targeting.ua.$regexi: the regex is invalid'],
    [{ ua: { $regex: 5 } }, 'targeting.ua.$regex needs a string'],
    [{ $and: { a: 1 } }, 'targeting.$and needs an array of conditions'],
    [{ $or: [{ a: { $bad: 1 } }] }, 'targeting.$or[0].a.$bad: unknown operator'],
    [{ tags: { $size: 'x' } }, 'targeting.tags.$size needs a number or an operator object'],
    [{ tags: { $elemMatch: 3 } }, 'targeting.tags.$elemMatch needs a condition'],
    [{ id: { $inGroup: 7 } }, 'targeting.id.$inGroup needs a saved group key'],
    [{ x: { $type: 'date' } }, 'targeting.x.$type needs one of'],
    [{ x: { $exists: 'yes' } }, 'targeting.x.$exists needs true or false'],
    [{ $foo: [] }, 'targeting.$foo: unknown operator $foo'],
    [[1], 'targeting must be an object'],
  ];
  for (const [condition, message] of bad) {
    const problems = checkCondition(condition);
    assert.equal(problems.length, 1, `${JSON.stringify(condition)} → ${JSON.stringify(problems)}`);
    assert.ok(problems[0]!.startsWith(message), `${problems[0]} should start with ${message}`);
  }
  assert.deepEqual(checkCondition({ a: { $in: 1 } }, 'rule'), ['rule.a.$in needs an array']);
});

test('checkCondition accepts the language as GrowthBook documents it', () => {
  const good = {
    $and: [{ plan: { $in: ['pro', 'team'] } }, { $or: [{ 'org.size': { $gte: 10 } }, { beta: true }] }],
    version: { $vgte: '1.2.0' },
    ua: { $regexi: '^mozilla' },
    tags: { $elemMatch: { $eq: 'x' }, $size: { $gt: 0 } },
    id: { $notInGroup: 'blocked' },
    $not: { country: 'FR' },
    address: { city: 'Paris' },
  };
  assert.deepEqual(checkCondition(good), []);
  assert.deepEqual(
    groupsOf({ $or: [{ id: { $inGroup: 'a' } }, { id: { $notInGroup: 'b' } }], x: { $inGroup: 'a' } }),
    ['a', 'b'],
  );
});

test('an unknown operator is refused at save yet evaluates to false, as GrowthBook', () => {
  assert.ok(checkCondition({ a: { $foo: 1 } }).length > 0);
  assert.equal(compileCondition({ a: { $foo: 1 } }).matches({ a: 1 }, new Map()), false);
});

test('a pathological regex is answered at once, alone and nested (linear-time engine)', () => {
  const s = `${'a'.repeat(50)}b`;
  const conditions = [
    { v: { $regex: '(a+)+$' } },
    { v: { $regexi: '(A+)+$' } },
    { $and: [{ v: { $regex: '(a|aa)+$' } }, { v: { $exists: true } }] },
    { list: { $elemMatch: { v: { $regexi: '(a+)+$' } } } },
  ];
  const started = performance.now();
  for (const c of conditions) {
    assert.deepEqual(checkCondition(c), []);
    assert.equal(compileCondition(c).matches({ v: s, list: [{ v: s }] }, new Map()), false);
  }
  const ms = performance.now() - started;
  assert.ok(ms < 1000, `took ${ms} ms`);
  assert.equal(compileCondition({ v: { $regex: '(a+)+b' } }).matches({ v: s }, new Map()), true);
});

test('a saved group of 100,000 ids answers 100,000 lookups in O(1) each', () => {
  const ids = Array.from({ length: 100_000 }, (_, i) => `user-${i}`);
  const groups: SavedGroups = new Map([['big', new Set(ids)]]);
  const inGroup = compileCondition({ userId: { $inGroup: 'big' } });
  const started = performance.now();
  let hits = 0;
  for (let i = 0; i < 100_000; i++) if (inGroup.matches({ userId: `user-${i * 2}` }, groups)) hits++;
  const ms = performance.now() - started;
  assert.equal(hits, 50_000);
  assert.ok(ms < 1000, `took ${ms} ms`);
  // Members compare strictly, as GrowthBook's includes: 1 is not "1".
  assert.equal(inGroup.matches({ userId: 1 }, new Map([['big', new Set(['1'])]])), false);
});

test('micro-benchmark: matches() of a 5-clause condition (printed, not asserted)', () => {
  const c = compileCondition({
    plan: { $in: ['pro', 'team'] },
    'org.size': { $gte: 10 },
    version: { $vgte: '1.2.0' },
    ua: { $regexi: 'mozilla' },
    userId: { $notInGroup: 'blocked' },
  });
  const groups: SavedGroups = new Map([['blocked', new Set(['u2'])]]);
  const attrs = { plan: 'pro', org: { size: 12 }, version: '1.4.1', ua: 'Mozilla/5.0 (X11)', userId: 'u1' };
  assert.equal(c.matches(attrs, groups), true);
  const n = 200_000;
  for (let i = 0; i < 20_000; i++) c.matches(attrs, groups);
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) c.matches(attrs, groups);
  const ns = Number(process.hrtime.bigint() - t) / n;
  console.log(`matches(): ${ns.toFixed(0)} ns per call (5 clauses)`);
});
