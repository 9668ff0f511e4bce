import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { seededRandom } from '../../test/helpers/random.js';
import { sharedPath } from '../../test/helpers/shared.js';
import {
  assignVariant,
  type BucketRange,
  bucketRanges,
  chooseVariant,
  compileExperiment,
  hashV2,
  pickWeighted,
} from './assignment.js';
import { createExperiment } from './experiment.js';
import type { Variant } from './variants.js';

interface HashVectors {
  hashV2: Array<[string, string, number]>;
  bucketRanges: Array<[string, [number, number, number[] | null], BucketRange[]]>;
  chooseVariation: Array<[string, number, BucketRange[], number]>;
}
const vectors = JSON.parse(readFileSync(sharedPath('vectors/assignment-hash.json'), 'utf8')) as HashVectors;

describe('golden vectors (assignment-hash.json): changing these changes running experiments', () => {
  for (const [seed, value, expected] of vectors.hashV2) {
    test(`hashV2(${seed}, ${value}) = ${expected}`, () => assert.equal(hashV2(seed, value), expected));
  }
  for (const [name, [n, coverage, weights], expected] of vectors.bucketRanges) {
    test(`bucketRanges: ${name}`, () => {
      const got = bucketRanges(n, coverage, weights);
      assert.equal(got.length, expected.length);
      got.forEach(([a, b], i) => {
        assert.ok(Math.abs(a - expected[i]![0]) < 1e-12, `${name} start ${i}`);
        assert.ok(Math.abs(b - expected[i]![1]) < 1e-12, `${name} end ${i}`);
      });
    });
  }
  for (const [name, n, ranges, expected] of vectors.chooseVariation) {
    test(`chooseVariant: ${name}`, () => assert.equal(chooseVariant(n, ranges), expected));
  }
});

/** Upper-tail chi-square critical values at p = 0.001 by degrees of freedom. */
const CHI2_CRIT_001: Record<number, number> = { 1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467 };

function chiSquare(counts: number[], weights: number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.reduce((acc, c, i) => {
    const expected = total * weights[i]!;
    return expected === 0 ? acc : acc + (c - expected) ** 2 / expected;
  }, 0);
}

function variants(weights: number[]): Variant[] {
  return weights.map((w, i) => ({ key: `v${i}`, payload: { i }, trafficPercent: w }));
}

describe('random assignment follows trafficPercent', () => {
  const cases: number[][] = [
    [50, 50],
    [10, 20, 70],
    [25, 0, 75],
    [1, 99],
    [20, 20, 20, 20, 20],
  ];
  for (const weights of cases) {
    test(`chi-square fit at p >= 0.001 for weights ${weights.join('/')}`, () => {
      const compiled = compileExperiment(createExperiment({ slug: 'e', variants: variants(weights) }, 'now'));
      const random = seededRandom(42 + weights.length);
      const counts = new Array<number>(weights.length).fill(0);
      const draws = 200_000;
      for (let i = 0; i < draws; i++) counts[assignVariant(compiled, 'u', random)]!++;
      weights.forEach((w, i) => {
        if (w === 0) assert.equal(counts[i], 0, 'a 0% variant is never assigned');
      });
      const df = weights.filter((w) => w > 0).length - 1;
      const stat = chiSquare(
        counts,
        weights.map((w) => w / 100),
      );
      assert.ok(stat < CHI2_CRIT_001[df]!, `chi2 ${stat} over df ${df} for counts ${counts}`);
    });
  }

  test('the draw boundaries are exact: u just below a cumulative edge stays left', () => {
    const cumulative = new Float64Array([0.25, 0.25, 1]);
    assert.equal(
      pickWeighted(cumulative, () => 0),
      0,
    );
    assert.equal(
      pickWeighted(cumulative, () => 0.2499999),
      0,
    );
    assert.equal(
      pickWeighted(cumulative, () => 0.25),
      2,
      'the zero-weight middle variant is skipped',
    );
    assert.equal(
      pickWeighted(cumulative, () => 0.9999999),
      2,
    );
  });

  test('a first variant with 0% is never picked even when the draw is 0', () => {
    assert.equal(
      pickWeighted(new Float64Array([0, 1]), () => 0),
      1,
    );
  });
});

describe('sticky assignment', () => {
  const sticky = (weights: number[], seed?: string) =>
    compileExperiment(
      createExperiment(
        { slug: 'sticky-exp', assignment: 'sticky', variants: variants(weights), seed },
        'now',
      ),
    );

  test('the same user gets the same variant on every call while weights are unchanged', () => {
    const compiled = sticky([30, 70]);
    const never = () => {
      throw new Error('sticky mode must not draw randomness');
    };
    for (let u = 0; u < 1000; u++) {
      const first = assignVariant(compiled, `user-${u}`, never);
      assert.equal(assignVariant(compiled, `user-${u}`, never), first);
    }
  });

  test('the bucket is the v2 hash of seed + userId against the ranges', () => {
    const compiled = sticky([50, 50], 'foo');
    // hashV2('foo', 'ab') = 0.2575 (golden vector) -> first half.
    assert.equal(assignVariant(compiled, 'ab', Math.random), 0);
  });

  test('users spread by the weights (chi-square at p >= 0.001)', () => {
    const compiled = sticky([10, 30, 60]);
    const counts = [0, 0, 0];
    for (let u = 0; u < 100_000; u++) counts[assignVariant(compiled, `u${u}`, Math.random)]!++;
    assert.ok(chiSquare(counts, [0.1, 0.3, 0.6]) < CHI2_CRIT_001[2]!, `counts ${counts}`);
  });

  test('the seed defaults to the slug and changes buckets when changed', () => {
    const bySlug = sticky([50, 50]);
    assert.equal(bySlug.experiment.seed, 'sticky-exp');
    const other = sticky([50, 50], 'another-seed');
    let differ = 0;
    for (let u = 0; u < 200; u++) {
      if (assignVariant(bySlug, `u${u}`, Math.random) !== assignVariant(other, `u${u}`, Math.random))
        differ++;
    }
    assert.ok(differ > 50, `only ${differ} of 200 users moved`);
  });
});

describe('compiled responses', () => {
  test('the response prefix is valid JSON once the assignmentId is appended', () => {
    const compiled = compileExperiment(
      createExperiment(
        { slug: 'e', variants: [{ key: 'A', payload: { p: 'x"\n', __proto__x: 1 }, trafficPercent: 100 }] },
        'n',
      ),
    );
    assert.deepEqual(JSON.parse(`${compiled.responsePrefix[0]}id"}`), {
      variant: 'A',
      payload: { p: 'x"\n', __proto__x: 1 },
      assignmentId: 'id',
    });
  });
});
