// Bodies taken as bytes (routes declaring `bytes`: OTLP/HTTP's /v1/traces): the media type checked
// (another is a 415, as the OTLP receivers answer), read within the route's limit, and gzip inflated
// off the event loop with the same limit on its output (OTLP: the limit holds after decompression).
import type { IncomingMessage } from 'node:http';
import { gunzip } from 'node:zlib';
import { readBody } from './body.js';
import type { BytesBody, RawBody } from './route-types.js';

function statusError(status: number, message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode: status });
}

/** Whether a request's Content-Encoding is one the route takes (identity always; gzip where declared). */
export function encodingTaken(encoding: string, bytes: BytesBody | undefined): boolean {
  const e = encoding.trim().toLowerCase();
  return e === 'identity' || (e === 'gzip' && bytes?.gzip === true);
}

/** Reads the body as bytes of one of the route's media types, inflated when gzip. */
export function takeBytes(
  req: IncomingMessage,
  bytes: BytesBody,
  done: (err: Error | null, raw?: RawBody) => void,
): void {
  const header = req.headers['content-type'] ?? '';
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  if (!bytes.types.includes(type)) {
    done(statusError(415, `Content-Type must be ${bytes.types.join(' or ')} (got '${header.slice(0, 80)}')`));
    return;
  }
  readBody(req, bytes.limit, (err, body) => {
    if (err !== null) {
      done(err);
      return;
    }
    const sent = body ?? Buffer.alloc(0);
    const gzipped = (req.headers['content-encoding'] ?? '').trim().toLowerCase() === 'gzip';
    if (!gzipped) {
      done(null, { type, bytes: sent });
      return;
    }
    gunzip(sent, { maxOutputLength: bytes.limit }, (zerr, inflated) => {
      if (zerr === null) done(null, { type, bytes: inflated });
      else if ((zerr as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        done(statusError(413, 'request body is larger than the limit once inflated'));
      } else done(statusError(400, `the body is not valid gzip (${zerr.message})`));
    });
  });
}
