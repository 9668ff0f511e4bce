// Client times: ISO 8601 in, UTC ISO 8601 with milliseconds out, years 0001-9999 only, so both
// databases store, compare and return the same text (and neither sees a year it cannot hold).
import { ValidationError } from './errors.js';

const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** `value` as `YYYY-MM-DDTHH:mm:ss.sssZ`; ValidationError naming `field` when it is not a time in 0001-9999. */
export function normalizeTime(value: string, field: string): string {
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new ValidationError(`${field} must be an ISO 8601 date-time (got '${value}')`);
  if (t < EARLIEST || t > LATEST) {
    throw new ValidationError(`${field} must be between years 0001 and 9999 in UTC (got '${value}')`);
  }
  return new Date(t).toISOString();
}

/** The start of the UTC hour of an ISO 8601 UTC time (`2025-06-02T09:00:00.000Z`): a time-series bucket. */
export function hourOf(iso: string): string {
  return `${iso.slice(0, 13)}:00:00.000Z`;
}

/** The start of the UTC day of a bucket or time (`2025-06-02T00:00:00.000Z`). */
export function dayOf(iso: string): string {
  return `${iso.slice(0, 10)}T00:00:00.000Z`;
}

/** The start of the UTC minute of an ISO 8601 UTC time (`2025-06-02T09:14:00.000Z`): a minute-series bucket. */
export function minuteOf(iso: string): string {
  return `${iso.slice(0, 16)}:00.000Z`;
}
