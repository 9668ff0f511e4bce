// The closed set of domain errors; the HTTP edge maps each to one status code.

export class AppError extends Error {
  constructor(
    message: string,
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The request itself is wrong (shape, range, reference). */
export class ValidationError extends AppError {
  constructor(message: string) {
    super(message, 400);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(message, 404);
  }
}

/** The request is valid but clashes with the current state (duplicate slug, forbidden transition). */
export class ConflictError extends AppError {
  /** `retryAfterSeconds`: the conflict is passing (a request still in flight); when to try again. */
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message, 409);
  }
}

/**
 * The storage cannot take the write right now; the client may retry. The message goes to the client,
 * so it names no host or port; the driver's error is the `cause`, for the log.
 */
export class UnavailableError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
    options?: { cause?: unknown },
  ) {
    super(message, 503, options);
  }
}

/** The key is valid but may not do this (a scope it lacks, an experiment outside its list). */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(message, 403);
  }
}

/** Well-formed, but cannot be processed as sent (an Idempotency-Key reused with another body). */
export class UnprocessableError extends AppError {
  constructor(message: string) {
    super(message, 422);
  }
}
