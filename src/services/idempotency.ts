// Idempotency-Key: what a request finds when it arrives (first, replay, mismatch, in flight), and the
// record of its answer that the services commit with its data (ADR 0016).
import { type Arrival, IDEMPOTENCY_WINDOW_MS, type IdempotencyRecord } from '../core/idempotency.js';
import type { IdempotencyStore } from '../store/store.js';

export interface IdempotencyDeps {
  store: IdempotencyStore;
  /**
   * True when one process owns the database (SQLite): requests in flight are known in memory and no
   * claim is written. Otherwise (PostgreSQL) a pending row claims the key for every instance.
   */
  singleProcess: boolean;
  /**
   * The last resort: how long a pending claim holds off other instances even while the instance that
   * made it is alive (ms). A dead instance's claims are taken over at once (the store asks the database
   * whether that instance still holds its lock); this only frees a claim a live instance left behind.
   */
  claimTimeoutMs: number;
  nowMs?: () => number;
  onError?: (err: unknown) => void;
}

/** How often rows older than the window are deleted (ms). */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export class IdempotencyService {
  /** Keys whose first request runs in this process, with that request's fingerprint. */
  private readonly inFlight = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;
  private readonly nowMs: () => number;

  constructor(private readonly deps: IdempotencyDeps) {
    this.nowMs = deps.nowMs ?? Date.now;
    this.timer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.timer.unref();
  }

  /**
   * What a request with this key finds. On `first` the key is held for it until `leave`, which the
   * caller must call once the request has ended, however it ended.
   */
  async arrive(owner: string, key: string, fingerprint: string): Promise<Arrival> {
    const id = `${owner}\u0000${key}`;
    const running = this.inFlight.get(id);
    if (running !== undefined) return running === fingerprint ? { kind: 'in-flight' } : { kind: 'mismatch' };
    // Held before the first await, so a second request with this key in this process waits for nothing.
    this.inFlight.set(id, fingerprint);
    let arrival: Arrival;
    try {
      arrival = await this.decide(owner, key, fingerprint);
    } catch (err) {
      this.inFlight.delete(id);
      throw err;
    }
    if (arrival.kind !== 'first') this.inFlight.delete(id);
    return arrival;
  }

  /**
   * Ends a first request: on failure its claim is released, so the key can be used again. The key stays
   * in flight in this process until the release is done: a retry here meanwhile is 409, and never takes
   * over the claim the release is about to delete (the store takes an own claim over, see claimIdempotencyRow).
   */
  async leave(owner: string, key: string, succeeded: boolean): Promise<void> {
    const id = `${owner}\u0000${key}`;
    try {
      if (succeeded || this.deps.singleProcess) return;
      await this.deps.store.releaseIdempotencyKey(owner, key).catch((err) => this.deps.onError?.(err));
    } finally {
      this.inFlight.delete(id);
    }
  }

  record(owner: string, key: string, fingerprint: string, status: number, answer: string): IdempotencyRecord {
    return { owner, key, fingerprint, status, answer, createdAt: new Date(this.nowMs()).toISOString() };
  }

  async prune(): Promise<void> {
    const before = new Date(this.nowMs() - IDEMPOTENCY_WINDOW_MS).toISOString();
    await this.deps.store.pruneIdempotencyKeys(before).catch((err) => this.deps.onError?.(err));
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async decide(owner: string, key: string, fingerprint: string): Promise<Arrival> {
    const now = this.nowMs();
    const since = new Date(now - IDEMPOTENCY_WINDOW_MS).toISOString();
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await this.deps.store.findIdempotencyKey(owner, key, since);
      if (row !== undefined && row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row?.state === 'done')
        return { kind: 'replay', status: row.status ?? 200, answer: row.answer ?? '' };
      if (this.deps.singleProcess) {
        // Only this process writes: a pending row is a leftover of a crash, and nothing runs it now.
        return { kind: 'first' };
      }
      const claimed = await this.deps.store.claimIdempotencyKey(
        owner,
        key,
        fingerprint,
        new Date(now).toISOString(),
        since,
        new Date(now - this.deps.claimTimeoutMs).toISOString(),
      );
      if (claimed) return { kind: 'first' };
      // Another instance holds it: read again to tell in flight from just finished.
      const again = await this.deps.store.findIdempotencyKey(owner, key, since);
      if (again === undefined) continue;
      if (again.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (again.state === 'done')
        return { kind: 'replay', status: again.status ?? 200, answer: again.answer ?? '' };
      return { kind: 'in-flight' };
    }
    return { kind: 'in-flight' };
  }
}
