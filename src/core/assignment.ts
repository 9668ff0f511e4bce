// Variant assignment: weighted random draws and GrowthBook's v2 sticky hash. Pure: no I/O.
import type { Experiment } from './experiment.js';
import { fnv1a32, hashV2 } from './hash.js';

export { fnv1a32, hashV2 };

/** GrowthBook hash version 1 (biased; kept for namespaces): a number in [0, 1) with 3 decimal places. */
export function hashV1(seed: string, value: string): number {
  return (fnv1a32(value + seed) % 1000) / 1000;
}

/** GrowthBook's namespace test: hash v1 of the unit id with seed "__" + key, in [start, end). */
export function inNamespace(unitId: string, namespace: readonly [string, number, number]): boolean {
  const n = hashV1(`__${namespace[0]}`, unitId);
  return n >= namespace[1] && n < namespace[2];
}

/** `n` equal weights summing to 1 (none for n <= 0), as GrowthBook's getEqualWeights. */
export function equalWeights(n: number): number[] {
  return n <= 0 ? [] : new Array<number>(n).fill(1 / n);
}

export type BucketRange = [number, number];

/** Ranges of the hash space per variant: weights (summing to 1) scaled by `coverage`, laid end to end. */
export function bucketRanges(numVariations: number, coverage = 1, weights?: number[] | null): BucketRange[] {
  const c = Math.min(1, Math.max(0, coverage));
  // As GrowthBook: weights of the wrong length, or not summing to 1 within 0.01, fall back to equal weights.
  const total = weights ? weights.reduce((a, b) => a + b, 0) : 0;
  const w =
    weights && weights.length === numVariations && total >= 0.99 && total <= 1.01
      ? weights
      : equalWeights(numVariations);
  let cumulative = 0;
  return w.map((weight) => {
    const start = cumulative;
    cumulative += weight;
    return [start, start + c * weight];
  });
}

/** Index of the range that holds `n` (start inclusive, end exclusive), or -1 when none does. */
export function chooseVariant(n: number, ranges: BucketRange[]): number {
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i]!;
    if (n >= r[0] && n < r[1]) return i;
  }
  return -1;
}

/** A uniform draw in [0, 1); injectable so tests can drive the weighted pick. */
export type RandomSource = () => number;

/**
 * Picks an index by weight: the first cumulative weight strictly above the draw. A zero weight never
 * wins, because its cumulative value equals its predecessor's.
 */
export function pickWeighted(cumulative: Float64Array, random: RandomSource): number {
  const total = cumulative[cumulative.length - 1]!;
  const u = random() * total;
  for (let i = 0; i < cumulative.length; i++) {
    if (u < cumulative[i]!) return i;
  }
  // u == total can only happen through rounding: fall back to the last variant with weight.
  for (let i = cumulative.length - 1; i > 0; i--) {
    if (cumulative[i]! > cumulative[i - 1]!) return i;
  }
  return 0;
}

/** An experiment prepared for the hot path: everything assign needs, computed once per change. */
export interface CompiledExperiment {
  experiment: Experiment;
  cumulative: Float64Array;
  ranges: BucketRange[];
  /** Per variant, the response JSON up to the assignmentId value: `{"variant":..,"payload":..,"assignmentId":"`. */
  responsePrefix: string[];
  /** Per variant, `JSON.stringify(key)` (for the exposure's stored form). */
  variantKeyJson: string[];
  /** An OpenFeature (OFREP) evaluation's start, up to its reason's value: `{"key":..,"reason":"`. */
  ofrepHead: string;
  /**
   * Per variant, the rest up to the assignmentId value: `","variant":..,"value":..,"metadata":
   * {"experimentVersion":..,"assignmentId":"` (services/ofrep.ts closes it).
   */
  ofrepTail: string[];
}

export function compileExperiment(experiment: Experiment): CompiledExperiment {
  const weights = experiment.variants.map((v) => v.trafficPercent / 100);
  const cumulative = new Float64Array(weights.length);
  let sum = 0;
  weights.forEach((w, i) => {
    sum += w;
    cumulative[i] = sum;
  });
  return {
    experiment,
    cumulative,
    ranges: bucketRanges(weights.length, 1, weights),
    responsePrefix: experiment.variants.map(
      (v) => `{"variant":${JSON.stringify(v.key)},"payload":${JSON.stringify(v.payload)},"assignmentId":"`,
    ),
    variantKeyJson: experiment.variants.map((v) => JSON.stringify(v.key)),
    ofrepHead: `{"key":${JSON.stringify(experiment.slug)},"reason":"`,
    ofrepTail: experiment.variants.map(
      (v) =>
        `","variant":${JSON.stringify(v.key)},"value":${JSON.stringify(v.payload)},` +
        `"metadata":{"experimentVersion":${experiment.version},"assignmentId":"`,
    ),
  };
}

/** The variant index of one assign call by the experiment's mode (`sticky` overrides it: OFREP's bulk hashes). */
export function assignVariant(
  compiled: CompiledExperiment,
  userId: string,
  random: RandomSource,
  sticky = compiled.experiment.assignment === 'sticky',
): number {
  return sticky ? hashedVariant(compiled, userId) : pickWeighted(compiled.cumulative, random);
}

/**
 * The variant the sticky hash gives `userId`, whatever the experiment's mode: OFREP's bulk evaluation
 * draws random experiments this way too, so a page that polls keeps its variant (ADR 0029).
 */
export function hashedVariant(compiled: CompiledExperiment, userId: string): number {
  const i = chooseVariant(hashV2(compiled.experiment.seed, userId), compiled.ranges);
  // The hash tops out at 0.9999 and the ranges cover [0, 1), so -1 only means float dust at the end.
  return i >= 0 ? i : pickLastWeighted(compiled.cumulative);
}

function pickLastWeighted(cumulative: Float64Array): number {
  return pickWeighted(cumulative, () => 1);
}
