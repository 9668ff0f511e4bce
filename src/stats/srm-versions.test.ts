// Tests the sample-ratio-mismatch check across versions with counts small enough to check by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalCdf } from './distributions.js';
import { srmAcrossVersions, type VersionWeights } from './srm-versions.js';

const ab = (version: number, a: number, b: number): VersionWeights => ({
  version,
  variants: [
    { key: 'A', trafficPercent: a },
    { key: 'B', trafficPercent: b },
  ],
});
const exposure = (version: number, variantKey: string, n: number) => ({ version, variantKey, n });

describe('srmAcrossVersions', () => {
  it('expects each version’s exposures split by that version’s own weights', () => {
    // v1 50/50 with 110 + 90 = 200 exposures expects 100/100; v2 25/75 with 60 + 140 = 200 expects 50/150.
    // Pooled: observed 170/230, expected 150/250; chi-square = 20²/150 + 20²/250 = 8/3 + 8/5 = 64/15.
    // With 1 degree of freedom the chi-square tail is the two-sided normal tail of sqrt(64/15): p ≈ 0.039.
    const r = srmAcrossVersions(
      [exposure(1, 'A', 110), exposure(1, 'B', 90), exposure(2, 'A', 60), exposure(2, 'B', 140)],
      [ab(1, 50, 50), ab(2, 25, 75)],
    );
    assert.ok(Math.abs(r.chiSquare! - 64 / 15) < 1e-12, `chi-square ${r.chiSquare}`);
    const p = 2 * (1 - normalCdf(Math.sqrt(64 / 15)));
    assert.ok(Math.abs(r.pValue! - p) < 1e-9, `p ${r.pValue} vs ${p}`);
    assert.equal(r.mismatch, false);
    assert.deepEqual(r.warnings, []);
  });

  it('does not take a change of weights for a mismatch', () => {
    // v1 50/50: 1000/1000; v2 10/90: 200/1800. Each version matches its weights exactly, so the pooled
    // 1200/2800 is exactly what is expected (chi-square 0). Pooled under v2's weights alone it would be
    // 400/3600 expected: chi-square 800²/400 + 800²/3600 ≈ 1778, a certain (false) mismatch.
    const r = srmAcrossVersions(
      [exposure(1, 'A', 1000), exposure(1, 'B', 1000), exposure(2, 'A', 200), exposure(2, 'B', 1800)],
      [ab(1, 50, 50), ab(2, 10, 90)],
    );
    assert.equal(r.chiSquare, 0);
    assert.equal(r.pValue, 1);
    assert.equal(r.mismatch, false);
  });

  it('flags exposures that do not follow the weights', () => {
    // 1000/1200 against 1100/1100: chi-square = 2 * 100²/1100 ≈ 18.18, p ≈ 2e-5 < 0.001.
    const r = srmAcrossVersions([exposure(1, 'A', 1000), exposure(1, 'B', 1200)], [ab(1, 50, 50)]);
    assert.ok(Math.abs(r.chiSquare! - 20000 / 1100) < 1e-12);
    assert.ok(r.pValue! < 1e-4);
    assert.equal(r.mismatch, true);
  });

  it('expects traffic in a variant added later only from the versions that have it', () => {
    // v1 A/B 50/50 with 200 exposures; v2 A/B/C 50/25/25 with 400. Expected A = 100 + 200, B = 100 + 100,
    // C = 0 + 100: exactly the observed 300/200/100, with 2 degrees of freedom.
    const r = srmAcrossVersions(
      [
        exposure(1, 'A', 100),
        exposure(1, 'B', 100),
        exposure(2, 'A', 200),
        exposure(2, 'B', 100),
        exposure(2, 'C', 100),
      ],
      [
        ab(1, 50, 50),
        {
          version: 2,
          variants: [
            { key: 'A', trafficPercent: 50 },
            { key: 'B', trafficPercent: 25 },
            { key: 'C', trafficPercent: 25 },
          ],
        },
      ],
    );
    assert.equal(r.chiSquare, 0);
    assert.equal(r.mismatch, false);
  });

  it('leaves out exposures of versions that are not listed', () => {
    const r = srmAcrossVersions(
      [exposure(1, 'A', 1000), exposure(1, 'B', 1000), exposure(2, 'A', 5000)],
      [ab(1, 50, 50)],
    );
    assert.equal(r.chiSquare, 0);
  });

  it('counts exposures under a key that is no variant in their version’s total only', () => {
    // Alone they change nothing: the expectations are rescaled to the observed total, so only the split
    // counts. v1 50/50: A 100, B 100 (and 200 under 'ghost'); v2 0/100: B 200.
    // Without the ghost, expected A 100, B 300 = observed: chi-square 0. With it, v1's 400 exposures
    // expect A 200, B 200, plus v2's B 200: A 200, B 400, rescaled to the 400 observed: 400/3, 800/3.
    // chi-square = (100/3)² / (400/3) + (100/3)² / (800/3) = 25/3 + 25/6 = 12.5.
    const exposures = [exposure(1, 'A', 100), exposure(1, 'B', 100), exposure(2, 'B', 200)];
    const versions = [ab(1, 50, 50), ab(2, 0, 100)];
    assert.equal(srmAcrossVersions(exposures, versions).chiSquare, 0);
    const r = srmAcrossVersions([...exposures, exposure(1, 'ghost', 200)], versions);
    assert.ok(Math.abs(r.chiSquare! - 12.5) < 1e-12, `chi-square ${r.chiSquare}`);
  });

  it('has no test and no warning without exposures', () => {
    assert.deepEqual(srmAcrossVersions([], [ab(1, 50, 50)]), {
      chiSquare: null,
      pValue: null,
      mismatch: false,
      warnings: [],
    });
  });

  it('passes on the warnings of a test that cannot be computed, and reports no mismatch', () => {
    // Every exposure in the only arm with weight: one active arm, nothing to compare.
    const r = srmAcrossVersions([exposure(1, 'A', 10)], [ab(1, 100, 0)]);
    assert.equal(r.pValue, null);
    assert.equal(r.mismatch, false);
    assert.match(r.warnings.join(), /at least two arms/);
  });
});
