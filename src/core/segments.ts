// Segments: context keys an experiment declares (`segments`), whose values split its results for an
// exploratory read of the analysis (GET …/analysis?segment=key). Pure: validation, a context's value of a
// key, and the write-time rollups per segment value (n, sum, sum of squares, like core/rollups.ts).
import { ValidationError } from './errors.js';
import type { JsonObject } from './json.js';
import { metricKind, type RolledResult } from './rollups.js';
import {
  addSegmentUnitAndBin,
  mergeSegmentUnitDeltas,
  type SegmentRollup,
  SegmentSketches,
  type SegmentUnitDelta,
} from './segment-units.js';

export type { SegmentRollup };

export const MAX_SEGMENTS = 5;
export const SEGMENT_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Values longer than this are cut (a segment value is a label, not a document). */
export const MAX_SEGMENT_VALUE = 200;
/** The most segment values an analysis shows one by one (by results); the rest are merged as OTHER_SEGMENT. */
export const TOP_SEGMENTS = 50;
export const OTHER_SEGMENT = '(other)';
export const SEGMENT_NOTE =
  'exploratory: no verdict per segment; with many segments some differences are chance (multiple comparisons)';

/** The `segments` field of a create or update: up to 5 unique context keys of A-Z a-z 0-9 . _ -. */
export function validateSegments(segments: unknown): string[] {
  if (!Array.isArray(segments) || segments.length > MAX_SEGMENTS) {
    throw new ValidationError(`segments must be an array of at most ${MAX_SEGMENTS} context keys`);
  }
  const seen = new Set<string>();
  for (const [i, key] of segments.entries()) {
    if (typeof key !== 'string' || !SEGMENT_KEY_PATTERN.test(key)) {
      throw new ValidationError(
        `segments[${i}] must be a context key of 1-64 characters of A-Z a-z 0-9 . _ -`,
      );
    }
    if (seen.has(key)) throw new ValidationError(`segments[${i}] '${key}' is declared twice`);
    seen.add(key);
  }
  return [...segments] as string[];
}

/**
 * A context's value of `key` as a segment value: strings as they are (cut to MAX_SEGMENT_VALUE), numbers
 * and booleans as their JSON text. Anything else (absent, null, objects, arrays, '') has no value.
 */
