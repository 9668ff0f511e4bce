import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConflictError, ValidationError } from './errors.js';
import {
  applyChanges,
  assertTransition,
  createExperiment,
  STATUSES,
  type Status,
  TRANSITIONS,
  validateSlug,
} from './experiment.js';
import { validateVariants } from './variants.js';

const NOW = '2026-01-01T00:00:00.000Z';
const ab = [
  { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
];

describe('validateSlug', () => {
  test('accepts letters, digits, dot, underscore, dash up to 100 characters', () => {
    for (const s of ['a', 'checkout-prompt', 'A.b_c-9', '9lives', 'x'.repeat(100)]) {
      assert.equal(validateSlug(s), s);
    }
  });
  test('rejects empty, too long, leading punctuation and other characters', () => {
    for (const s of ['', 'x'.repeat(101), '-a', '.a', '_a', 'a b', 'a/b', 'é', 'a%2F', 42, null]) {
      assert.throws(() => validateSlug(s), ValidationError, String(s));
    }
  });
});

describe('validateVariants', () => {
  test('accepts weights summing to 100 within 1e-9', () => {
    const three = [33.3333333333, 33.3333333333, 33.3333333334].map((w, i) => ({
      key: `v${i}`,
      payload: {},
      trafficPercent: w,
    }));
    assert.equal(validateVariants(three).length, 3);
  });
  test('accepts a 0% variant', () => {
    validateVariants([
      { key: 'A', payload: {}, trafficPercent: 100 },
      { key: 'B', payload: {}, trafficPercent: 0 },
    ]);
  });
  const bad: Array<[string, unknown, RegExp]> = [
    ['not an array', {}, /array of 1-100/],
    ['empty', [], /array of 1-100/],
    [
      '101 variants',
      Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, payload: {}, trafficPercent: 0 })),
      /1-100/,
    ],
    ['sum 90', [{ key: 'A', payload: {}, trafficPercent: 90 }], /sum to 100 \(got 90\)/],
    [
      'duplicate key',
      [...ab, { key: 'A', payload: {}, trafficPercent: 0 }],
      /variants\[2\]\.key 'A' is used/,
    ],
    ['bad key', [{ key: 'a b', payload: {}, trafficPercent: 100 }], /variants\[0\]\.key/],
    ['long key', [{ key: 'k'.repeat(65), payload: {}, trafficPercent: 100 }], /variants\[0\]\.key/],
    ['array payload', [{ key: 'A', payload: [], trafficPercent: 100 }], /payload must be a JSON object/],
    ['missing payload', [{ key: 'A', trafficPercent: 100 }], /payload must be a JSON object/],
    ['NaN weight', [{ key: 'A', payload: {}, trafficPercent: Number.NaN }], /finite number/],
    ['string weight', [{ key: 'A', payload: {}, trafficPercent: '100' }], /finite number/],
    [
      'negative',
      [
        { key: 'A', payload: {}, trafficPercent: -1 },
        { key: 'B', payload: {}, trafficPercent: 101 },
      ],
      /between 0 and 100/,
    ],
  ];
  for (const [name, input, message] of bad) {
    test(`rejects ${name}`, () => assert.throws(() => validateVariants(input), message));
  }
});

describe('status transitions', () => {
  const allowed = new Set([
    'draft>running',
    'running>paused',
    'paused>running',
    'running>completed',
    'paused>completed',
    // released → running passes the transition table; applyChanges asks for new variants with it.
    'released>running',
    ...STATUSES.filter((s) => s !== 'archived').map((s) => `${s}>archived`),
  ]);
  for (const from of STATUSES) {
    for (const to of STATUSES) {
      if (from === to) continue;
      const ok = allowed.has(`${from}>${to}`);
      test(`${from} -> ${to} is ${ok ? 'allowed' : 'refused'}`, () => {
        if (ok) assertTransition(from, to);
        else assert.throws(() => assertTransition(from as Status, to as Status), ConflictError);
      });
    }
  }
  test('the refusal names the allowed transitions', () => {
    assert.throws(() => assertTransition('completed', 'running'), /allowed from 'completed': archived/);
  });
  test('the table matches the rules', () => {
    assert.deepEqual(TRANSITIONS.archived, []);
  });
});

describe('createExperiment and applyChanges', () => {
  test('defaults: draft, random, seed = slug, name = slug, version 1, inactive', () => {
    const e = createExperiment({ slug: 'exp', variants: ab }, NOW);
    assert.deepEqual(
      {
        status: e.status,
        active: e.active,
        assignment: e.assignment,
        seed: e.seed,
        name: e.name,
        version: e.version,
      },
      { status: 'draft', active: false, assignment: 'random', seed: 'exp', name: 'exp', version: 1 },
    );
  });
  test('a new experiment may start running but not paused', () => {
    assert.equal(createExperiment({ slug: 'e', variants: ab, status: 'running' }, NOW).active, true);
    assert.throws(
      () => createExperiment({ slug: 'e', variants: ab, status: 'paused' }, NOW),
      ValidationError,
    );
  });
  test('changing weights bumps version; status or name do not', () => {
    const e = createExperiment({ slug: 'exp', variants: ab }, NOW);
    const started = applyChanges(e, { status: 'running', name: 'n' }, NOW);
    assert.equal(started.version, 1);
    assert.equal(started.active, true);
    const same = applyChanges(started, { variants: ab }, NOW);
    assert.equal(same.version, 1, 'identical variants do not bump');
    const reweighted = applyChanges(
      started,
      {
        variants: [
          { ...ab[0]!, trafficPercent: 20 },
          { ...ab[1]!, trafficPercent: 80 },
        ],
      },
      NOW,
    );
    assert.equal(reweighted.version, 2);
  });
  test('the same variants with payload keys in another order are no change', () => {
    const e = createExperiment(
      { slug: 'exp', variants: [{ key: 'A', payload: { a: 1, b: 2 }, trafficPercent: 100 }] },
      NOW,
    );
    const same = applyChanges(
      e,
      { variants: [{ key: 'A', payload: { b: 2, a: 1 }, trafficPercent: 100 }] },
      NOW,
    );
    assert.equal(same.version, 1);
  });
});

test('an archived experiment cannot be changed at all: name, variants or status → ConflictError', () => {
  const archived = {
    ...createExperiment({ slug: 'old', variants: [{ key: 'A', payload: {}, trafficPercent: 100 }] }, 'T'),
    status: 'archived' as const,
    active: false,
  };
  for (const changes of [
    { name: 'renamed' },
    { variants: [{ key: 'B', payload: {}, trafficPercent: 100 }] },
    { status: 'archived' as const },
  ]) {
    assert.throws(() => applyChanges(archived, changes, 'T2'), /archived and can no longer be changed/);
  }
});
