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
