// The tables as Kysely sees them (shared by both dialects): the only place that names columns, with the store.
// The rollup and segment tables are in rollup-tables.ts and segment-tables.ts; Database gathers them all.
import type { Generated } from 'kysely';
import type {
  BucketExposuresTable,
  BucketPairRollupsTable,
  BucketRollupsTable,
  BucketSketchBinsTable,
  BucketUnitRollupsTable,
  ExposureRollupsTable,
  ExposureUsersTable,
  MetricRollupsTable,
  PairRollupsTable,
  ResultRollupsTable,
  SketchBinsTable,
  UnitBinsTable,
  UnitRollupsTable,
  UnitSumsTable,
} from './rollup-tables.js';
import type {
  AssignmentSegmentsTable,
  SegmentPairRollupsTable,
  SegmentPendingTable,
  SegmentResultsTable,
  SegmentRollupsTable,
  SegmentSketchBinsTable,
  SegmentsRecordedTable,
  SegmentUnitRollupsTable,
  SegmentUnitSumsTable,
} from './segment-tables.js';

/** Timestamps are ISO strings in SQLite and Date objects from PostgreSQL; JSON is text or parsed. */
type Time = string | Date;

/** A time column as ISO 8601 text, whichever dialect read it. */
export function isoTime(value: Time): string {
  return value instanceof Date ? value.toISOString() : value;
}
type Json = string | null;

export interface ExperimentsTable {
  id: Generated<number>;
  slug: string;
  name: string;
  description: string;
  status: string;
  assignment: string;
  seed: string;
  variants: string;
  /** JSON array of metric definitions (migration 006). */
  metrics: Generated<string>;
  /** JSON array of segment keys (migration 011). */
  segments: Generated<string>;
  /** What the guardrail monitor does on a failure: 'notify' or 'pause' (migration 016). */
  guardrail_action: Generated<string>;
  /** Units per variant before the monitor judges (migration 016). */
  minimum_units: Generated<number>;
  /** Who enters (migration 022, ADR 0038): JSON condition or NULL, percent, JSON layer or NULL, JSON array, key or NULL. */
  targeting: string | null;
  coverage: Generated<number>;
  layer: string | null;
  overrides: Generated<string>;
  default_variant: string | null;
  /** JSON {variant, note, decidedAt} or NULL (migration 023). */
  decision: string | null;
  /** While released: the variant everyone is served (migration 028, issue 38). */
  released_variant: string | null;
  version: number;
  created_at: Time;
  updated_at: Time;
}

export interface ExperimentVersionsTable {
  experiment_id: number;
  version: number;
  variants: string;
  created_at: Time;
}

export interface ResultsTable {
  seq: Generated<number>;
  log_id: string;
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  known_variant: number;
  user_id: string | null;
  assignment_id: string | null;
  input: Json;
  output: Json;
  metrics: Json;
  context: Json;
  client_timestamp: Time | null;
  created_at: Time;
  /** JSON array of the metric names not rolled up because of the experiment's cap (migration 004). */
  metrics_over_cap: string | null;
  /** The variant the result's assignmentId was issued for, when it differs from variant_key (migration 006). */
  assigned_variant: string | null;
  /**
   * JSON object: the segment values that counted it (a key waiting for its client's exposure: null); null:
   * none (migration 018). Generated: rows inserted by hand in tests may leave it out.
   */
  segments: Generated<string | null>;
  /** An offline run's result (migration 031): the run, the dataset item and the trial it answers; null online. */
  run_id: Generated<string | null>;
  item_id: Generated<string | null>;
  trial: Generated<number | null>;
}

/** Offline runs (migration 031): an experiment's variants over one version of a dataset. */
export interface RunsTable {
  id: string;
  experiment_id: number;
  dataset_id: string;
  dataset_name: string;
  dataset_version: number;
  /** JSON array of variant keys. */
  variants: string;
  trials: number;
  items: number;
  created_at: Time;
}

