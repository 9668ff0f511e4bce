// Request bodies, the pipeline's body stage: JSON only, UTF-8 only, with the structural checks of
// core/json, within the body limit.
import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ValidationError } from '../core/errors.js';
import { findJsonProblem } from '../core/json.js';
import { chunkWatch } from './chunked-limit.js';

const MEDIA_TYPE = /^\s*([^;\s]*)\s*(.*)$/;
const CHARSET = /(?:^|;)\s*charset\s*=\s*"?([^";\s]*)"?/i;

/** The 400 message for a request whose Content-Type is not JSON in UTF-8, or null when it is. */
export function contentTypeProblem(header: string | undefined): string | null {
  const [, media = '', params = ''] = MEDIA_TYPE.exec(header ?? '') ?? [];
  if (media.toLowerCase() !== 'application/json') {
    return `Content-Type must be application/json (got '${header ?? ''}')`;
  }
  const charset = CHARSET.exec(params)?.[1];
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    return `only UTF-8 request bodies are accepted (Content-Type says charset=${charset})`;
  }
  return null;
}

/**
 * The body's bytes as a parsed JSON value (undefined when empty). Bytes that are not UTF-8 are refused,
 * not replaced by U+FFFD: what is stored must be what the client sent.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  if (!isUtf8(bytes)) {
    throw new ValidationError(
      `body is not valid UTF-8 (byte ${firstInvalidByte(bytes)}); send JSON in UTF-8`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ValidationError(`body is not valid JSON: ${(err as Error).message}`);
  }
  const problem = findJsonProblem(value, 'body');
  if (problem !== null) throw new ValidationError(problem);
  return value;
}

/** The offset of the first byte that breaks UTF-8 (only asked once the body is known to be broken). */
function firstInvalidByte(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0;
    if (length === 0 || !isUtf8(bytes.subarray(i, i + length))) return i;
    i += length;
  }
  return i;
}

/** An error that carries its HTTP status (errorAnswer maps it): a body too large, or cut short. */
function statusError(status: number, message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode: status });
}

/** The 413 error for a body larger than the limit (errorAnswer words it). */
export function bodyTooLarge(): Error & { statusCode: number } {
  return statusError(413, 'request body is larger than the limit');
}

const TYPE_NAME = /^[\w!#$%&'*+.^`|~-]+$/;
const SUBTYPE_NAME = /^[\w!#$%&'*+.^`|~-]+\s*$/;

/** What a request's Content-Type asks of the body stage. */
export type BodyKind = 'none' | 'json' | 'refused' | 'malformed';

/**
 * How to take a request's body: `none` (no Content-Type and no body), `json`, `refused` (another media
 * type, or a body without a type: 400 naming it, body unread), or `malformed` (a Content-Type that does
 * not even parse: 400 too).
 */
export function bodyKind(headers: IncomingHttpHeaders): BodyKind {
  const type = headers['content-type'];
  if (type === undefined) {
    const length = headers['content-length'];
    const empty = headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
    return empty ? 'none' : 'refused';
  }
  if (type === 'application/json') return 'json';
  const media = type.split(';', 1)[0]!.trim();
  const slash = media.indexOf('/');
  if (slash === -1 || !TYPE_NAME.test(media.slice(0, slash)) || !SUBTYPE_NAME.test(media.slice(slash + 1))) {
    return 'malformed';
  }
  return media.toLowerCase() === 'application/json' ? 'json' : 'refused';
}

/**
 * Reads a request's body, up to `limit` bytes: by its Content-Length, then as the bytes arrive, and for
 * a chunked body by its declared chunk sizes too (chunked-limit.ts) as soon as they pass the limit.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  done: (err: Error | null, bytes?: Buffer) => void,
): void {
  const length = req.headers['content-length'];
  const expected = length === undefined ? Number.NaN : Number(length);
  const watch = chunkWatch(req);
  if (expected > limit || watch?.over === true) {
    done(bodyTooLarge());
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err: Error | null, bytes?: Buffer) => {
    if (finished) return;
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    done(err, bytes);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) finish(bodyTooLarge());
    else chunks.push(chunk);
  };
  const onEnd = () => {
    if (!Number.isNaN(expected) && received !== expected) {
      finish(statusError(400, 'Request body size did not match Content-Length'));
    } else finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
  };
  // A client that goes away mid-body: its answer goes nowhere.
  const onError = (err: Error) => finish(Object.assign(err, { statusCode: 400 }));
  if (watch !== undefined) watch.onOver = () => finish(bodyTooLarge());
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}
