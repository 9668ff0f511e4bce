// What the ingest pipeline hands the store: the results and exposure batches of one transaction.
import type { IdempotencyRecord } from '../core/idempotency.js';

/** A JSON object serialized at once, so the parsed request can be collected while the commit is awaited. */
export type JsonText = string;

/** A result to be stored, as the result service builds it. */
export interface NewResult {
  logId: string;
  experimentId: number;
  /** The experiment version the result was logged under. */
  version: number;
  variantKey: string;
  /** False when variantKey names no variant of the experiment: stored all the same, flagged. */
  knownVariant: boolean;
  userId: string | null;
  assignmentId: string | null;
  input: JsonText | null;
  output: JsonText | null;
  metrics: JsonText | null;
  context: JsonText | null;
  /** The client's own time (ISO 8601, UTC), when it sent one. */
  timestamp: string | null;
  createdAt: string;
  /**
   * Set by the store as it writes the result: its metric names left out of analysis because the
   * experiment already analyses MAX_METRICS_PER_EXPERIMENT names (null when none; ADR 0014).
   */
  metricsOverCap?: string[] | null;
}

/** The exposures of one experiment version, sealed by the exposure queue: one `exposure_batches` row (ADR 0006). */
export interface ExposureBatch {
  experimentId: number;
  version: number;
  count: number;
  /** How many of them went to each variant (for the exposure rollups). */
  variants: Array<{ variantKey: string; n: number }>;
  /** A JSON array of the exposures' stored forms (core/exposure.ts), in the order they were assigned. */
  json: string;
}

/** What one group-commit transaction writes. */
export interface WriteBatch {
  results: NewResult[];
  exposures: ExposureBatch[];
  /** Idempotency-Key answers of the requests whose results these are (committed with them). */
  answers?: IdempotencyRecord[];
}

/** Commits a batch in one transaction; resolves only once it is committed (Store.appendBatch). */
export type Write = (batch: WriteBatch) => Promise<void>;
