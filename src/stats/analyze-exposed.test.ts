// analyzeRollups' `exposed`: exposures counted in the unit of the randomization (users in sticky experiments,
// calls in random ones), the units the sample-ratio check tests, including the fallbacks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AnalysisInput, analyzeRollups } from './index.js';

const variants = [
  { key: 'A', trafficPercent: 50 },
  { key: 'B', trafficPercent: 50 },
];

function input(
  assignment: 'sticky' | 'random',
  rollups: Pick<AnalysisInput['rollups'], 'exposures' | 'exposureUsers'>,
): AnalysisInput {
  return {
    experiment: { slug: 'x', assignment, variants, metrics: [] },
    versions: [
      { version: 1, variants },
      { version: 2, variants },
    ],
    rollups: { results: [], metrics: [], units: [], ...rollups },
    options: { control: 'A', method: 'frequentist', alpha: 0.05, sided: 'two', version: null },
  };
}

const calls = [
  { version: 1, variantKey: 'A', n: 300 },
  { version: 1, variantKey: 'B', n: 250 },
  { version: 2, variantKey: 'A', n: 40 },
];
const users = [
  { version: 1, variantKey: 'A', n: 100 },
  { version: 1, variantKey: 'B', n: 95 },
  { version: 2, variantKey: 'A', n: 10 },
];

describe('analyzeRollups: exposed', () => {
  it('sticky: distinct users per variant, summed over the versions pooled; exposures stay calls', () => {
    const a = analyzeRollups(input('sticky', { exposures: calls, exposureUsers: users }));
    assert.deepEqual(a.exposed, { unit: 'user', counts: { A: 110, B: 95 } });
    assert.deepEqual(a.exposures, { A: 340, B: 250 });
    assert.equal(a.srm.unit, a.exposed.unit);
    assert.deepEqual(a.srm.counts, a.exposed.counts);
  });

  it('random: calls, whatever users were counted', () => {
    const a = analyzeRollups(input('random', { exposures: calls, exposureUsers: [] }));
    assert.deepEqual(a.exposed, { unit: 'call', counts: { A: 340, B: 250 } });
  });

  it('sticky without user counts (exposures from before them): calls, with a warning', () => {
    const a = analyzeRollups(input('sticky', { exposures: calls }));
    assert.deepEqual(a.exposed, { unit: 'call', counts: { A: 340, B: 250 } });
    assert.ok(a.warnings.some((w) => /users exposed were not counted/.test(w)));
  });

  it('sticky with no exposures yet: 0 users, and no warning', () => {
    const a = analyzeRollups(input('sticky', { exposures: [] }));
    assert.deepEqual(a.exposed, { unit: 'user', counts: { A: 0, B: 0 } });
    assert.equal(a.srm.unit, 'user');
    assert.deepEqual(a.warnings, []);
  });
});
