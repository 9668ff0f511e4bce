// The SQL store's errors said as the domain's, whichever engine raised them (database.ts recognizes them).
import { AppError, NotFoundError, UnavailableError, ValidationError } from '../core/errors.js';
import type { SqlDatabase } from './database.js';

/**
 * Domain errors pass through; an unreachable database becomes UnavailableError (503 + Retry-After), a
 * reference to a row that is gone NotFoundError (404), a value the database refuses ValidationError (400).
 */
export async function translatingErrors<T>(db: SqlDatabase, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (db.isUnavailable(err)) {
      // The driver's message names the database's host and port: it goes to the log as the cause,
      // never to the client.
      throw new UnavailableError('the database is unavailable; retry shortly', 1, { cause: err });
    }
    if (db.isForeignKeyViolation(err)) {
      throw new NotFoundError('the experiment this write refers to no longer exists');
    }
    if (db.isInvalidData(err)) {
      throw new ValidationError(
        `the database cannot store a value of this request: ${(err as Error).message}`,
      );
    }
    throw err;
  }
}
