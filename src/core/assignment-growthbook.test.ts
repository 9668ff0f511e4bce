// GrowthBook's vendored conformance sections for hashing, bucket ranges, namespaces and equal weights.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { bucketRanges, chooseVariant, equalWeights, hashV1, hashV2, inNamespace } from './assignment.js';

const cases = JSON.parse(
  readFileSync(new URL('../../test/fixtures/growthbook/cases.json', import.meta.url), 'utf8'),
);

test('hash: every vendored case (versions 1 and 2; an unknown version is null in GrowthBook)', () => {
  let n = 0;
  for (const [seed, value, version, expected] of cases.hash as [string, string, number, number | null][]) {
    const got = version === 2 ? hashV2(seed, value) : version === 1 ? hashV1(seed, value) : null;
    assert.equal(got, expected, `hash(${JSON.stringify(seed)}, ${JSON.stringify(value)}, ${version})`);
    n++;
  }
  assert.equal(n, 15);
});

test('getBucketRange: every vendored case', () => {
  for (const [name, [num, coverage, weights], expected] of cases.getBucketRange as [
    string,
    [number, number, number[] | null],
    [number, number][],
  ][]) {
    const got = bucketRanges(num, coverage, weights).map(([a, b]) => [round(a), round(b)]);
    assert.deepEqual(got, expected, name);
  }
  assert.equal(cases.getBucketRange.length, 13);
});

test('chooseVariation: every vendored case', () => {
  for (const [name, n, ranges, expected] of cases.chooseVariation as [
    string,
    number,
    [number, number][],
    number,
  ][])
    assert.equal(chooseVariant(n, ranges), expected, name);
  assert.equal(cases.chooseVariation.length, 13);
});

test('inNamespace: every vendored case', () => {
  for (const [name, id, ns, expected] of cases.inNamespace as [
    string,
    string,
    [string, number, number],
    boolean,
  ][])
    assert.equal(inNamespace(id, ns), expected, name);
  assert.equal(cases.inNamespace.length, 16);
});

test('getEqualWeights: every vendored case', () => {
  for (const [n, expected] of cases.getEqualWeights as [number, number[]][])
    assert.deepEqual(equalWeights(n).map(round), expected, `n=${n}`);
  assert.equal(cases.getEqualWeights.length, 6);
});

function round(x: number): number {
  return Math.round(x * 1e8) / 1e8;
}