/** Exposures as releases before migration 003 wrote them, one row each; read, no longer written. */
export interface LegacyExposuresTable {
  seq: Generated<number>;
  assignment_id: string;
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  user_id: string;
  context: Json;
  created_at: Time;
}

/** The exposures of one write batch for one experiment version (migration 003). */
export interface ExposureBatchesTable {
  seq: Generated<number>;
  experiment_id: number;
  experiment_version: number;
  count: number;
  /** JSON array of the exposures' stored forms (core/exposure.ts), in assignment order. */
  exposures: string;
}

export interface ExperimentRevisionTable {
  id: number;
  revision: number;
}

/** Managed API keys (migration 005): a keyed hash of the secret, never the secret. */
export interface ApiKeysTable {
  id: string;
  name: string;
  /** JSON array of scopes. */
  scopes: string;
  /** JSON array of slugs; null: every experiment. */
  experiments: string | null;
  prefix: string;
  hash: string;
  rate_limit_per_second: number | null;
  created_at: Time;
  last_used_at: Time | null;
  revoked_at: Time | null;
}

/** The history (migration 014): one row per event, never deleted. JSON columns are text on SQLite. */
export interface EventsTable {
  seq: Generated<number>;
  id: string;
  type: string;
  at: Time;
  actor: unknown;
  experiment: string | null;
  data: unknown;
}

/** Webhook endpoints (migration 015). */
export interface WebhooksTable {
  id: string;
  url: string;
  events: unknown;
  description: string | null;
  format: string;
  secret: string;
  enabled: number | boolean;
  created_at: Time;
  updated_at: Time;
  /** Migration 020: the secret a rotation replaced, and the end of its grace period. */
  previous_secret: string | null;
  previous_secret_until: Time | null;
  /** Migration 025: the last attempt to this endpoint (when, 'ok' or 'failing', its error). */
  last_delivery_at?: Time | null;
  last_status?: string | null;
  last_error?: string | null;
}

/** Saved groups (migration 021): a named list of unit ids, kept whole as one JSON array. */
export interface SavedGroupsTable {
  key: string;
  description: string;
  values: unknown;
  size: number;
  created_at: Time;
  updated_at: Time;
}

/** One event's delivery to one endpoint (migration 015). */
export interface WebhookDeliveriesTable {
  webhook_id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  last_response_status: number | null;
  next_attempt_at: Time | null;
  delivered_at: Time | null;
  created_at: Time;
  claimed_by: string | null;
  claimed_until: Time | null;
  /** Migration 025: why the last attempt failed, in words; null: none yet, or delivered. */
  last_error?: string | null;
}

/** The guardrail monitor's last findings per experiment (migration 016). */
export interface MonitorStatesTable {
  experiment_id: number;
  state: unknown;
  updated_at: Time;
}

/** Rollouts (migration 027): the rollout as JSON, its state, step and version (compare and set) in columns. */
export interface RolloutsTable {
  id: string;
  experiment_id: number;
  state: string;
  step: number;
  version: number;
  rollout: unknown;
  created_at: Time;
  updated_at: Time;
}

/** Spans received on /v1/traces (migration 029), kept for the trace window: the span as JSON text. */
export interface TraceSpansTable {
  trace_id: string;
  span_id: string;
  span: string;
}

/** One row per trace with spans kept (migration 029): how many, and when the last export touched it. */
export interface TracesTable {
  trace_id: string;
  spans: number;
  last_at: Time;
}

/** A run of a trace that became a result (migration 029). */
export interface TraceRunsTable {
  trace_id: string;
  run_key: string;
  experiment_id: number;
  log_id: string;
  span_count: number;
  /** JSON text: the values last written as feedback. */
  reading: string;
  /** JSON text: the results view's summary (core/trace-result.ts TraceSummary). */
  summary: string;
  /** 1 once its trace's spans left the window: later spans no longer change it. */
  sealed: number;
  updated_at: Time;
}

/** Datasets (migration 030, ADR 0046): one row each, its current version and item count. */
export interface DatasetsTable {
  id: string;
  name: string;
  description: string;
  version: number;
  items: number;
  created_at: Time;
  updated_at: Time;
}

