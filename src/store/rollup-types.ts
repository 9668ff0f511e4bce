// The shapes rollups are read in: an experiment's live rollups, one segment key's, and the hourly ones
// of the time series: what the Store's rollup reads answer (store.ts), for both stores.

import type { PairRollup } from '../core/pairs.js';
import type { ExposureRollup, HourlyRollup, MetricRollup } from '../core/rollups.js';
import type { SegmentPairRollup } from '../core/segment-pairs.js';
import type { SegmentSketchMove, SegmentUnitRollup } from '../core/segment-units.js';
import type { SegmentCount, SegmentRollup } from '../core/segments.js';
import type { SketchRow } from '../core/sketch-rollups.js';
import type { UnitBin } from '../core/unit-bins.js';
import type { HourlyUnitRollup } from '../core/unit-hours.js';
import type { UnitRollup } from '../core/units.js';

/** One segment key's rollups, per value, version and variant (Store.readSegments). */
export interface SegmentRows {
  metrics: SegmentRollup[];
  counts: SegmentCount[];
  /** Per-user sums per value (sticky experiments, core/segment-units.ts); empty for random ones. */
  units: SegmentUnitRollup[];
  /** DDSketch bin counts per value of the numeric values `metrics` sums (zero counts left out). */
  sketches: SegmentSketchMove[];
  /** Ratios' and covariates' sums per value (core/segment-pairs.ts). */
  pairs: SegmentPairRollup[];
}

export interface Rollups {
  metrics: MetricRollup[];
  exposures: ExposureRollup[];
  /** Per-user sums of sticky experiments (core/units.ts); empty for random ones. */
  units: UnitRollup[];
  /** Results per version and variant key (keys that are not variants included). */
  results: ExposureRollup[];
  /** Distinct users exposed per version and variant (sticky experiments; empty for random ones). */
  exposureUsers: ExposureRollup[];
  /** DDSketch bin counts of the numeric values metrics sums (stats/sketch.ts sketchOf reads them). */
  sketches: SketchRow[];
  /** Ratios' and covariates' sums per variant and unit (core/pairs.ts; migration 019). */
  pairs: PairRollup[];
  /** Sticky experiments' users of capped metrics by bin (core/unit-bins.ts; empty bins left out). */
  unitBins: UnitBin[];
}

/** Sketch bin counts of one hour. */
export interface HourlySketch extends SketchRow {
  hour: string;
}

/** The hourly rollups of one experiment (the time series), oldest hour first. */
export interface HourlyData {
  metrics: HourlyRollup[];
  exposures: HourlyExposure[];
  /** How much each hour's writes moved unit_rollups (sticky experiments; core/unit-hours.ts). */
  units: HourlyUnitRollup[];
  sketches: HourlySketch[];
  /** How much each hour's writes moved pair_rollups (`hour` set). */
  pairs: PairRollup[];
}

/** Exposures of one hour (the time series). */
export interface HourlyExposure {
  hour: string;
  version: number;
  variantKey: string;
  n: number;
}
