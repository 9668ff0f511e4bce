// JSON bodies: plain JSON.parse (so "__proto__" stays an ordinary key), a depth limit, clear 400s.
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../core/errors.js';
import { exceedsDepth, MAX_JSON_DEPTH } from '../core/json.js';

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
    if (exceedsDepth(value, MAX_JSON_DEPTH)) {
      done(new ValidationError(`body nests JSON deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    done(null, value);
  });
  // Any other media type is a malformed request for this API (400, as the spec's error table has it).
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(
      new ValidationError(`Content-Type must be application/json (got '${request.headers['content-type']}')`),
      undefined,
    );
  });
}
