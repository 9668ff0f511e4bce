// Identifiers: UUIDv7 (time-ordered) for assignments and results, with randomness drawn in bulk.
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

// One crypto call per 256 ids instead of one per id: the ids stay as random (CSPRNG bytes), and
// uuid lays them out (version, variant, millisecond timestamp).
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let next = POOL_IDS;

export function newId(): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const offset = 16 * next++;
  return v7({ random: pool.subarray(offset, offset + 16) });
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