export function segmentValue(context: JsonObject | null | undefined, key: string): string | undefined {
  if (!context || !Object.hasOwn(context, key)) return undefined;
  const v = context[key];
  if (typeof v === 'string') return v === '' ? undefined : v.slice(0, MAX_SEGMENT_VALUE);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** A context's values of the declared keys it has (null when none). */
export function segmentValues(
  context: JsonObject | null | undefined,
  keys: readonly string[],
): Record<string, string> | null {
  const out: Record<string, string> = {};
  let any = false;
  for (const key of keys) {
    const value = segmentValue(context, key);
    if (value !== undefined) {
      out[key] = value;
      any = true;
    }
  }
  return any ? out : null;
}

/** The segment values of an assignment, kept so that results naming it find them (store: assignment_segments). */
export interface AssignmentSegment {
  experimentId: number;
  assignmentId: string;
  key: string;
  value: string;
}

/** The assignment segments of exposures (those with values). */
export function assignmentSegmentsOf(
  exposures: Iterable<{
    experimentId: number;
    assignmentId: string;
    segments?: Record<string, string> | null;
  }>,
): AssignmentSegment[] {
  const out: AssignmentSegment[] = [];
  for (const e of exposures) {
    if (!e.segments) continue;
    for (const key in e.segments) {
      out.push({ experimentId: e.experimentId, assignmentId: e.assignmentId, key, value: e.segments[key]! });
    }
  }
  return out;
}

/** Results per segment value, version and variant (segment_results). */
export interface SegmentCount {
  experimentId: number;
  key: string;
  value: string;
  version: number;
  variantKey: string;
  n: number;
}

/** A result as the segment rollups see it: its rollup view and its value of each declared key it has. */
export interface SegmentedResult {
  rolled: RolledResult;
  segments: Record<string, string>;
}

/**
 * Sums results per segment key and value, version, variant, metric and kind, and counts them; with each
 * value's user's delta (results joining a user's unit) and sketch bin (numbers), core/segment-units.ts,
 * added to `moves` (feedback's, when a batch has both), users' deltas merged.
 */
export function rollUpSegments(
  results: Iterable<SegmentedResult>,
  moves: { units: SegmentUnitDelta[]; sketches: SegmentSketches } = {
    units: [],
    sketches: new SegmentSketches(),
  },
): {
  metrics: SegmentRollup[];
  counts: SegmentCount[];
  units: SegmentUnitDelta[];
  sketches: SegmentSketches;
} {
  const metrics = new Map<string, SegmentRollup>();
  const counts = new Map<string, SegmentCount>();
  for (const { rolled: r, segments } of results) {
    for (const key in segments) {
      const value = segments[key]!;
      const base = `${r.experimentId}\u0000${key}\u0000${value}\u0000${r.version}\u0000${r.variantKey}`;
      const count = counts.get(base);
      if (count) count.n += 1;
      else {
        counts.set(base, {
          experimentId: r.experimentId,
          key,
          value,
          version: r.version,
          variantKey: r.variantKey,
          n: 1,
        });
      }
      const m = r.metrics;
      if (!m) continue;
      for (const metric in m) {
        const v = m[metric];
        const kind = metricKind(v);
        if (kind === undefined || r.overCap?.has(metric)) continue;
        const x = kind === 'mean' ? (v as number) : v ? 1 : 0;
        const k = `${base}\u0000${metric}\u0000${kind}`;
        let acc = metrics.get(k);
        if (acc === undefined) {
          acc = {
            experimentId: r.experimentId,
            key,
            value,
            version: r.version,
            variantKey: r.variantKey,
            metric,
            kind,
            n: 0,
            sum: 0,
            sumSquares: 0,
          };
          metrics.set(k, acc);
        }
        acc.n += 1;
        acc.sum += x;
        acc.sumSquares += x * x;
        addSegmentUnitAndBin(moves, r, key, value, metric, kind, x, 1, r.unitUserId);
      }
    }
  }
  return {
    metrics: [...metrics.values()],
    counts: [...counts.values()],
    units: mergeSegmentUnitDeltas(moves.units),
    sketches: moves.sketches,
  };
}

/** A result's segment values as the result service sees them; the store looks up the rest when it commits. */
export interface ResultSegments {
  /** Values from the result's own context. */
  values: Record<string, string>;
  /** Declared keys its own context has no value of, to find in its assignment's segments. */
  lookup: string[];
  /**
   * Its assignment id is a client's (POST /exposures): the exposure may come after the result, so a key
   * not found yet waits for it (segment_pending). A server-issued id's exposure is never later than it.
   */
  wait: boolean;
}

/** The segments of a result of an experiment declaring `keys` (undefined when it declares none). */
export function resultSegments(
  context: JsonObject | null | undefined,
  keys: readonly string[],
  assignment: { id: string; clientMade: boolean } | undefined,
): ResultSegments | undefined {
  if (keys.length === 0) return undefined;
  const values: Record<string, string> = {};
  const lookup: string[] = [];
  for (const key of keys) {
    const value = segmentValue(context, key);
    if (value !== undefined) values[key] = value;
    else if (assignment !== undefined) lookup.push(key);
  }
  return { values, lookup, wait: assignment?.clientMade === true };
}

/**
 * The segments of feedback's target (an experiment declaring segments): a result's own values and the keys
 * to find in its assignment's, or an assignment's keys to find. Found when the feedback commits; a key
 * whose value is not stored then (a client's exposure still to come) counts it in no segment.
 */
export interface TargetSegments {
  values: Record<string, string>;
  lookup: string[];
  /** The assignment whose stored values `lookup` names (null: none, so no lookup). */
  assignmentId: string | null;
}

/** The segments of feedback on a result (its context and assignment id as stored) or on an assignment. */
export function targetSegments(
  keys: readonly string[],
  target: { context: JsonObject | null; assignmentId: string | null } | { assignmentId: string },
): TargetSegments | undefined {
  const context = 'context' in target ? target.context : null;
  const assignmentId = target.assignmentId;
  const found = resultSegments(
    context,
    keys,
    assignmentId === null ? undefined : { id: assignmentId, clientMade: false },
  );
  return found && { values: found.values, lookup: found.lookup, assignmentId };
}
