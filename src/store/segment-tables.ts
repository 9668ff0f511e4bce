// The segment tables as Kysely sees them (schema.ts gathers them into Database; migrations 011, 018 and
// 019): assign contexts' values per assignment id, results waiting for a client's exposure, and the
// rollup tables' sums per segment key and value (rollup-tables.ts).

import type {
  MetricRollupsTable,
  PairRollupsTable,
  ResultRollupsTable,
  SketchBinsTable,
  UnitRollupsTable,
  UnitSumsTable,
} from './rollup-tables.js';

/** An assign context's value of a declared segment key, per assignment id (migration 011). */
export interface AssignmentSegmentsTable {
  experiment_id: number;
  assignment_id: string;
  segment_key: string;
  value: string;
}

/** A result waiting for its client exposure's value of a segment key (migration 011). */
export interface SegmentPendingTable {
  experiment_id: number;
  assignment_id: string;
  log_id: string;
  segment_key: string;
}

/** Metric sums per segment key and value (migration 011). */
export interface SegmentRollupsTable extends Omit<MetricRollupsTable, 'min_value' | 'max_value'> {
  segment_key: string;
  value: string;
}

/** Results per segment key and value (migration 011). */
export interface SegmentResultsTable extends ResultRollupsTable {
  segment_key: string;
  value: string;
}

/** Results up to `after_seq` were written before results.segments (migration 018): one row. */
export interface SegmentsRecordedTable {
  after_seq: number;
}

/** Per-user running sums per segment value (migration 018). */
export interface SegmentUnitSumsTable extends UnitSumsTable {
  segment_key: string;
  value: string;
}

/** Per segment value: the sums over users the delta method reads (migration 018). */
export interface SegmentUnitRollupsTable extends UnitRollupsTable {
  segment_key: string;
  value: string;
}

/** DDSketch bin counts per segment value (migration 018). */
export interface SegmentSketchBinsTable extends SketchBinsTable {
  segment_key: string;
  value: string;
}

/** Pair sums per segment value (migration 019). */
export interface SegmentPairRollupsTable extends PairRollupsTable {
  segment_key: string;
  value: string;
}
