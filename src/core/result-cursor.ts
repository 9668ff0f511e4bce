// The cursor of a page of results: opaque to clients, tied to the order (and sorted metric) it was made for.
import { ValidationError } from './errors.js';

/**
 * Where a page ends, for the next one: the cursor says the order it was made for, so a cursor of one
 * order (or of another metric) is refused by another. `r:<seq>` (oldest first, as before issue 26),
 * `d:<seq>` (newest first), `v:<a|d>:<seq>:<value>:<metric>` (by a metric's value).
 */
export interface ResultPosition {
  order: 'asc' | 'desc';
  seq: number;
  /** Sorted by this metric's value: the value at seq. */
  metric?: { name: string; value: number };
}

export function encodeCursor(p: ResultPosition): string {
  const text = p.metric
    ? `v:${p.order === 'desc' ? 'd' : 'a'}:${p.seq}:${p.metric.value}:${p.metric.name}`
    : `${p.order === 'desc' ? 'd' : 'r'}:${p.seq}`;
  return Buffer.from(text).toString('base64url');
}

const INVALID_CURSOR = 'cursor is not valid: pass the nextCursor of a previous page unchanged';

function describe(order: 'asc' | 'desc', metric: string | undefined): string {
  return metric === undefined ? `order=${order}` : `sort=metric with metric '${metric}' and order=${order}`;
}

/** The position a cursor names, which must have been made for `order` (and the sorted metric, if any). */
export function decodeCursor(cursor: string, order: 'asc' | 'desc', sortedBy?: string): ResultPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const byTime = /^([rd]):(\d{1,15})$/.exec(text);
  const byValue = /^v:([ad]):(\d{1,15}):([^:]{1,40}):(.+)$/s.exec(text);
  let made: ResultPosition;
  if (byTime) made = { order: byTime[1] === 'd' ? 'desc' : 'asc', seq: Number(byTime[2]) };
  else if (byValue && Number.isFinite(Number(byValue[3]))) {
    const value = Number(byValue[3]);
    made = {
      order: byValue[1] === 'd' ? 'desc' : 'asc',
      seq: Number(byValue[2]),
      metric: { name: byValue[4]!, value },
    };
  } else throw new ValidationError(INVALID_CURSOR);
  if (made.order !== order || made.metric?.name !== sortedBy) {
    throw new ValidationError(
      `cursor was made for ${describe(made.order, made.metric?.name)}, not ${describe(order, sortedBy)}: pass the same order and sort as the page it came from`,
    );
  }
  return made;
}
