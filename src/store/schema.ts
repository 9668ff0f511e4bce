// The tables as Kysely sees them (shared by both dialects): the only place that names columns, with the store.
import type { Generated } from 'kysely';

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

export interface MetricRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  metric: string;
  kind: string;
  n: number;
  sum: number;
  sum_squares: number;
}

export interface ExposureRollupsTable {
  experiment_id: number;
  experiment_version: number;
  variant_key: string;
  n: number;
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
}

export interface Database {
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  metric_rollups: MetricRollupsTable;
  exposure_rollups: ExposureRollupsTable;
  experiment_revision: ExperimentRevisionTable;
  experiments: ExperimentsTable;
  experiment_versions: ExperimentVersionsTable;
  results: ResultsTable;
  exposure_batches: ExposureBatchesTable;
  exposures: LegacyExposuresTable;
}
