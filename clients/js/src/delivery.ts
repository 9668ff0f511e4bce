// Background delivery: logs, feedback and exposures wait in one bounded queue and go out in batches,
// every flushIntervalMs or as soon as batchSize items wait. Retries keep each batch's Idempotency-Key, so
// a retry never double-counts. Nothing here throws to the caller.
import { describeError, errorText, type HttpAnswer, httpRequest, retryAfterMs } from './http.js';
import { uuidv7 } from './ids.js';
import type { Warnings } from './log.js';
import type { DeliveryStats, FeedbackEntry, JsonObject, LogEntry } from './types.js';

export interface QueuedLog {
  kind: 'log';
  slug: string;
  entry: LogEntry;
  /** Date.now() at the log call: the result's timestamp unless the entry has one. */
  at: number;
}

export interface QueuedFeedback {
  kind: 'feedback';
  slug: string;
  entry: FeedbackEntry;
}

export interface QueuedExposure {
  kind: 'exposure';
  experiment: string;
  assignmentId: string;
  context: JsonObject | undefined;
  at: number;
}

export type QueuedItem = QueuedLog | QueuedFeedback | QueuedExposure;

interface Batch {
  kind: QueuedItem['kind'];
  items: QueuedItem[];
  path: string;
}

export interface DeliveryConfig {
  baseUrl: string;
  apiKey: string;
  batchSize: number;
  maxQueueSize: number;
  flushIntervalMs: number;
  deliveryTimeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** A fixed-capacity FIFO; pushing into a full one drops the oldest item. */
class Ring<T> {
  private readonly buf: (T | undefined)[];
  private head = 0;
  size = 0;

  constructor(readonly capacity: number) {
    this.buf = new Array(capacity);
  }

  /** Adds `x`; true when the oldest item was dropped to make room. */
  push(x: T): boolean {
    if (this.size === this.capacity) {
      this.buf[this.head] = x;
      this.head = (this.head + 1) % this.capacity;
      return true;
    }
    this.buf[(this.head + this.size) % this.capacity] = x;
    this.size++;
    return false;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
    return x;
  }
}

/** Statuses after which the same request is sent again (with the same Idempotency-Key). */
function retryable(status: number): boolean {
  return status >= 500 || status === 429 || status === 409 || status === 408;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class Delivery {
  private readonly queue: Ring<QueuedItem>;
  private readonly timer: ReturnType<typeof setInterval>;
  private running = false;
  private scheduled = false;
  private stopped = false;
  private inFlight = 0;
  private delivered = 0;
  private dropped = 0;
  private failed = 0;
  private retries = 0;
  private waiters: Array<(idle: boolean) => void> = [];
  private sleeping: { timer: ReturnType<typeof setTimeout>; until: number; resolve: () => void } | null =
    null;

  constructor(
    private readonly cfg: DeliveryConfig,
    private readonly warnings: Warnings,
  ) {
    this.queue = new Ring(cfg.maxQueueSize);
    this.timer = setInterval(() => {
      if (this.queue.size > 0) this.kick();
    }, cfg.flushIntervalMs);
    this.timer.unref?.();
  }

  /** Queues an item (cheap: no I/O, no serialization on the caller's time). */
  enqueue(item: QueuedItem): void {
    if (this.stopped) {
      this.failed++;
      this.warnings.warn('closed', 'the client is closed: a result, feedback or exposure was not sent');
      return;
    }
    if (this.queue.push(item)) {
      this.dropped++;
      this.warnings.warn(
        'dropped',
        `the queue is full (${this.queue.capacity}): the oldest item was dropped`,
      );
    }
    if (this.queue.size >= this.cfg.batchSize && !this.running && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.kick();
      });
    }
  }

  stats(): DeliveryStats {
    return {
      queued: this.queue.size,
      inFlight: this.inFlight,
      delivered: this.delivered,
      dropped: this.dropped,
      failed: this.failed,
      retries: this.retries,
    };
  }

  idle(): boolean {
    return this.queue.size === 0 && this.inFlight === 0;
  }

