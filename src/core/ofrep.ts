// OpenFeature Remote Evaluation Protocol (OFREP 0.3.0) words and the ids of bulk evaluations. Pure.
import { createHash } from 'node:crypto';

/** The error codes OFREP answers with (`errorCode`): only the specification's. */
export type OfrepErrorCode =
  | 'PARSE_ERROR'
  | 'TARGETING_KEY_MISSING'
  | 'INVALID_CONTEXT'
  | 'FLAG_NOT_FOUND'
  | 'GENERAL';

/**
 * The UUID of a sticky flag's assignment id in a bulk evaluation: made from the experiment, its version
 * and the user (RFC 9562 version 8, "custom"), so evaluating again gives the same answer byte for byte
 * (its ETag then answers 304) and posting the id from several sessions counts one exposure (ADR 0029).
 */
export function stableUuid(experimentId: number, version: number, userId: string): string {
  const h = createHash('sha256').update(`${experimentId}\n${version}\n${userId}`).digest('hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
