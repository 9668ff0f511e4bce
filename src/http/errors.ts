// The one place where errors become HTTP answers: {"error": "<what is wrong>"}, never internals. Both
// transports call `errorAnswer`; Fastify's own error kinds are mapped here too.
import { AppError, ConflictError, UnavailableError, ValidationError } from '../core/errors.js';

export interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** An error answer: status, the JSON body, and Retry-After seconds (503s, and a 409 that is passing). */
export interface ErrorAnswer {
  status: number;
  body: string;
  /** The words of `body`'s error. */
  message: string;
  retryAfter?: number;
}

/** "body/variants/0/trafficPercent must be number", with allowed values spelled out for enums. */
export function describeValidation(context: string | undefined, issues: ValidationIssue[]): string {
  const first = issues[0];
  if (!first) return 'request is not valid';
  const where = `${context ?? 'request'}${first.instancePath}`;
  // A refused key (propertyNames): name it, shortened, rather than the inner rule's generic words.
  const name = (first as { propertyName?: unknown }).propertyName ?? first.params.propertyName;
  if (typeof name === 'string') {
    const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
    return `${where} has a name that is not allowed (${JSON.stringify(shown)}, ${name.length} characters): ${first.message ?? 'not valid'}`;
  }
  if (first.keyword === 'enum') {
    const allowed = (first.params.allowedValues as unknown[]).map((v) => `'${v}'`).join(', ');
    return `${where} must be one of ${allowed}`;
  }
  if (first.keyword === 'required')
    return `${where} must have required property '${first.params.missingProperty}'`;
  if (first.keyword === 'minProperties' && first.params.limit === 1)
    return `${where} must name at least one field`;
  if (first.keyword === 'additionalProperties' && context === 'body')
    return `${where} cannot set '${first.params.additionalProperty}'`;
  return `${where} ${first.message ?? 'is not valid'}`;
}

/** The 413's words, whichever part of the server finds the body too large. */
export function tooLargeMessage(bodyLimit: number): string {
  return `request body is larger than the limit of ${bodyLimit} bytes`;
}

export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
  message?: string;
  validation?: ValidationIssue[];
  validationContext?: string;
}

/**
 * The answer for anything a handler, a body parser or Fastify throws. `bodyLimit` words the 413.
 * Unexpected errors are 500 with a generic message: the caller logs them with the request id.
 */
export function errorAnswer(err: unknown, bodyLimit: number): ErrorAnswer {
  const { status, message, retryAfter } = errorOf(err, bodyLimit);
  return { status, body: errorBody(message), message, retryAfter };
}

function errorOf(err: unknown, bodyLimit: number): Omit<ErrorAnswer, 'body'> {
  if (err instanceof AppError) {
    return {
      status: err.status,
      message: err.message,
      retryAfter:
        err instanceof UnavailableError || err instanceof ConflictError ? err.retryAfterSeconds : undefined,
    };
  }
  const e = (err ?? {}) as FrameworkError;
  if (e.validation) {
    return { status: 400, message: describeValidation(e.validationContext, e.validation) };
  }
  // Fastify answers 415 itself when a Content-Type does not even parse (e.g. empty); for this API that
  // is a malformed request like any other wrong media type, so 400 as the spec's error table says.
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { status: 400, message: 'Content-Type must be application/json' };
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413) return { status, message: tooLargeMessage(bodyLimit) };
  if (status >= 400 && status < 500) return { status, message: e.message || 'bad request' };
  return { status: 500, message: 'Internal Server Error' };
}

/** A request body the route's schema refuses, as the same error both transports answer. */
export function invalidBody(issues: ValidationIssue[] | null | undefined): ValidationError {
  return new ValidationError(describeValidation('body', issues ?? []));
}
