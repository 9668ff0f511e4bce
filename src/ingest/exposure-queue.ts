// Exposures waiting for their transaction, kept as JSON bytes outside the JS heap (ADR 0007).
//
// Every assign leaves an exposure behind, and each one waits ~1000 assigns for its batch. Kept as JS
// objects, they outlived every young-generation collection and were promoted: about 250 bytes of old
// generation per assign, collected later by full mark-compacts (CPU, and heap growth between them).
// Serialized at once into a Buffer, the exposure's object and string die young and cost the collector nothing.
import { type Exposure, encodeExposure } from '../core/exposure.js';
import { type AssignmentSegment, assignmentSegmentsOf } from '../core/segments.js';
import { hourOf } from '../core/time.js';
import type { ExposureBatch } from '../core/writes.js';

/** Most bytes of JSON in one exposure batch row (one exposure larger than this gets a row alone). */
export const MAX_EXPOSURE_BATCH_BYTES = 4_000_000;
const FIRST_CAPACITY = 4096;
/** Exposures longer than this (in bytes, by the 3-per-code-unit bound) are measured exactly. */
const EXACT_ABOVE = 65_536;
const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/**
 * Buffers of sealed segments, reused by new ones: a steady stream of exposures then allocates no new
 * memory outside the heap (which V8 would count as pressure towards a full collection).
 */
const spare: Buffer[] = [];
const MAX_SPARE = 4;
const MAX_SPARE_BYTES = 1 << 20;

/** The exposures of one experiment version, as the bytes of a JSON array being written. */
class Segment {
  bytes: Buffer = spare.pop() ?? Buffer.allocUnsafeSlow(FIRST_CAPACITY);
  length = 1;
  count = 0;
  /** A sticky experiment's exposures: the store counts their distinct users (store/exposure-user-statements.ts). */
  unit = false;
  /** The segment values of the exposures' assign contexts (experiments that declare segments). */
  assignmentSegments: AssignmentSegment[] | null = null;
  /** Assignment ids clients made (ExposureBatch.clientIds). */
  clientIds: string[] | null = null;
  readonly variants = new Map<string, number>();
  /** Some exposure had a context (the store indexes contexts from the JSON later: store/context-index.ts). */
  withContext = false;

  constructor(
    readonly experimentId: number,
    readonly version: number,
    /** The hour its exposures were assigned in (a new hour starts a new segment): the time series' hour. */
    readonly hour: string,
  ) {
    this.bytes[0] = OPEN;
  }

  /** Could `maxBytes` more bytes push this segment past the cap (a lone exposure always fits)? */
  full(maxBytes: number): boolean {
    return this.count > 0 && this.length + maxBytes + 2 > MAX_EXPOSURE_BATCH_BYTES;
  }

  append(json: string, variantKey: string, maxBytes: number): void {
    // room for the separator and the closing bracket
    const needed = this.length + maxBytes + 2;
    if (needed > this.bytes.length) {
      let capacity = this.bytes.length * 2;
      while (capacity < needed) capacity *= 2;
      const grown = Buffer.allocUnsafeSlow(capacity);
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    if (this.count > 0) this.bytes[this.length++] = COMMA;
    this.length += this.bytes.write(json, this.length, 'utf8');
    this.count++;
    this.variants.set(variantKey, (this.variants.get(variantKey) ?? 0) + 1);
  }

  seal(): ExposureBatch {
    this.bytes[this.length] = CLOSE;
    return {
      experimentId: this.experimentId,
      version: this.version,
      count: this.count,
      hour: this.hour,
      variants: [...this.variants].map(([variantKey, n]) => ({ variantKey, n })),
      json: this.bytes.toString('utf8', 0, this.length + 1),
      ...(this.unit ? { unit: true } : {}),
      ...(this.assignmentSegments ? { segments: this.assignmentSegments } : {}),
      ...(this.clientIds ? { clientIds: this.clientIds } : {}),
      ...(this.withContext ? { withContext: true } : {}),
    };
  }

  /** After sealing: the buffer goes back for reuse (the sealed text is a copy). */
  release(): void {
    if (spare.length < MAX_SPARE && this.bytes.length <= MAX_SPARE_BYTES) spare.push(this.bytes);
  }
}

/**
 * A bounded FIFO of exposures: open segments (one per experiment version, growing) behind batches that
 * were taken but came back unwritten (database unavailable). Order is kept within an experiment version.
 */
export class ExposureQueue {
  private returned: ExposureBatch[] = [];
  /** The open segment of each experiment version, by experiment id, then version (no key string per append). */
  private readonly open = new Map<number, Map<number, Segment>>();
  private segments: Segment[] = [];
  private total = 0;
  private lastCreatedAt = '';
  private lastHour = '';