  /**
   * Sends everything queued and waits for the answers, at most `timeoutMs`: true when all was answered.
   * A batch waiting to retry is retried now (not sooner than the server's Retry-After).
   */
  flush(timeoutMs: number): Promise<boolean> {
    if (this.idle()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let done = false;
      const finish = (idle: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(idle);
      };
      // A ref'd timer: a caller awaiting flush keeps the process alive until it settles.
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== finish);
        finish(false);
      }, timeoutMs);
      this.waiters.push(finish);
      this.kick();
      this.wake();
    });
  }

  /** Stops the worker: an item still queued or retrying is counted as failed. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.wake(true);
    const n = this.queue.size + this.inFlight;
    if (n > 0) {
      this.failed += n;
      this.inFlight = 0;
      while (this.queue.shift() !== undefined) {}
      this.warnings.warn('closed', `closed with ${n} item(s) not delivered`);
    }
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    void this.run();
  }

  private async run(): Promise<void> {
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const items: QueuedItem[] = [];
        const take = Math.min(this.queue.size, this.cfg.batchSize * 10);
        for (let i = 0; i < take; i++) items.push(this.queue.shift()!);
        this.inFlight += items.length;
        for (const batch of this.group(items)) {
          await this.send(batch);
          if (!this.stopped) this.inFlight -= batch.items.length;
        }
      }
    } catch (err) {
      this.warnings.error(`delivery worker failed: ${describeError(err)}`);
      this.inFlight = 0;
    } finally {
      this.running = false;
      if (this.idle() || this.stopped) {
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters) w(this.idle());
      } else if (this.waiters.length > 0) {
        this.kick();
      }
    }
  }

  /** Batches in the order their first item was queued: logs per experiment, exposures together, feedback alone. */
  private group(items: QueuedItem[]): Batch[] {
    const batches: Batch[] = [];
    const open = new Map<string, Batch>();
    for (const item of items) {
      if (item.kind === 'feedback') {
        batches.push({
          kind: 'feedback',
          items: [item],
          path: `/experiment/${encodeURIComponent(item.slug)}/feedback`,
        });
        continue;
      }
      const key = item.kind === 'log' ? `l:${item.slug}` : 'e';
      let batch = open.get(key);
      if (batch === undefined || batch.items.length >= this.cfg.batchSize) {
        batch = {
          kind: item.kind,
          items: [],
          path: item.kind === 'log' ? `/experiment/${encodeURIComponent(item.slug)}/logs` : '/exposures',
        };
        open.set(key, batch);
        batches.push(batch);
      }
      batch.items.push(item);
    }
    return batches;
  }

  private bodyOf(batch: Batch): string {
    if (batch.kind === 'feedback') return JSON.stringify((batch.items[0] as QueuedFeedback).entry);
    if (batch.kind === 'log') {
      return JSON.stringify({
        results: batch.items.map((i) => {
          const { entry, at } = i as QueuedLog;
          return entry.timestamp === undefined ? { ...entry, timestamp: iso(at) } : entry;
        }),
      });
    }
    return JSON.stringify({
      exposures: batch.items.map((i) => {
        const e = i as QueuedExposure;
        return e.context === undefined
          ? { experiment: e.experiment, assignmentId: e.assignmentId, timestamp: iso(e.at) }
          : {
              experiment: e.experiment,
              assignmentId: e.assignmentId,
              context: e.context,
              timestamp: iso(e.at),
            };
      }),
    });
  }

  /** Sends one batch until it is answered for good (or the client stops). Never throws. */
  private async send(batch: Batch): Promise<void> {
    const body = this.bodyOf(batch);
    const idempotencyKey = uuidv7();
    const n = batch.items.length;
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) return; // counted as failed by stop()
      let answer: HttpAnswer | undefined;
      let failure = '';
      try {
        answer = await httpRequest(this.cfg.baseUrl + batch.path, {
          method: 'POST',
          apiKey: this.cfg.apiKey,
          body,
          headers: { 'idempotency-key': idempotencyKey },
          timeoutMs: this.cfg.deliveryTimeoutMs,
        });
      } catch (err) {
        failure = describeError(err);
      }
      if (this.stopped) {
        // stop() counted these as lost; an answer that came in after all moves them back.
        if (answer !== undefined && answer.status < 300) {
          this.failed -= n;
          this.delivered += n;
        }
        return;
      }
      if (answer !== undefined && answer.status < 300) {
        this.accepted(batch, answer);
        return;
      }
      if (answer !== undefined && (answer.status === 401 || answer.status === 403)) {
        this.failed += n;
        this.warnings.auth(`POST ${batch.path} answered ${errorText(answer)}: ${n} item(s) dropped`);
        return;
      }
      if (answer !== undefined && !retryable(answer.status)) {
        if (n > 1) {
          // One bad item must not lose its neighbours: each alone, once.
          for (const item of batch.items) {
            await this.send({ kind: batch.kind, items: [item], path: batch.path });
          }
          return;
        }
        this.failed++;
        this.warnings.warn(
          `refused:${batch.path}`,
          `POST ${batch.path} refused an item: ${errorText(answer)}`,
        );
        return;
      }
      this.retries++;
      const why = answer !== undefined ? errorText(answer) : failure;
      const minMs = retryAfterMs(answer?.headers);
      const backoff = Math.min(this.cfg.retryMaxMs, this.cfg.retryBaseMs * 2 ** Math.min(attempt, 30));
      const delay = Math.max(minMs, backoff * (0.5 + Math.random() * 0.5));
      this.warnings.warn(
        `retry:${batch.kind}`,
        `POST ${batch.path} failed (${why}); retrying ${n} item(s) in ${Math.round(delay)} ms`,
      );
      await this.sleep(delay, minMs);
    }
  }

  private accepted(batch: Batch, answer: HttpAnswer): void {
    const n = batch.items.length;
    if (batch.kind === 'exposure') {
      const rejected = (answer.body as { rejected?: Array<{ index: number; error: string }> } | undefined)
        ?.rejected;
      if (Array.isArray(rejected) && rejected.length > 0) {
        this.failed += rejected.length;
        this.delivered += n - rejected.length;
        const first = rejected[0]!;
        this.warnings.warn(
          'exposure-rejected',
          `POST /exposures rejected ${rejected.length} of ${n} exposure(s), e.g. #${first.index}: ${first.error}`,
        );
        return;
      }
    }
    this.delivered += n;
  }

  /** Waits `ms`; wake() cuts it short, but never below `minMs` (the server's Retry-After). */
  private sleep(ms: number, minMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const start = Date.now();
      const timer = setTimeout(() => {
        this.sleeping = null;
        resolve();
      }, ms);
      // Unref'd unless someone waits on a flush: a retrying batch alone does not hold the process open.
      if (this.waiters.length === 0) timer.unref?.();
      this.sleeping = { timer, until: start + minMs, resolve };
    });
  }

  private wake(now = false): void {
    const s = this.sleeping;
    if (s === null) return;
    clearTimeout(s.timer);
    const rest = now ? 0 : s.until - Date.now();
    if (rest <= 0) {
      this.sleeping = null;
      s.resolve();
      return;
    }
    s.timer = setTimeout(() => {
      this.sleeping = null;
      s.resolve();
    }, rest);
  }
}
