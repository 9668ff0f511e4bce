// Request bodies for every transport: JSON only, UTF-8 only, with the structural checks of core/json.
import { isUtf8 } from 'node:buffer';
import { ValidationError } from '../core/errors.js';
import { findJsonProblem } from '../core/json.js';

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
