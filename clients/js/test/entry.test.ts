// Who enters (ADR 0038), evaluated in-process: the order overrides → layer → targeting → coverage → split,
// defaults for an older server's definitions, the marked id, coverage that only adds units.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { savedGroups } from '../src/conditions.js';
import { chooseVariant, hashV1, hashV2 } from '../src/hash.js';
import { checkKeyState, checkOf, readAssignmentId } from '../src/ids.js';
import { chooseIndex, compileDefinition, type Definition, evaluate } from '../src/local.js';

const NO_GROUPS = savedGroups({});

function def(extra: Partial<Definition> = {}): Definition {
  return {
    slug: 'exp',
    assignmentIdKey: 4242,
    version: 3,
    assignment: 'sticky',
    seed: 'seed-1',
    variants: [
      { key: 'A', trafficPercent: 50, payload: { p: 'a' } },
      { key: 'B', trafficPercent: 30, payload: { p: 'b' } },
      { key: 'C', trafficPercent: 20, payload: { p: 'c' } },
    ],
    ...extra,
  };
}

const users = Array.from({ length: 5000 }, (_, i) => `user-${i}`);

test('a definition without the entry fields: everyone enters with exactly the old draw', () => {
  const c = compileDefinition(def());
  assert.equal(c.entry.everyone, true);
  for (const u of users) {
    assert.deepEqual(evaluate(c, u, undefined, NO_GROUPS), {
      index: chooseIndex(c, u),
      inExperiment: true,
      reason: null,
    });
  }
  // The defaults spelled out give the same answers.
  const explicit = compileDefinition(
    def({ targeting: null, coverage: 100, layer: null, overrides: [], defaultVariant: null }),
  );
  assert.equal(explicit.entry.everyone, true);
  assert.equal(explicit.entry.defaultIndex, 0);
});

test('overrides first, in order: userIds (a Set) and conditions; inExperiment false, reason override', () => {
  const c = compileDefinition(
    def({
      overrides: [
        { variant: 'C', userIds: ['qa-1', 'qa-2'] },
        { variant: 'B', condition: { email: { $regex: '@corp\\.example$' } } },
        { variant: 'A', userIds: ['qa-2'] },
      ],
      targeting: { plan: 'pro' },
      layer: { key: 'prompts', range: [0, 0.0001] },
    }),
  );
  assert.deepEqual(evaluate(c, 'qa-2', { plan: 'free' }, NO_GROUPS), {
    index: 2,
    inExperiment: false,
    reason: 'override',
  });
  assert.deepEqual(evaluate(c, 'x', { email: 'me@corp.example' }, NO_GROUPS), {
    index: 1,
    inExperiment: false,
    reason: 'override',
  });
  // The override's condition sees userId too.
  const byId = compileDefinition(def({ overrides: [{ variant: 'B', condition: { userId: 'u-7' } }] }));
  assert.equal(evaluate(byId, 'u-7', undefined, NO_GROUPS).reason, 'override');
  assert.equal(evaluate(byId, 'u-8', undefined, NO_GROUPS).inExperiment, true);
});

test('layer: hashV1("__" + key, id) in [start, end); outside: the defaultVariant, reason layer', () => {
  const c = compileDefinition(def({ layer: { key: 'prompts', range: [0.25, 0.6] }, defaultVariant: 'B' }));
  let inside = 0;
  for (const u of users) {
    const n = hashV1('__prompts', u);
    const e = evaluate(c, u, undefined, NO_GROUPS);
    if (n >= 0.25 && n < 0.6) {
      inside++;
      assert.deepEqual(e, { index: chooseIndex(c, u), inExperiment: true, reason: null });
    } else assert.deepEqual(e, { index: 1, inExperiment: false, reason: 'layer' });
  }
  assert.ok(Math.abs(inside / users.length - 0.35) < 0.03, `${inside} inside`);
});

test('targeting: context plus userId (unless the context sets it), saved groups', () => {
  const groups = savedGroups({ beta: ['user-1', 'user-2'] });
  const c = compileDefinition(
    def({ targeting: { $or: [{ plan: { $in: ['pro', 'team'] } }, { userId: { $inGroup: 'beta' } }] } }),
  );
  assert.equal(evaluate(c, 'user-9', { plan: 'pro' }, groups).inExperiment, true);
  assert.deepEqual(evaluate(c, 'user-9', { plan: 'free' }, groups), {
    index: 0,
    inExperiment: false,
    reason: 'targeting',
  });
  assert.equal(evaluate(c, 'user-9', null, groups).reason, 'targeting');
  assert.equal(evaluate(c, 'user-1', { plan: 'free' }, groups).inExperiment, true);
  // The context's own userId wins over the unit id.
  assert.equal(evaluate(c, 'user-1', { plan: 'free', userId: 'someone' }, groups).reason, 'targeting');
  assert.equal(evaluate(c, 'user-9', { userId: 'user-2' }, groups).inExperiment, true);
  // Without the groups the condition does not match.
  assert.equal(evaluate(c, 'user-1', {}, NO_GROUPS).reason, 'targeting');
});

