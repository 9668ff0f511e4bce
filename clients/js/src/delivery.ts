// Background delivery: logs, feedback and exposures wait in one bounded queue and go out in batches,
// every flushIntervalMs or as soon as batchSize items wait. Retries keep each batch's Idempotency-Key, so
// a retry never double-counts. Nothing here throws to the caller.
import { type Batch, batchBody, failing, formBatches, MAX_FAILING_ATTEMPTS, retryable } from './batch.js';
import { describeError, errorText, type HttpAnswer, httpRequest, retryAfterMs } from './http.js';
import { uuidv7 } from './ids.js';
import { describeItem, type QueuedItem, Ring } from './queue.js';
import { RetryWait } from './retry-wait.js';
import type { DeliveryStats } from './types.js';
import type { Warnings } from './warnings.js';

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

function reason(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
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
  /** The wait of a batch before its retry. */
  private readonly pause = new RetryWait();
  /** Aborts the requests in flight when the worker stops. */
  private readonly aborter = new AbortController();

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
      this.warnings.once('closed', `client is closed: ${describeItem(item)} dropped`);
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
      this.pause.wake();
    });
  }

  /** Counts an item the client refused to queue (a call after close) as failed. */
  discard(): void {
    this.failed++;
  }

  /**
   * Stops the worker and aborts the request in flight, so nothing of the client is left running: an item
   * still queued, in flight or retrying is counted as failed. Answers how many that was.
   */
  stop(): number {
    if (this.stopped) return 0;
    this.stopped = true;
    clearInterval(this.timer);
    this.pause.wake(true);
    const n = this.queue.size + this.inFlight;
    this.failed += n;
    this.inFlight = 0;
    while (this.queue.shift() !== undefined) {}
    this.aborter.abort();
    return n;
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
          if (this.stopped) break;
          await this.send(batch);
        }
      }
    } catch (err) {
      // Not expected (send never throws): what this round still held is counted, never lost silently.
      this.warnings.error(`delivery worker failed: ${describeError(err)}`);
      if (!this.stopped) {
        this.failed += this.inFlight;
        this.inFlight = 0;
      }
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

  /** `ok` items delivered and `bad` failed, out of those in flight (stop() counted them all as failed). */
  private settle(ok: number, bad: number): void {
    if (this.stopped) {
      this.failed -= ok;
      this.delivered += ok;
      return;
    }
    this.inFlight -= ok + bad;
    this.delivered += ok;
    this.failed += bad;
  }

  /** The batches of `items`; one that cannot be serialised is dropped and counted as failed, with a warning. */
  private group(items: QueuedItem[]): Batch[] {
    return formBatches(items, this.cfg.batchSize, (item, err) => {
      this.settle(0, 1);
      this.warnings.warn(
        'unserialisable',
        `${describeItem(item)} dropped: it cannot be serialised as JSON (${reason(err)})`,
      );
    });
  }

  /** Sends each item of `batch` alone, once (a refused or failing batch: one bad item must not lose the rest). */
  private async sendEach(batch: Batch): Promise<void> {
    for (const json of batch.json) {
      if (this.stopped) return;
      await this.send({ kind: batch.kind, json: [json], path: batch.path, split: true });
    }
  }

  /** Sends one batch until it is answered for good, given up, or the client stops. Never throws. */
  private async send(batch: Batch): Promise<void> {
    const body = batchBody(batch);
    const idempotencyKey = uuidv7();
    const n = batch.json.length;
    let failures = 0;
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
          signal: this.aborter.signal,
        });
      } catch (err) {
        failure = describeError(err);
      }
      if (this.stopped) {
        // stop() counted these as lost; an answer that came in after all moves them back.
        if (answer !== undefined && answer.status < 300) this.settle(n, 0);
        return;
      }
      if (answer !== undefined && answer.status < 300) {
        this.accepted(batch, answer);
        return;
      }
      if (answer !== undefined && (answer.status === 401 || answer.status === 403)) {
        this.settle(0, n);
        this.warnings.auth(`POST ${batch.path} answered ${errorText(answer)}: ${n} item(s) dropped`);
        return;
      }
      if (answer !== undefined && !retryable(answer.status)) {
        if (n > 1 && !batch.split) {
          await this.sendEach(batch);
          return;
        }
        this.settle(0, n);
        this.warnings.warn(
          `refused:${batch.path}`,
          `POST ${batch.path} refused an item: ${errorText(answer)}`,
        );
        return;
      }
      if (answer !== undefined && failing(answer.status)) {
        failures++;
        if (failures >= (batch.split ? 1 : MAX_FAILING_ATTEMPTS)) {
          if (n > 1) {
            this.warnings.warn(
              `failing:${batch.path}`,
              `POST ${batch.path} answered ${errorText(answer)} ${failures} times for ${n} item(s): sending them one by one`,
            );
            await this.sendEach(batch);
            return;
          }
          this.settle(0, n);
          this.warnings.warn(
            `failing-item:${batch.path}`,
            `POST ${batch.path} answered ${errorText(answer)} ${failures} time(s) for an item: dropped`,
          );
          return;
        }
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
      // Unref'd unless someone waits on a flush: a retrying batch alone does not hold the process open.
      await this.pause.sleep(delay, minMs, this.waiters.length > 0);
    }
  }

  private accepted(batch: Batch, answer: HttpAnswer): void {
    const n = batch.json.length;
    const b = answer.body as
      | { rejected?: Array<{ index: number; error: string }>; warnings?: unknown; warning?: unknown }
      | undefined;
    if (batch.kind !== 'log') {
      // Exposures and feedback: the items the server could not take come back by index, not stored.
      const rejected = b?.rejected;
      if (Array.isArray(rejected) && rejected.length > 0) {
        this.settle(n - rejected.length, rejected.length);
        const first = rejected[0]!;
        this.warnings.warn(
          `${batch.kind}-rejected`,
          `POST ${batch.path} rejected ${rejected.length} of ${n} ${batch.kind === 'exposure' ? 'exposure(s)' : 'feedback item(s)'}, e.g. #${first.index}: ${first.error}`,
        );
        return;
      }
    }
    // Stored, with a warning (an unknown variantKey: stored and flagged; a metric not analysed).
    const said = Array.isArray(b?.warnings) ? b.warnings : typeof b?.warning === 'string' ? [b.warning] : [];
    if (said.length > 0) {
      this.warnings.warn(
        `server-warning:${batch.path}`,
        `POST ${batch.path}: the server warned: ${said.slice(0, 3).join('; ')}${said.length > 3 ? ` (and ${said.length - 3} more)` : ''}`,
      );
    }
    this.settle(n, 0);
  }
}
