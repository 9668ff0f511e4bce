// Quantile sketches (DDSketch, relative accuracy 1%) kept as bin counts: a value maps to a bin (its sign and
// the index of the logarithmic bucket of its magnitude), and a sketch is the count of values per bin. Counts
// add, so the store keeps them as rows it increments in the same transaction as the results (no
// read-modify-write of a serialized sketch, and any number of writers), and a sketch of any set of rows is
// their counts summed. Pure; @datadog/sketches-js owns the mapping and the quantile search.
import { DDSketch } from '@datadog/sketches-js';

/** The guarantee: every quantile read from a sketch is within 1% (relative) of a value of that rank. */
export const SKETCH_RELATIVE_ACCURACY = 0.01;

/** 1: a positive value's bin; -1: a negative value's (the bin of its magnitude); 0: zero (key 0). */
export type SketchSide = 1 | -1 | 0;

export interface SketchBin {
  side: SketchSide;
  key: number;
  count: number;
}

const reference = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
const mapping = reference.mapping;

/** The bin a value is counted in, as DDSketch.accept places it. */
export function sketchBin(value: number): { side: SketchSide; key: number } {
  if (value > mapping.minPossible) return { side: 1, key: mapping.key(value) };
  if (value < -mapping.minPossible) return { side: -1, key: mapping.key(-value) };
  return { side: 0, key: 0 };
}

/** A DDSketch holding these bins' counts (bins may repeat: their counts add). */
export function sketchOf(bins: Iterable<SketchBin>): DDSketch {
  const sketch = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
  for (const b of bins) {
    if (!(b.count > 0)) continue;
    if (b.side === 1) sketch.store.add(b.key, b.count);
    else if (b.side === -1) sketch.negativeStore.add(b.key, b.count);
    else sketch.zeroCount += b.count;
    sketch.count += b.count;
  }
  return sketch;
}
