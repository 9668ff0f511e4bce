import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  actorOf,
  experimentChanged,
  keyCreated,
  matchesType,
  parseTypeFilter,
  ROOT_ACTOR,
} from './events.js';
import { applyChanges, createExperiment } from './experiment.js';
import { principalOf, ROOT } from './keys.js';

const NOW = '2026-03-01T12:00:00.000Z';
let n = 0;
const src = { actor: ROOT_ACTOR, at: NOW, newId: () => `id-${++n}` };
const base = createExperiment(
  { slug: 'e', variants: [{ key: 'A', payload: { p: 1 }, trafficPercent: 100 }] },
  NOW,
);

test('an update names only the fields that changed; status has its own event; nothing changed, no event', () => {
  assert.deepEqual(experimentChanged(src, base, applyChanges(base, { name: 'e' }, NOW)), []);
  const renamed = experimentChanged(
    src,
    base,
    applyChanges(base, { description: 'd', status: 'running' }, NOW),
  );
  assert.deepEqual(
    renamed.map((e) => [e.type, e.data]),
    [
      ['experiment.updated', { before: { description: '' }, after: { description: 'd' } }],
      ['experiment.status_changed', { from: 'draft', to: 'running' }],
    ],
  );
  const variants = [{ key: 'A', payload: { p: 2 }, trafficPercent: 100 }];
  const next = applyChanges(base, { variants }, NOW);
  const [changed] = experimentChanged(src, base, next);
  assert.deepEqual(changed?.data, {
    before: { variants: base.variants, version: 1 },
    after: { variants, version: 2 },
  });
  // Its own copy: changing the experiment later does not change the event.
  (changed!.data.after as { variants: Array<{ key: string }> }).variants[0]!.key = 'Z';
  assert.equal(next.variants[0]!.key, 'A');
});

test('a key event never holds the secret nor the hash', () => {
  const [made] = keyCreated(src, {
    id: 'k',
    name: 'n',
    scopes: ['read'],
    experiments: null,
    prefix: 'ask_abc',
    rateLimitPerSecond: null,
    createdAt: NOW,
    lastUsedAt: null,
    ...({ hash: 'secret-hash', key: 'ask_secret' } as object),
  });
  assert.deepEqual(Object.keys(made!.data).sort(), [
    'experiments',
    'id',
    'name',
    'prefix',
    'rateLimitPerSecond',
    'scopes',
  ]);
});

test('type filters: exact types and whole-word prefixes; anything else is refused', () => {
  assert.deepEqual(parseTypeFilter('experiment.updated'), { exact: 'experiment.updated' });
  assert.deepEqual(parseTypeFilter('experiment.*'), { prefix: 'experiment.' });
  for (const bad of ['*', 'experiment.', 'Experiment.*', 'a..b', 'experiment.*.x', '', 'a b']) {
    assert.equal(parseTypeFilter(bad), undefined, bad);
  }
  const prefix = parseTypeFilter('experiment.*')!;
  assert.ok(matchesType(prefix, 'experiment.status_changed'));
  assert.ok(!matchesType(prefix, 'experiments.x'));
  assert.ok(!matchesType(parseTypeFilter('key')!, 'key.created'));
});

test('the actor of a principal: root, or the key with the name this instance holds', () => {
  assert.deepEqual(
    actorOf(ROOT, () => 'ignored'),
    { kind: 'key', id: 'root', name: 'root' },
  );
  const key = principalOf({
    id: 'k1',
    name: 'bot',
    scopes: ['admin'],
    experiments: null,
    prefix: 'ask_',
    rateLimitPerSecond: null,
    createdAt: NOW,
    lastUsedAt: null,
  });
  assert.deepEqual(
    actorOf(key, (id) => (id === 'k1' ? 'bot' : undefined)),
    { kind: 'key', id: 'k1', name: 'bot' },
  );
  assert.deepEqual(
    actorOf(key, () => undefined),
    { kind: 'key', id: 'k1', name: 'k1' },
  );
});