  /**
   * @param capacity most exposures waiting; beyond it `append` refuses them
   * @param maxPerBatch most exposures in one batch, and in one `take` unless a single batch is larger
   */
  constructor(
    private readonly capacity: number,
    private readonly maxPerBatch = Number.POSITIVE_INFINITY,
  ) {}

  /** Exposures waiting. */
  get size(): number {
    return this.total;
  }

  /** Serializes `e` into its segment at once (its stored form); false (and nothing kept) when the queue is full. */
  append(e: Exposure): boolean {
    if (this.total >= this.capacity) return false;
    const json = encodeExposure(e);
    // A UTF-16 code unit takes at most 3 bytes of UTF-8: room enough without measuring the string,
    // which is measured only when that bound comes near the cap.
    let maxBytes = json.length * 3;
    if (maxBytes > EXACT_ABOVE) maxBytes = Buffer.byteLength(json);
    let versions = this.open.get(e.experimentId);
    if (versions === undefined) {
      versions = new Map();
      this.open.set(e.experimentId, versions);
    }
    let segment = versions.get(e.version);
    // createdAt is one string per millisecond (core/ids.ts isoNow): its hour is worked out once per change.
    if (e.createdAt !== this.lastCreatedAt) {
      this.lastCreatedAt = e.createdAt;
      this.lastHour = hourOf(e.createdAt);
    }
    const hour = this.lastHour;
    if (
      segment === undefined ||
      segment.hour !== hour ||
      segment.count >= this.maxPerBatch ||
      (segment.full(maxBytes) && segment.full(Buffer.byteLength(json)))
    ) {
      segment = new Segment(e.experimentId, e.version, hour);
      versions.set(e.version, segment);
      this.segments.push(segment);
    }
    segment.append(json, e.variantKey, maxBytes);
    if (e.context !== null) segment.withContext = true;
    if (e.unit === true) segment.unit = true;
    if (e.segments) {
      segment.assignmentSegments ??= [];
      segment.assignmentSegments.push(...assignmentSegmentsOf([e]));
    }
    if (e.byClient) {
      segment.clientIds ??= [];
      segment.clientIds.push(e.assignmentId);
    }
    this.total++;
    return true;
  }

  /**
   * Takes whole batches, oldest first, as many as fit in `max` exposures (a batch is never split; the
   * first is always taken, whatever its size).
   */
  take(max: number): ExposureBatch[] {
    const out: ExposureBatch[] = [];
    let taken = 0;
    while (this.returned.length > 0 && (taken === 0 || taken + this.returned[0]!.count <= max)) {
      const b = this.returned.shift()!;
      out.push(b);
      taken += b.count;
    }
    let i = 0;
    while (
      this.returned.length === 0 &&
      i < this.segments.length &&
      (taken === 0 || taken + this.segments[i]!.count <= max)
    ) {
      const s = this.segments[i++]!;
      out.push(s.seal());
      s.release();
      taken += s.count;
      const versions = this.open.get(s.experimentId);
      if (versions?.get(s.version) === s) {
        versions.delete(s.version);
        if (versions.size === 0) this.open.delete(s.experimentId);
      }
    }
    this.segments = this.segments.slice(i);
    this.total -= taken;
    return out;
  }

  /**
   * Returns batches that could not be written to the front, in order. Batches that no longer fit are
   * dropped; returns how many exposures that dropped.
   */
  putBack(batches: ExposureBatch[]): number {
    let room = Math.max(0, this.capacity - this.total);
    const kept: ExposureBatch[] = [];
    let dropped = 0;
    for (const b of batches) {
      if (b.count <= room) {
        kept.push(b);
        room -= b.count;
        this.total += b.count;
      } else dropped += b.count;
    }
    this.returned = kept.concat(this.returned);
    return dropped;
  }
}

/** Exposures as the batches a queue would hand the store (for tools and tests). */
export function toExposureBatches(exposures: Iterable<Exposure>): ExposureBatch[] {
  const queue = new ExposureQueue(Number.POSITIVE_INFINITY);
  for (const e of exposures) queue.append(e);
  return queue.take(Number.POSITIVE_INFINITY);
}
