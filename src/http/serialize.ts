// What the pipeline (pipeline.ts) answers once a handler returned: the success answer for its value, and
// two helpers of its stages (a validation failure's error; a body still arriving as the answer leaves).
import type { IncomingMessage } from 'node:http';
import { ValidationError } from '../core/errors.js';
import type { CompiledRoute } from './compile.js';
import { describeValidation } from './errors.js';
import { JsonBody, PlainText, Relayed, Stream, Tagged } from './route.js';
import { taggedAnswer } from './tagged.js';
import type { Validator } from './validation.js';
import type { Answer } from './writer.js';

/** A body still arriving when the answer leaves: the connection closes rather than wait for it. */
export function bodyPending(req: IncomingMessage): boolean {
  // inject()'s requests have their whole body (and no `complete`).
  if (req.complete !== false) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function invalid(context: string, validate: Validator): ValidationError {
  return new ValidationError(describeValidation(context, validate.errors ?? []));
}

/** The success answer for what a handler returned. */
export function serialize(
  req: IncomingMessage,
  compiled: CompiledRoute,
  value: unknown,
): Answer | Promise<Answer> {
  const status = compiled.status;
  if (value instanceof JsonBody) return { status, body: value.text };
  if (value instanceof Stream) {
    const { 'content-type': type, ...headers } = value.headers;
    return { status, type, headers, body: value.body };
  }
  if (value instanceof PlainText) return { status, type: value.contentType, body: value.text };
  if (value instanceof Tagged) return taggedAnswer(req.headers, status, value);
  if (value instanceof Relayed) {
    const { 'content-type': type, ...headers } = value.headers;
    return { status: value.status, type, headers, body: value.body === '' ? undefined : value.body };
  }
  if (status === 204) return { status };
  return { status, body: compiled.serialize(value) };
}
