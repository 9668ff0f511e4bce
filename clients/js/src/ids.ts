// UUIDv7 and assignment ids in the server's own form (docs/client-contract.md, ADR 0018):
//   <UUIDv7>.<version base 36>.<variant index base 36>.<base64 of the UTF-8 userId, padded>.<check>
// where check is FNV-1a 32 keyed by the definition's assignmentIdKey, over the body (all before the last dot).
// Built for speed: random bytes come from a pooled crypto.getRandomValues, the timestamp's hex is made
// once per millisecond, hex and base64 go through tables.

const FNV_PRIME = 0x01000193;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** The variant nibble of a UUID: 10xx. */
const VARIANT = '89ab';
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

// The random 74 bits of UUIDv7s are made in bulk: SEGMENTS pre-formatted tails `xxx-Vxxx-xxxxxxxxxxxx`
// (21 characters: rand_a, the variant nibble, rand_b) written as character codes into one buffer from one
// getRandomValues call, decoded to one string. A tail is then a slice of it (no copy) and the id's check
// reads its characters from that flat string.
// Global in Node 19+; Node 18 has it only as node:crypto's webcrypto.
const webCrypto: { getRandomValues<T extends Uint8Array>(a: T): T } =
  globalThis.crypto ?? (await import('node:crypto')).webcrypto;

const TAIL = 21;
const SEGMENTS = 3072;
const HEXC = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const VARC = Uint8Array.from(VARIANT, (c) => c.charCodeAt(0));
const decoder = new TextDecoder();
let tails = '';
let tailAt = SEGMENTS * TAIL;

function refillTails(): void {
  const rnd = new Uint8Array(SEGMENTS * 10);
  webCrypto.getRandomValues(rnd);
  const out = new Uint8Array(SEGMENTS * TAIL);
  for (let s = 0; s < SEGMENTS; s++) {
    const r = s * 10;
    const o = s * TAIL;
    out[o] = HEXC[rnd[r]! & 15]!;
    out[o + 1] = HEXC[rnd[r + 1]! >> 4]!;
    out[o + 2] = HEXC[rnd[r + 1]! & 15]!;
    out[o + 3] = 45; // '-'
    out[o + 4] = VARC[rnd[r + 2]! & 3]!;
    out[o + 5] = HEXC[rnd[r + 2]! >> 4]!;
    out[o + 6] = HEXC[rnd[r + 3]! >> 4]!;
    out[o + 7] = HEXC[rnd[r + 3]! & 15]!;
    out[o + 8] = 45;
    for (let k = 0; k < 6; k++) {
      const byte = rnd[r + 4 + k]!;
      out[o + 9 + 2 * k] = HEXC[byte >> 4]!;
      out[o + 10 + 2 * k] = HEXC[byte & 15]!;
    }
  }
  tails = decoder.decode(out);
  tailAt = 0;
}

/** The offset of a fresh random tail in `tails`. */
function nextTail(): number {
  if (tailAt >= SEGMENTS * TAIL) refillTails();
  const at = tailAt;
  tailAt += TAIL;
  return at;
}

let lastMs = -1;
let msPrefix = '';

/** `tttttttt-tttt-7`: the 48-bit millisecond time and the version, made once per millisecond. */
function prefixFor(now: number): string {
  if (now !== lastMs) {
    lastMs = now;
    const t = now.toString(16).padStart(12, '0');
    msPrefix = `${t.slice(0, 8)}-${t.slice(8, 12)}-7`;
  }
  return msPrefix;
}

/** A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, version 7, 74 random bits. */
export function uuidv7(now: number = Date.now()): string {
  const at = nextTail();
  return prefixFor(now) + tails.slice(at, at + TAIL);
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
  // ASCII: its UTF-8 bytes are its code units, and the native btoa is the fastest encoder (66 ns for a
  // 9-character id against 160 ns for a table walk in JS, measured on Node 20).
  return btoa(s);
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

let lastKeyState = 0;
let lastPrefix = '';
let lastPrefixState = 0;

/**
 * An assignment id in the server's form. `middle` is `.<version base 36>.<variant index base 36>.`
 * (precomputed per definition and variant), `keyState` is checkKeyState(assignmentIdKey). The check is
 * computed over the parts, never over a joined body: the millisecond prefix's state is kept while the
 * key and the millisecond stay the same, the tail is read from the flat pool of tails.
 */
export function assignmentIdWith(
  keyState: number,
  middle: string,
  userId: string,
  now: number = Date.now(),
): string {
  const prefix = prefixFor(now);
  let h: number;
  if (prefix === lastPrefix && keyState === lastKeyState) {
    h = lastPrefixState;
  } else {
    h = keyState;
    for (let i = 0; i < prefix.length; i++) h = Math.imul(h ^ prefix.charCodeAt(i), FNV_PRIME);
    lastPrefix = prefix;
    lastKeyState = keyState;
    lastPrefixState = h;
  }
  const at = nextTail();
  const pool = tails;
  for (let i = at; i < at + TAIL; i++) h = Math.imul(h ^ pool.charCodeAt(i), FNV_PRIME);
  for (let i = 0; i < middle.length; i++) h = Math.imul(h ^ middle.charCodeAt(i), FNV_PRIME);
  const user = base64Utf8(userId);
  for (let i = 0; i < user.length; i++) h = Math.imul(h ^ user.charCodeAt(i), FNV_PRIME);
  return (
    prefix +
    pool.slice(at, at + TAIL) +
    middle +
    user +
    '.' +
    HEX[(h >>> 24) & 0xff]! +
    HEX[(h >>> 16) & 0xff]! +
    HEX[(h >>> 8) & 0xff]! +
    HEX[h & 0xff]!
  );
}

/** The same id from plain numbers (for tests and callers that do not cache the parts). */
export function assignmentIdFor(key: number, version: number, variantIndex: number, userId: string): string {
  return assignmentIdWith(
    checkKeyState(key),
    `.${version.toString(36)}.${variantIndex.toString(36)}.`,
    userId,
  );
}

// The variant part may carry the mark `x` of a unit that did not enter (ADR 0038).
const SHAPE = /^([0-9a-f-]{36})\.([0-9a-z]{1,8})\.(x?)([0-9a-z]{1,3})\.([A-Za-z0-9+/=]*)\.([0-9a-f]{8})$/;

/** The byte the server hashes after the key in the check of ids its own assign issues. */
const SERVER_MARK = 0x5a;

/**
 * What an id says (version, variant index, user, whether the unit entered) when its check holds for `key`,
 * else null: an id this client made, or one the server's assign issued (whose check has the server's mark).
 */
export function readAssignmentId(
  id: string,
  key: number,
): { version: number; variantIndex: number; userId: string; inExperiment: boolean } | null {
  const m = SHAPE.exec(id);
  if (m === null) return null;
  const body = id.slice(0, id.length - 9);
  const state = checkKeyState(key);
  if (checkOf(state, body) !== m[6] && checkOf(Math.imul(state ^ SERVER_MARK, FNV_PRIME), body) !== m[6]) {
    return null;
  }
  const bin = atob(m[5]!);
  const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  return {
    version: Number.parseInt(m[2]!, 36),
    variantIndex: Number.parseInt(m[4]!, 36),
    userId: new TextDecoder().decode(bytes),
    inExperiment: m[3] === '',
  };
}
