// The draw and the ids, without a server: every hash vector, and ids in the server's form.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { bucketRanges, chooseVariant, hashV2, hashV2From, pickWeighted, seedState } from '../src/hash.js';
import { assignmentIdFor, base64Utf8, checkKeyState, checkOf, readAssignmentId, uuidv7 } from '../src/ids.js';
import { chooseIndex, compileDefinition } from '../src/local.js';
import { repoRoot } from './server.js';

interface Vectors {
  hashV2: [string, string, number][];
  bucketRanges: [string, [number, number, number[] | null], [number, number][]][];
  /** The vectors keep the server's (GrowthBook's) name of chooseVariant. */
  chooseVariation: [string, number, [number, number][], number][];
}

const vectors = JSON.parse(
  readFileSync(join(repoRoot, 'test', 'fixtures', 'vectors', 'assignment-hash.json'), 'utf8'),
) as Vectors;

test('hashV2: every vector, and the precomputed-seed form agrees', () => {
  assert.ok(vectors.hashV2.length > 0);
  for (const [seed, value, expected] of vectors.hashV2) {
    assert.equal(hashV2(seed, value), expected, `${seed}+${value}`);
    assert.equal(hashV2From(seedState(seed), value), expected, `${seed}+${value} (seed state)`);
  }
});

test('bucketRanges: every vector', () => {
  assert.ok(vectors.bucketRanges.length > 0);
  for (const [name, [n, coverage, weights], expected] of vectors.bucketRanges) {
    const got = bucketRanges(n, coverage, weights);
    assert.equal(got.length, expected.length, name);
    got.forEach(([s, e], i) => {
      assert.ok(Math.abs(s - expected[i]![0]) < 1e-9, `${name} start ${i}`);
      assert.ok(Math.abs(e - expected[i]![1]) < 1e-9, `${name} end ${i}`);
    });
  }
});

test('chooseVariant: every vector', () => {
  assert.ok(vectors.chooseVariation.length > 0);
  for (const [name, n, ranges, expected] of vectors.chooseVariation) {
    assert.equal(chooseVariant(n, ranges), expected, name);
  }
});

test('the precomputed-seed hash equals hashV2 for many seeds and users (ASCII and not)', () => {
  for (let i = 0; i < 20_000; i++) {
    const seed = `exp-${i % 13}`;
    const user = i % 7 === 0 ? `usér-${i}-日本` : `user-${i * 7919}`;
    assert.equal(hashV2From(seedState(seed), user), hashV2(seed, user));
  }
});

test('pickWeighted: a zero weight never wins; the draw follows the cumulative weights', () => {
  const cumulative = new Float64Array([0.2, 0.2, 1]);
  assert.equal(
    pickWeighted(cumulative, () => 0),
    0,
  );
  assert.equal(
    pickWeighted(cumulative, () => 0.2),
    2,
  );
  assert.equal(
    pickWeighted(cumulative, () => 0.9999),
    2,
  );
  assert.equal(
    pickWeighted(cumulative, () => 1),
    2,
  );
});

test('sticky choice: the last weighted variant when float dust leaves the hash outside every range', () => {
  const c = compileDefinition({
    slug: 's',
    assignmentIdKey: 1,
    version: 1,
    assignment: 'sticky',
    seed: 's',
    variants: [
      { key: 'A', trafficPercent: 33.3, payload: {} },
      { key: 'B', trafficPercent: 33.3, payload: {} },
      { key: 'C', trafficPercent: 33.4, payload: {} },
      { key: 'D', trafficPercent: 0, payload: {} },
    ],
  });
  for (let i = 0; i < 5000; i++) {
    const idx = chooseIndex(c, `u-${i}`);
    assert.ok(idx >= 0 && idx <= 2, `never the 0% variant (${idx})`);
    assert.equal(idx, Math.max(0, chooseVariant(hashV2('s', `u-${i}`), c.ranges)));
  }
});

test('uuidv7: version 7, RFC variant, the time in the first 48 bits, distinct', () => {
  const now = Date.now();
  const seen = new Set<string>();
  for (let i = 0; i < 50_000; i++) {
    const u = uuidv7(now);
    assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(u);
  }
  assert.equal(seen.size, 50_000);
  const u = uuidv7(now);
  assert.equal(Number.parseInt(u.slice(0, 8) + u.slice(9, 13), 16), now);
});

test('base64 of the UTF-8 user id equals Buffer base64 (ASCII, control, non-ASCII, lone surrogates)', () => {
  const samples = ['', 'a', 'ab', 'abc', 'user-42', 'u\t1', 'ü', 'usér-日本-🎉', '\ud800x', 'x'.repeat(512)];
  for (let i = 0; i < 2000; i++) samples.push(String.fromCharCode(i, i * 7, (i * 13) % 0xffff));
  for (const s of samples)
    assert.equal(base64Utf8(s), Buffer.from(s, 'utf8').toString('base64'), JSON.stringify(s));
});

test("assignment ids: the contract's form, its FNV check keyed by the experiment, read back", () => {
  const id = assignmentIdFor(70_001, 37, 11, 'usér-42');
  assert.match(id, /^[0-9a-f-]{36}\.11\.b\.[A-Za-z0-9+/=]+\.[0-9a-f]{8}$/);
  const body = id.slice(0, id.lastIndexOf('.'));
  // The check by the contract's words: h = 0x811c9dc5; key's low then high 16 bits; then each character.
  let h = 0x811c9dc5;
  h = Math.imul(h ^ (70_001 & 0xffff), 0x01000193);
  h = Math.imul(h ^ (70_001 >>> 16), 0x01000193);
  for (const ch of body) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  assert.equal(id.slice(-8), (h >>> 0).toString(16).padStart(8, '0'));
  assert.equal(checkOf(checkKeyState(70_001), body), id.slice(-8));
  assert.deepEqual(readAssignmentId(id, 70_001), {
    version: 37,
    variantIndex: 11,
    userId: 'usér-42',
    inExperiment: true,
  });
  assert.equal(readAssignmentId(id, 70_002), null);
  assert.equal(readAssignmentId(`${id.slice(0, -1)}0`, 70_001) !== null, id.endsWith('0'));
});
