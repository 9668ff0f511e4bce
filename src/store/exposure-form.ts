// The stored forms of one exposure inside an `exposure_batches` row (ADR 0006, ADR 0009).
import type { JsonObject } from '../core/json.js';

/**
 * - full: `[assignmentId, variantKey, userId, context, createdAt]`, serialized from the parsed request;
 * - request: `[assignmentId, variantKey, createdAt, request]`, where `request` is the assign request's
 *   own JSON text (`{"userId": ..., "context": ...}`), stored as it arrived so the hot path does not
 *   serialize again what the client already serialized.
 * Both kinds may share a batch; readers tell them apart by length.
 */
export type StoredExposure =
  | [assignmentId: string, variantKey: string, userId: string, context: JsonObject | null, createdAt: string]
  | [assignmentId: string, variantKey: string, createdAt: string, request: AssignRequestBody];

/** What an assign request's body holds once validated (AssignBody). */
export interface AssignRequestBody {
  userId: string;
  context?: JsonObject;
}

export interface ExposureFields {
  assignmentId: string;
  variantKey: string;
  userId: string;
  context: JsonObject | null;
  createdAt: string;
}

/**
 * The JSON of one exposure's stored form. With `requestJson` (the request body's text, which must hold
 * only `userId` and optionally `context`, as `isStorableRequestText` checks) that text is stored as it is;
 * without it the parsed fields are serialized. `variantKeyJson` is `JSON.stringify(variantKey)`, computed
 * once per experiment change.
 */
export function storedExposureJson(
  assignmentId: string,
  variantKey: string,
  variantKeyJson: string,
  createdAt: string,
  body: AssignRequestBody,
  requestJson?: string,
): string {
  if (requestJson !== undefined) {
    return `[${JSON.stringify(assignmentId)},${variantKeyJson},${JSON.stringify(createdAt)},${requestJson}]`;
  }
  return JSON.stringify([assignmentId, variantKey, body.userId, body.context ?? null, createdAt]);
}

/**
 * May `text`, the JSON text `body` was parsed from (and validated as), be stored as the exposure's
 * request? Only when:
 * - the body has no properties but `userId` and `context` (extra properties are accepted by the API
 *   but are not part of an exposure);
 * - the text has no `\u` escape. What was checked is the parsed body, and a key written twice leaves
 *   only its last value there; an earlier, shadowed one was never checked. Without escapes, no string
 *   in the text can hold a NUL or a lone surrogate (the text was decoded from UTF-8, and raw control
 *   characters are not JSON), so the stored text has nothing PostgreSQL refuses, whatever it shadows.
 */
export function isStorableRequestText(body: object, text: string): boolean {
  for (const key in body) {
    if (key !== 'userId' && key !== 'context') return false;
  }
  return !text.includes('\\u');
}

export function readStoredExposure(stored: StoredExposure): ExposureFields {
  if (stored.length === 4) {
    const [assignmentId, variantKey, createdAt, request] = stored;
    return { assignmentId, variantKey, userId: request.userId, context: request.context ?? null, createdAt };
  }
  const [assignmentId, variantKey, userId, context, createdAt] = stored;
  return { assignmentId, variantKey, userId, context, createdAt };
}
