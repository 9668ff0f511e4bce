// UUIDv7 and assignment ids in the server's own form (docs/client-contract.md, ADR 0018):
//   <UUIDv7>.<version base 36>.<variant index base 36>.<base64 of the UTF-8 userId, padded>.<check>
// where check is FNV-1a 32 keyed by the definition's assignmentIdKey, over the body (all before the last dot).
// Built for speed: random bytes come from a pooled crypto.getRandomValues, the timestamp's hex is made
// once per millisecond, hex and base64 go through tables.

const FNV_PRIME = 0x01000193;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const HEX1 = '0123456789abcdef';
/** The variant nibble of a UUID: 10xx. */
const VARIANT = '89ab';
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const POOL_SIZE = 16 * 1024;
const pool = new Uint8Array(POOL_SIZE);
let poolPos = POOL_SIZE;

let lastMs = -1;
let msPrefix = '';

/** A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, version 7, 74 random bits. */
export function uuidv7(now: number = Date.now()): string {
  if (now !== lastMs) {
    lastMs = now;
    const t = now.toString(16).padStart(12, '0');
    msPrefix = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
  }
  if (poolPos + 10 > POOL_SIZE) {
    crypto.getRandomValues(pool);
    poolPos = 0;
  }
  const p = poolPos;
  poolPos += 10;
  const b2 = pool[p + 2]!;
  return (
    msPrefix +
    HEX1[pool[p]! & 15]! +
    HEX[pool[p + 1]!]! +
    '-' +
    VARIANT[b2 & 3]! +
    HEX1[b2 >> 4]! +
    HEX[pool[p + 3]!]! +
    '-' +
    HEX[pool[p + 4]!]! +
    HEX[pool[p + 5]!]! +
    HEX[pool[p + 6]!]! +
    HEX[pool[p + 7]!]! +
    HEX[pool[p + 8]!]! +
    HEX[pool[p + 9]!]!
  );
}

/** The FNV state after the key's two 16-bit halves: computed once per experiment definition. */
export function checkKeyState(key: number): number {
  const h = Math.imul(0x811c9dc5 ^ (key & 0xffff), FNV_PRIME);
  return Math.imul(h ^ (key >>> 16), FNV_PRIME);
}

/** The id's check: 8 lower-case hex digits of FNV-1a 32 over `body`, from the key's state. */
export function checkOf(keyState: number, body: string): string {
  let h = keyState;
  for (let i = 0; i < body.length; i++) h = Math.imul(h ^ body.charCodeAt(i), FNV_PRIME);
  return HEX[(h >>> 24) & 0xff]! + HEX[(h >>> 16) & 0xff]! + HEX[(h >>> 8) & 0xff]! + HEX[h & 0xff]!;
}

let encoder: { encode(s: string): Uint8Array } | undefined;

/** Standard base64 (with padding) of the UTF-8 bytes of `s`; a table walk for the usual ASCII ids. */
export function base64Utf8(s: string): string {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      encoder ??= new TextEncoder();
      const bytes = encoder.encode(s);
      return base64Bytes(bytes.length, (j) => bytes[j]!);
    }
  }
  let out = '';
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    const c = s.charCodeAt(i + 2);
    out += B64[a >> 2]! + B64[((a & 3) << 4) | (b >> 4)]! + B64[((b & 15) << 2) | (c >> 6)]! + B64[c & 63]!;
  }
  if (n - i === 1) {
    const a = s.charCodeAt(i);
    out += B64[a >> 2]! + B64[(a & 3) << 4]! + '==';
  } else if (n - i === 2) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    out += B64[a >> 2]! + B64[((a & 3) << 4) | (b >> 4)]! + B64[(b & 15) << 2]! + '=';
  }
  return out;
}

function base64Bytes(n: number, at: (i: number) => number): string {
  let out = '';
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const a = at(i);
    const b = at(i + 1);
    const c = at(i + 2);
    out += B64[a >> 2]! + B64[((a & 3) << 4) | (b >> 4)]! + B64[((b & 15) << 2) | (c >> 6)]! + B64[c & 63]!;
  }
  if (n - i === 1) {
    const a = at(i);
    out += B64[a >> 2]! + B64[(a & 3) << 4]! + '==';
  } else if (n - i === 2) {
    const a = at(i);
    const b = at(i + 1);
    out += B64[a >> 2]! + B64[((a & 3) << 4) | (b >> 4)]! + B64[(b & 15) << 2]! + '=';
  }
  return out;
}

/**
 * An assignment id in the server's form. `middle` is `.<version base 36>.<variant index base 36>.`
 * (precomputed per definition and variant), `keyState` is checkKeyState(assignmentIdKey).
 */
export function assignmentIdWith(keyState: number, middle: string, userId: string, now?: number): string {
  const body = uuidv7(now) + middle + base64Utf8(userId);
  return body + '.' + checkOf(keyState, body);
}

/** The same id from plain numbers (for tests and callers that do not cache the parts). */
export function assignmentIdFor(key: number, version: number, variantIndex: number, userId: string): string {
  return assignmentIdWith(
    checkKeyState(key),
    `.${version.toString(36)}.${variantIndex.toString(36)}.`,
    userId,
  );
}

const SHAPE = /^([0-9a-f-]{36})\.([0-9a-z]{1,8})\.([0-9a-z]{1,3})\.([A-Za-z0-9+/=]*)\.([0-9a-f]{8})$/;

/** What an id says (version, variant index, user) when its check holds for `key`, else null. */
export function readAssignmentId(
  id: string,
  key: number,
): { version: number; variantIndex: number; userId: string } | null {
  const m = SHAPE.exec(id);
  if (m === null) return null;
  if (checkOf(checkKeyState(key), id.slice(0, id.length - 9)) !== m[5]) return null;
  const bin = atob(m[4]!);
  const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  return {
    version: Number.parseInt(m[2]!, 36),
    variantIndex: Number.parseInt(m[3]!, 36),
    userId: new TextDecoder().decode(bytes),
  };
}