/** One item's content from version `added_in` until `removed_in` (null: current; migration 030). */
export interface DatasetItemsTable {
  dataset_id: string;
  item_id: string;
  added_in: number;
  removed_in: number | null;
  /** The order the item was first added in (kept when it changes). */
  position: number;
  /** JSON text as sent; expected and metadata null when absent. */
  input: string;
  expected: string | null;
  metadata: string | null;
}

/** Idempotency-Key answers (migration 005), per key owner. */
export interface IdempotencyKeysTable {
  owner: string;
  key: string;
  fingerprint: string;
  /** 'pending' (claimed, running) or 'done' (answer stored). */
  state: string;
  status: number | null;
  answer: string | null;
  created_at: Time;
  /**
   * The instance that claimed a pending row (PostgreSQL; migration 010): its claim holds while that
   * instance holds its lock (instance-lock.ts). Null in rows written before 010 and in answers made without a claim.
   */
  instance: number | null;
}

/** Late feedback, one row per target and metric (migration 006). */
export interface FeedbackTable {
  experiment_id: number;
  /** 'a:<the assignment id's UUID>' or 'l:<logId>'. */
  target: string;
  metric: string;
  feedback_id: string;
  experiment_version: number;
  variant_key: string;
  user_id: string | null;
  kind: string;
  value: number;
  over_cap: number;
  comment: string | null;
  created_at: Time;
  updated_at: Time;
  /** JSON object: the segment values counting this value in segment_rollups; null: none (migration 013). */
  segments: string | null;
}

/** The assignment ids (UUIDs) of exposures clients sent, each stored once (migration 009). */
export interface ExposureIdsTable {
  experiment_id: number;
  assignment_uuid: string;
}

/** The context an assignment was made with, by the assignment id's UUID (migration 012). */
export interface AssignmentContextsTable {
  experiment_id: number;
  assignment_uuid: string;
  /** JSON text of the context object. */
  context: string;
}

export interface Database {
  segment_pair_rollups: SegmentPairRollupsTable;
  pair_rollups: PairRollupsTable;
  bucket_pair_rollups: BucketPairRollupsTable;
  unit_bins: UnitBinsTable;
  segments_recorded: SegmentsRecordedTable;
  segment_unit_sums: SegmentUnitSumsTable;
  segment_unit_rollups: SegmentUnitRollupsTable;
  segment_sketch_bins: SegmentSketchBinsTable;
  assignment_segments: AssignmentSegmentsTable;
  segment_pending: SegmentPendingTable;
  segment_rollups: SegmentRollupsTable;
  segment_results: SegmentResultsTable;
  exposure_users: ExposureUsersTable;
  exposure_ids: ExposureIdsTable;
  assignment_contexts: AssignmentContextsTable;
  exposure_user_rollups: ResultRollupsTable;
  bucket_unit_rollups: BucketUnitRollupsTable;
  sketch_bins: SketchBinsTable;
  bucket_sketch_bins: BucketSketchBinsTable;
  result_rollups: ResultRollupsTable;
  unit_sums: UnitSumsTable;
  unit_rollups: UnitRollupsTable;
  feedback: FeedbackTable;
  bucket_rollups: BucketRollupsTable;
  bucket_exposures: BucketExposuresTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  monitor_states: MonitorStatesTable;
  rollouts: RolloutsTable;
  trace_spans: TraceSpansTable;
  traces: TracesTable;
  trace_runs: TraceRunsTable;
  runs: RunsTable;
  datasets: DatasetsTable;
  dataset_items: DatasetItemsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhooks: WebhooksTable;
  saved_groups: SavedGroupsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  metric_rollups: MetricRollupsTable;
  exposure_rollups: ExposureRollupsTable;
  experiment_revision: ExperimentRevisionTable;
  experiments: ExperimentsTable;
  experiment_versions: ExperimentVersionsTable;
  results: ResultsTable;
  exposure_batches: ExposureBatchesTable;
  exposures: LegacyExposuresTable;
}
