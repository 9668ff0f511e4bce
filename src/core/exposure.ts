// An exposure (one assignment, as recorded) and its stored form inside an `exposure_batches` row (ADR 0006).
import type { JsonObject } from './json.js';

export interface Exposure {
  assignmentId: string;
  experimentId: number;
  /** The experiment version the assignment was drawn under. */
  version: number;
  variantKey: string;
  userId: string;
  context: JsonObject | null;
  createdAt: string;
  /** Its experiment is sticky: its user is counted once per version (core/exposure-users.ts). Not stored. */
  unit?: boolean;
  /** Its context's values of the experiment's declared segment keys (core/segments.ts). Not in the stored form. */
  segments?: Record<string, string> | null;
  /** A client made it (POST /exposures) for an experiment that declares segments: results may wait for it. */
  byClient?: boolean;
}

/**
 * The stored form: `[assignmentId, variantKey, userId, context, createdAt]`. The experiment and version
 * are the batch row's, so they are not repeated per exposure.
 */
export type StoredExposure = [
  assignmentId: string,
  variantKey: string,
  userId: string,
  context: JsonObject | null,
  createdAt: string,
];

/** The JSON text of the exposure's stored form. */
export function encodeExposure(e: Exposure): string {
  const stored: StoredExposure = [e.assignmentId, e.variantKey, e.userId, e.context, e.createdAt];
  return JSON.stringify(stored);
}

/**
 * Reads one element of a batch row's array back as an exposure of `experimentId` and `version`.
 * Besides the stored form, it reads the 4-element form some earlier releases wrote (ADR 0009, no longer
 * written): `[assignmentId, variantKey, createdAt, request]`, where `request` is the assign request's own
 * body, `{"userId": ..., "context": ...}`. The lengths tell them apart.
 */
export function decodeExposure(
  stored: StoredExposure | EarlierRequestForm,
  experimentId: number,
  version: number,
): Exposure {
  if (stored.length === 4) {
    const [assignmentId, variantKey, createdAt, request] = stored;
    const context = request.context ?? null;
    return { assignmentId, experimentId, version, variantKey, userId: request.userId, context, createdAt };
  }
  const [assignmentId, variantKey, userId, context, createdAt] = stored;
  return { assignmentId, experimentId, version, variantKey, userId, context, createdAt };
}

/** The exposures of one batch row: `json` is its array of stored forms (either form, mixed). */
export function decodeExposureBatch(json: string, experimentId: number, version: number): Exposure[] {
  const stored = JSON.parse(json) as Array<StoredExposure | EarlierRequestForm>;
  return stored.map((e) => decodeExposure(e, experimentId, version));
}

/** Read only: see decodeExposure. */
type EarlierRequestForm = [
  assignmentId: string,
  variantKey: string,
  createdAt: string,
  request: { userId: string; context?: JsonObject },
];