test('coverage: the sticky hash in the shrunk ranges; raising coverage only adds units', () => {
  const weights = [0.5, 0.3, 0.2];
  const at = (coverage: number) => compileDefinition(def({ coverage }));
  const c10 = at(10);
  const c40 = at(40);
  const c0 = at(0);
  let entered10 = 0;
  for (const u of users) {
    const n = hashV2('seed-1', u);
    const e10 = evaluate(c10, u, undefined, NO_GROUPS);
    const e40 = evaluate(c40, u, undefined, NO_GROUPS);
    const starts = [0, 0.5, 0.8];
    const want = chooseVariant(
      n,
      starts.map((s, i) => [s, s + 0.1 * weights[i]!]),
    );
    if (want < 0) assert.deepEqual(e10, { index: 0, inExperiment: false, reason: 'coverage' });
    else {
      entered10++;
      assert.deepEqual(e10, { index: want, inExperiment: true, reason: null });
      // Whoever is in at 10% is in, with the same variant, at 40%: and it is today's variant.
      assert.deepEqual(e40, e10);
      assert.equal(e10.index, chooseIndex(c10, u));
    }
    assert.equal(evaluate(c0, u, undefined, NO_GROUPS).reason, 'coverage');
  }
  assert.ok(Math.abs(entered10 / users.length - 0.1) < 0.02, `${entered10} entered at 10%`);
});

test('random experiments: a fresh draw against the coverage ranges; at 100 the weighted pick', () => {
  const c = compileDefinition(def({ assignment: 'random', coverage: 50 }));
  // Ranges at 50%: A [0, .25), B [.5, .65), C [.8, .9).
  const draw = (u: number) => evaluate(c, 'u', undefined, NO_GROUPS, () => u);
  assert.deepEqual(draw(0.1), { index: 0, inExperiment: true, reason: null });
  assert.deepEqual(draw(0.3), { index: 0, inExperiment: false, reason: 'coverage' });
  assert.deepEqual(draw(0.6), { index: 1, inExperiment: true, reason: null });
  assert.deepEqual(draw(0.85), { index: 2, inExperiment: true, reason: null });
  assert.deepEqual(draw(0.95), { index: 0, inExperiment: false, reason: 'coverage' });
  const full = compileDefinition(def({ assignment: 'random', targeting: { plan: 'pro' } }));
  assert.deepEqual(
    evaluate(full, 'u', { plan: 'pro' }, NO_GROUPS, () => 0.79),
    {
      index: 1,
      inExperiment: true,
      reason: null,
    },
  );
});

test('the defaultVariant by key; an unknown one or an override naming no variant serves the first (as the server)', () => {
  const c = compileDefinition(
    def({ coverage: 0, defaultVariant: 'C', overrides: [{ variant: 'nope', userIds: ['u'] }] }),
  );
  assert.deepEqual(evaluate(c, 'v', undefined, NO_GROUPS), {
    index: 2,
    inExperiment: false,
    reason: 'coverage',
  });
  assert.deepEqual(evaluate(c, 'u', undefined, NO_GROUPS), {
    index: 0,
    inExperiment: false,
    reason: 'override',
  });
  assert.equal(compileDefinition(def({ defaultVariant: 'nope' })).entry.defaultIndex, 0);
});

test("a unit that did not enter: the id's variant part is x<index>, its check over the whole body", () => {
  const c = compileDefinition(def({ version: 40 }));
  assert.deepEqual(c.outMiddles, ['.14.x0.', '.14.x1.', '.14.x2.']);
  assert.deepEqual(c.middles, ['.14.0.', '.14.1.', '.14.2.']);
});

test('readAssignmentId tells a marked id from an entered one', async () => {
  const { assignmentIdWith } = await import('../src/ids.js');
  const c = compileDefinition(def());
  const out = assignmentIdWith(c.keyState, c.outMiddles[1]!, 'usér-1');
  const inn = assignmentIdWith(c.keyState, c.middles[1]!, 'usér-1');
  assert.match(out, /^[0-9a-f-]{36}\.3\.x1\.[A-Za-z0-9+/=]+\.[0-9a-f]{8}$/);
  assert.equal(out.slice(-8), checkOf(checkKeyState(4242), out.slice(0, -9)));
  assert.deepEqual(readAssignmentId(out, 4242), {
    version: 3,
    variantIndex: 1,
    userId: 'usér-1',
    inExperiment: false,
  });
  assert.equal(readAssignmentId(inn, 4242)?.inExperiment, true);
  assert.equal(readAssignmentId(out, 4243), null);
});

test('(a+)+$ against 50 a and a b in targeting answers at once', () => {
  const c = compileDefinition(def({ targeting: { name: { $regex: '(a+)+$' } } }));
  const started = performance.now();
  assert.equal(evaluate(c, 'u', { name: `${'a'.repeat(50)}b` }, NO_GROUPS).reason, 'targeting');
  assert.equal(evaluate(c, 'u', { name: 'a'.repeat(50) }, NO_GROUPS).inExperiment, true);
  assert.ok(performance.now() - started < 1000);
});
