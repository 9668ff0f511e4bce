// Page cursors: an opaque token for "after this position", the same scheme for every paginated list.
import { ValidationError } from './errors.js';

/** `kind` tells the lists apart, so a cursor of one list is refused by another. */
export function encodeCursor(kind: string, position: number): string {
  return Buffer.from(`${kind}:${position}`).toString('base64url');
}

export function decodeCursor(kind: string, cursor: string): number {
  const m = /^([a-z]):(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || m[1] !== kind) {
    throw new ValidationError('cursor is not valid: pass the nextCursor of a previous page unchanged');
  }
  return Number(m[2]);
}

/** A position in an order by time then id (keyset pagination of rows with no sequence number). */
export interface TimeIdPosition {
  /** ISO 8601, millisecond precision. */
  at: string;
  id: string;
}

/** `kind:<epoch ms>.<id>`, in the same opaque wrapping as encodeCursor. */
export function encodeTimeIdCursor(kind: string, position: TimeIdPosition): string {
  return Buffer.from(`${kind}:${Date.parse(position.at)}.${position.id}`).toString('base64url');
}

/** The last millisecond of year 9999: later times have no four-digit ISO form the databases compare. */
const LAST_MS = 253_402_300_799_999;

/** The position a cursor of `kind` names; ids are letters, digits and dashes (UUIDs), else 400. */
export function decodeTimeIdCursor(kind: string, cursor: string): TimeIdPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^([a-z]):(\d{1,15})\.([0-9A-Za-z-]{1,64})$/.exec(text);
  if (!m || m[1] !== kind || Number(m[2]) > LAST_MS) {
    throw new ValidationError('cursor is not valid: pass the nextCursor of a previous page unchanged');
  }
  return { at: new Date(Number(m[2])).toISOString(), id: m[3]! };
}
