// Owns the sample-ratio-mismatch check of an experiment whose weights changed between versions.
import { srmTest } from './srm.js';

/** Exposures counted for one variant in one version of the experiment. */
export interface VersionExposure {
  version: number;
  variantKey: string;
  n: number;
}

/** The weights (trafficPercent, summing to 100) one version of the experiment assigned with. */
export interface VersionWeights {
  version: number;
  variants: ReadonlyArray<{ key: string; trafficPercent: number }>;
}

export interface VersionedSrm {
  chiSquare: number | null;
  pValue: number | null;
  /** False also when the test cannot be computed (its warnings say why). */
  mismatch: boolean;
  warnings: string[];
}

/**
 * Pooling every version under the current weights would flag a weight change as a mismatch. Instead each
 * version expects its own exposures split by its own weights: expected_k = sum_v total_v * w_{v,k} / 100,
 * and the chi-square compares the pooled observed counts with those pooled expectations (rescaled to the
 * observed total). Exposures of versions not listed are not counted; exposures under a key no listed
 * version has are observed in no arm but count in their version's total, so they give that version's
 * split more weight. No exposures at all: no test.
 */
export function srmAcrossVersions(
  exposures: readonly VersionExposure[],
  versions: readonly VersionWeights[],
): VersionedSrm {
  const keys = [...new Set(versions.flatMap((v) => v.variants.map((x) => x.key)))];
  const observed = keys.map(() => 0);
  const expected = keys.map(() => 0);
  for (const v of versions) {
    const inThis = exposures.filter((e) => e.version === v.version);
    const total = inThis.reduce((a, e) => a + e.n, 0);
    for (const e of inThis) {
      const i = keys.indexOf(e.variantKey);
      if (i >= 0) observed[i]! += e.n;
    }
    for (const variant of v.variants)
      expected[keys.indexOf(variant.key)]! += (total * variant.trafficPercent) / 100;
  }
  if (observed.reduce((a, b) => a + b, 0) === 0) {
    return { chiSquare: null, pValue: null, mismatch: false, warnings: [] };
  }
  const result = srmTest(observed, expected);
  return {
    chiSquare: result.chiSquare,
    pValue: result.pValue,
    mismatch: result.mismatch === true,
    warnings: result.warnings,
  };
}
