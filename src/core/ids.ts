// Identifiers: UUIDv7 (time-ordered) for assignments and results, with randomness drawn in bulk.
import { randomFillSync } from 'node:crypto';

// One crypto call per 256 ids instead of one per id: the ids stay as random (CSPRNG bytes).
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let next = POOL_IDS;

const HEX = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1));

/** The id's first 13 characters, `tttttttt-tttt`: the 48-bit millisecond timestamp, laid out once per ms. */
let prefixMs = -1;
let prefix = '';
function timePrefix(ms: number): string {
  if (ms !== prefixMs) {
    prefixMs = ms;
    const b = (shift: number) => HEX[Math.floor(ms / 2 ** shift) & 0xff];
    prefix = `${b(40)}${b(32)}${b(24)}${b(16)}-${b(8)}${HEX[ms & 0xff]}`;
  }
  return prefix;
}

/**
 * A UUIDv7 (RFC 9562 §5.7): the millisecond timestamp, then version 7, 12 random bits, the variant
 * (10) and 62 random bits. Laid out here rather than by the uuid package, whose v7 allocated about
 * 900 bytes per call (a byte array, a view, an options object, the pieces of the string) on a path
 * every assign and log takes; the tests check the layout against uuid's own validate and version.
 */
export function newId(): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const r = 16 * next++;
  const p = pool;
  return (
    `${timePrefix(Date.now())}-${HEX[0x70 | (p[r + 6]! & 0x0f)]}${HEX[p[r + 7]!]}-` +
    `${HEX[0x80 | (p[r + 8]! & 0x3f)]}${HEX[p[r + 9]!]}-${HEX[p[r + 10]!]}${HEX[p[r + 11]!]}` +
    `${HEX[p[r + 12]!]}${HEX[p[r + 13]!]}${HEX[p[r + 14]!]}${HEX[p[r + 15]!]}`
  );
}

/** The current time as ISO 8601, formatted once per millisecond however many rows share it. */
let lastMs = -1;
let lastIso = '';
export function isoNow(ms = Date.now()): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
