// GrowthBook's own SDK cases for the hash, bucket ranges, the variant choice, namespaces (layers) and
// equal weights (test/fixtures/growthbook/cases.json), run through the client's port.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { bucketRanges, chooseVariant, getEqualWeights, hash, inNamespace } from '../src/hash.js';
import { repoRoot } from './server.js';

type Range = [number, number];
const cases = JSON.parse(
  readFileSync(join(repoRoot, 'test', 'fixtures', 'growthbook', 'cases.json'), 'utf8'),
) as {
  hash: [string, string, number, number | null][];
  getBucketRange: [string, [number, number, number[] | null], Range[]][];
  chooseVariation: [string, number, Range[], number][];
  inNamespace: [string, string, [string, number, number], boolean][];
  getEqualWeights: [number, number[]][];
};

const close = (a: number, b: number) => Math.abs(a - b) < 1e-6;

test('every vendored hash case (15)', () => {
  assert.equal(cases.hash.length, 15);
  for (const [seed, value, version, expected] of cases.hash) {
    assert.equal(hash(seed, value, version), expected, `${seed}/${value}/v${version}`);
  }
});

test('every vendored getBucketRange case (13)', () => {
  assert.equal(cases.getBucketRange.length, 13);
  for (const [name, [n, coverage, weights], expected] of cases.getBucketRange) {
    const got = bucketRanges(n, coverage, weights);
    assert.equal(got.length, expected.length, name);
    got.forEach(([s, e], i) => {
      assert.ok(close(s, expected[i]![0]) && close(e, expected[i]![1]), `${name} range ${i}: ${s},${e}`);
    });
  }
});

test('every vendored chooseVariation case (13)', () => {
  assert.equal(cases.chooseVariation.length, 13);
  for (const [name, n, ranges, expected] of cases.chooseVariation) {
    assert.equal(chooseVariant(n, ranges), expected, name);
  }
});

test('every vendored inNamespace case (16)', () => {
  assert.equal(cases.inNamespace.length, 16);
  for (const [name, id, ns, expected] of cases.inNamespace) {
    assert.equal(inNamespace(id, ns), expected, name);
  }
});

test('every vendored getEqualWeights case (6)', () => {
  assert.equal(cases.getEqualWeights.length, 6);
  for (const [n, expected] of cases.getEqualWeights) {
    const got = getEqualWeights(n);
    assert.equal(got.length, expected.length, `n=${n}`);
    got.forEach((w, i) => {
      assert.ok(close(w, expected[i]!), `n=${n} weight ${i}: ${w}`);
    });
  }
});
