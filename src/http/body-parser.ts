// JSON bodies: plain JSON.parse (so "__proto__" stays an ordinary key), depth and number limits, clear 400s.
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../core/errors.js';
import { findJsonProblem } from '../core/json.js';

/** The 400 message for a body that is not JSON by its Content-Type; shared with the error handler. */
export function wrongContentType(header: string | undefined): string {
  return `Content-Type must be application/json (got '${header}')`;
}

export function registerJsonBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      done(new ValidationError(`body is not valid JSON: ${(err as Error).message}`), undefined);
      return;
    }
    const problem = findJsonProblem(value, 'body');
    if (problem !== null) {
      done(new ValidationError(problem), undefined);
      return;
    }
    done(null, value);
  });
  // Any other media type is a malformed request for this API (400, as the spec's error table has it).
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(new ValidationError(wrongContentType(request.headers['content-type'])), undefined);
  });
}
