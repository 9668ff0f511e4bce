// What the ingest pipeline hands the store (Store.appendBatch): the results, exposure batches and feedback of one transaction.

import type { DeclaredSums } from './declared.js';
import type { Exposure } from './exposure.js';
import type { IdempotencyRecord } from './idempotency.js';
import type { JsonObject } from './json.js';
import type { OfflineAnswer } from './offline-runs.js';
import type { AssignmentSegment, ResultSegments, TargetSegments } from './segments.js';

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
  /** `metrics` as the request's own parsed object, when it has one: rolled up without parsing `metrics` again. */
  metricValues?: JsonObject | null;
  context: JsonText | null;
  /** The client's own time (ISO 8601, UTC), when it sent one. */
  timestamp: string | null;
  createdAt: string;
  /** Its experiment is analysed per user (sticky): with a userId, its metrics join that user's unit. */
  unit?: boolean;
  /** False: its assignment id was given to a unit that did not enter (ADR 0038): stored, never counted. */
  counted?: false;
  /** The variant its assignmentId was issued for, when that differs from variantKey (flagged). */
  assignedVariant?: string | null;
  /** Its experiment declares segments: its values, and the keys to find in its assignment's (core/segments.ts). */
  segments?: ResultSegments;
  /** Its experiment declares ratios, covariates or caps: the sums to keep (core/pairs.ts). */
  declared?: DeclaredSums | null;
  /** An offline run's result (issue 40): the run, item and trial it answers; such results are never counted. */
  offline?: OfflineAnswer;
}

/** A metric value of late feedback (a number, or true/false as 1/0 of a proportion). */
export interface FeedbackValue {
  metric: string;
  kind: 'mean' | 'proportion';
  value: number;
}

/** Late feedback on one assignment or result: upserted per metric (core/feedback.ts). */
export interface NewFeedback {
  feedbackId: string;
  experimentId: number;
  /** 'a:<the assignment id's UUID>' or 'l:<logId>'. */
  target: string;
  version: number;
  variantKey: string;
  userId: string | null;
  /** The experiment is analysed per user: the values join the user's unit. */
  unit: boolean;
  /** False: about a unit that did not enter (ADR 0038): its rows are stored but never counted. */
  counted?: false;
  values: FeedbackValue[];
  comment: string | null;
  createdAt: string;
  /** Its experiment declares segments: its target's values, and the keys to find in its assignment's. */
  segments?: TargetSegments;
  /** Its experiment declares ratios, covariates or caps: the sums to keep (core/pairs.ts). */
  declared?: DeclaredSums | null;
}

/** The exposures of one experiment version, sealed by the exposure queue: one `exposure_batches` row (ADR 0006). */
export interface ExposureBatch {
  experimentId: number;
  version: number;
  count: number;
  /** The hour they were assigned in (core/time.ts hourOf): their time-series bucket. */
  hour: string;
  /** How many of them went to each variant (for the exposure rollups). */
  variants: Array<{ variantKey: string; n: number }>;
  /** A JSON array of the exposures' stored forms (core/exposure.ts), in the order they were assigned. */
  json: string;
  /** Exposures of a sticky experiment: their distinct users are counted (read from `json` by the store). */
  unit?: boolean;
  /** The segment values of their assign contexts (experiments that declare segments). */
  segments?: AssignmentSegment[];
  /** Assignment ids clients made, of experiments that declare segments: results logged first wait for them. */
  clientIds?: string[];
  /** Some of them had a context (found in `json` when results are read: store/context-index.ts). */
  withContext?: boolean;
}

/** What one group-commit transaction writes. */
export interface WriteBatch {
  results: NewResult[];
  exposures: ExposureBatch[];
  /**
   * Exposures clients made (POST /exposures): each is stored only if its assignment id never was
   * (store/client-exposures.ts), so a retried or repeated send counts once.
   */
  clientExposures?: Exposure[];
  /** Late feedback, committed with the batch (resolved like results: only once committed). */
  feedback?: NewFeedback[];
  /** Idempotency-Key answers of the requests whose results these are (committed with them). */
  idempotencyRecords?: IdempotencyRecord[];
}

/**
 * Per experiment of a batch, the sums its results and feedback say it declares; null when none declares any
 * (the usual batch: the write path then skips pairs and bins altogether).
 */
export function declaredOf(batch: WriteBatch): ((experimentId: number) => DeclaredSums | undefined) | null {
  const byId = new Map<number, DeclaredSums>();
  for (const r of batch.results) if (r.declared) byId.set(r.experimentId, r.declared);
  for (const f of batch.feedback ?? []) if (f.declared) byId.set(f.experimentId, f.declared);
  return byId.size === 0 ? null : (id) => byId.get(id);
}

/** What the store decided as it wrote a batch (Store.appendBatch's answer). */
export interface BatchDecisions {
  /**
   * Per result, in the batch's order: its metric names left out of analysis because the experiment
   * already analyses MAX_METRICS_PER_EXPERIMENT names (null when none; ADR 0014).
   */
  metricsOverCap: Array<string[] | null>;
}

/**
 * Commits a batch in one transaction; resolves only once it is committed (Store.appendBatch), with the
 * store's decisions (a writer that decides nothing, e.g. a test's, may resolve with nothing).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a test's writer is often `async () => {}`
export type Write = (batch: WriteBatch) => Promise<BatchDecisions | undefined | void>;
