import assert from 'node:assert/strict';
import { test } from 'node:test';
import { datasetChanged, diffItems, type ItemText, itemContent, itemTexts, sameItem } from './datasets.js';
import { ROOT_ACTOR } from './events.js';

const ids = () => {
  let n = 0;
  return () => `made-${++n}`;
};

test('items as stored: ids made when absent, JSON text as sent, absent expected and metadata null', () => {
  const texts = itemTexts(
    [
      { id: 'a', input: { b: 1, a: 2 }, expected: 'x', metadata: { k: 1 } },
      { input: 'just text', expected: null },
      { input: null, metadata: null },
    ],
    ids(),
  );
  assert.deepEqual(texts, [
    { id: 'a', input: '{"b":1,"a":2}', expected: '"x"', metadata: '{"k":1}' },
    { id: 'made-1', input: '"just text"', expected: null, metadata: null },
    { id: 'made-2', input: 'null', expected: null, metadata: null },
  ]);
  assert.deepEqual(itemContent(texts[0]!), { input: { b: 1, a: 2 }, expected: 'x', metadata: { k: 1 } });
});

test('a repeated id, a bad id, no input, metadata not an object, too many items: 400 naming where', () => {
  const check = (items: unknown[]) => () => itemTexts(items as never, ids());
  assert.throws(
    check([
      { id: 'a', input: 1 },
      { id: 'a', input: 2 },
    ]),
    /items\[1\]\.id 'a' repeats items\[0\]\.id/,
  );
  assert.throws(check([{ id: '', input: 1 }]), /items\[0\]\.id must be 1-256 characters \(it has 0\)/);
  assert.throws(check([{ id: 'a\nb', input: 1 }]), /control characters/);
  assert.throws(check([{ id: 7, input: 1 }]), /items\[0\]\.id must be a string/);
  assert.throws(check([{ id: 'a' }]), /items\[0\] has no input/);
  assert.throws(check([{ input: 1, metadata: [1] }]), /items\[0\]\.metadata must be a JSON object/);
  assert.throws(check(Array.from({ length: 10_001 }, () => ({ input: 1 }))), /10001 items; at most 10000/);
});

test('what a change does: new ids added, other content changed, the same JSON in another key order unchanged', () => {
  const current = new Map<string, ItemText>([
    ['a', { id: 'a', input: '{"x":1,"y":[1,{"p":1,"q":2}]}', expected: null, metadata: null }],
    ['b', { id: 'b', input: '"b"', expected: '1', metadata: null }],
  ]);
  const incoming: ItemText[] = [
    { id: 'a', input: '{"y":[1,{"q":2,"p":1}],"x":1}', expected: null, metadata: null },
    { id: 'b', input: '"b"', expected: '2', metadata: null },
    { id: 'c', input: '"c"', expected: null, metadata: null },
  ];
  const { added, changed, unchanged } = diffItems(current, incoming);
  assert.deepEqual([added.map((i) => i.id), changed.map((i) => i.id), unchanged], [['c'], ['b'], 1]);
  // Arrays keep their order; null and an absent value are the same, an empty object is not.
  assert.ok(!sameItem({ ...incoming[2]!, input: '[1,2]' }, { ...incoming[2]!, input: '[2,1]' }));
  assert.ok(!sameItem({ ...incoming[2]!, metadata: '{}' }, incoming[2]!));
});

test('dataset.changed carries the new version and the counts, never the items', () => {
  const src = { actor: ROOT_ACTOR, at: '2025-06-02T09:00:00.000Z', newId: () => 'e1' };
  const d = {
    id: 'd1',
    name: 'faq',
    description: '',
    version: 2,
    items: 5,
    createdAt: src.at,
    updatedAt: src.at,
  };
  assert.deepEqual(datasetChanged(src, d, { added: 2, changed: 1, removed: 0, unchanged: 3 }), [
    {
      id: 'e1',
      type: 'dataset.changed',
      at: src.at,
      actor: ROOT_ACTOR,
      experiment: null,
      data: { id: 'd1', name: 'faq', version: 2, items: 5, added: 2, changed: 1, removed: 0 },
    },
  ]);
});
