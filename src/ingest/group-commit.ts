// Group commit: results of requests that arrive together share one transaction; exposures ride along.
import { UnavailableError } from '../core/errors.js';
import type { Exposure } from '../core/exposure.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { ExposureBatch, NewFeedback, NewResult, Write } from '../core/writes.js';
import { ExposureQueue } from './exposure-queue.js';

interface Waiting {
  results: NewResult[];
  /** Late feedback, committed like results (ADR 0018). */
  feedback?: NewFeedback[];
  /**
   * Exposures a client assigned locally (POST /exposures), committed before their answer (ADR 0019),
   * each once per assignment id (the store leaves out ids it stored before).
   */
  clientExposures?: Exposure[];
  /** The request's Idempotency-Key answer, committed with its results. */
  record?: IdempotencyRecord;
  /** performance.now() when the results were handed in. */
  enqueuedAt: number;
  /** With the cap's decision for each of its results (Store.appendBatch's BatchDecisions). */
  resolve: (metricsOverCap: Array<string[] | null>) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
  /** Most results in one transaction (a single request's results are never split). */
  maxResultsPerBatch?: number;
  /** Most exposures in one transaction. */
  maxExposuresPerBatch?: number;
  /** Exposures held in memory while the database is slow; beyond it they are dropped and counted. */
  maxBufferedExposures?: number;
  onExposureError?: (err: unknown, lost: number) => void;
  /** Called when the buffer is full and exposures are dropped (count now, total so far). */
  onExposuresDropped?: (count: number, total: number) => void;
  /** After the database was unavailable, how long exposures wait before the next attempt (ms). */
  retryDelayMs?: number;
  /**
   * Exposures alone (no result waiting) are written once this many are pending, or `exposureDelayMs`
   * after the first one: nobody waits for them, so fewer, larger transactions cost less.
   */
  exposureFlushSize?: number;
  exposureDelayMs?: number;
  /**
   * After each batch committed whole (the metrics): its results and exposures, and when each request's
   * results were handed in (performance.now()). Must not throw.
   */
  onCommit?: (info: { results: number; exposures: number; enqueuedAt: number[] }) => void;
  /**
   * Batches in flight at once (default 1). PostgreSQL takes 2: one commits while the next is planned and
   * sent. SQLite's single writer gains nothing. Exposures ride in one batch at a time, so they are stored
   * (and put back after an outage) in the order they were assigned.
   */
  concurrency?: number;
}

/**
 * Batches of results are sized by what is waiting, not by a timer: the first write starts on the next
 * turn of the event loop, and whatever arrives while a transaction commits goes into the next one.
 * Exposures ride along with results; alone, they are written by size or after a short delay.
 * A failed batch is retried request by request, so one bad request cannot fail its neighbours.
 * While the database is unavailable, waiting requests fail at once (the client retries on 503) and
 * exposures stay buffered for the next attempt.
 */
export class GroupCommit {
  private waiting: Waiting[] = [];
  private readonly exposures: ExposureQueue;
  /** Batches being written (at most options.concurrency). */
  private running = 0;
  /** A running batch carries queued exposures: the next one leaves them for it (their order). */
  private exposuresRunning = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private exposureTimer: NodeJS.Timeout | undefined;
  /** Pending exposures are to be written now (size reached, delay passed, or drain). */
  private exposuresDue = false;
  droppedExposures = 0;
  private readonly maxResults: number;
  private readonly maxExposures: number;

  constructor(
    private readonly write: Write,
    private readonly options: GroupCommitOptions = {},
  ) {
    this.maxResults = options.maxResultsPerBatch ?? 5000;
    this.maxExposures = options.maxExposuresPerBatch ?? 10000;
    this.exposures = new ExposureQueue(options.maxBufferedExposures ?? 200_000, this.maxExposures);
  }

  /**
   * Resolves once the results are committed, with each one's metric names the cap left out (null: none;
   * ADR 0014); rejects with the database's error if they were not.
   */
  appendResults(results: NewResult[], record?: IdempotencyRecord): Promise<Array<string[] | null>> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ results, record: record, enqueuedAt: performance.now(), resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once the feedback is committed (in the next batch, with whatever results are waiting). */
  appendFeedback(feedback: NewFeedback[], record?: IdempotencyRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => resolve();
      this.waiting.push({
        results: [],
        feedback,
        record: record,
        enqueuedAt: performance.now(),
        resolve: done,
        reject,
      });
      this.schedule();
    });
  }

  /**
   * Resolves once the exposures are committed: a client's locally made assignments (ADR 0019), whose
   * 200 promises they are stored, unlike assign's own exposures which nobody waits for.
   */
  appendExposures(exposures: Exposure[], record?: IdempotencyRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({
        results: [],
        clientExposures: exposures,
        record: record,
        enqueuedAt: performance.now(),
        resolve: () => resolve(),
        reject,
      });
      this.schedule();
    });
  }

  /** Never waits: the exposure is serialized into the queue at once and written with the next batch. */
  appendExposure(exposure: Exposure): void {
    if (!this.exposures.append(exposure)) {
      this.drop(1);
      return;
    }
    if (this.exposures.size >= (this.options.exposureFlushSize ?? 1000)) {
      this.exposuresDue = true;
      this.schedule();
    } else if (!this.exposureTimer) {
      this.exposureTimer = setTimeout(() => {
        this.exposureTimer = undefined;
        this.exposuresDue = true;
        this.schedule();
      }, this.options.exposureDelayMs ?? 50);
      this.exposureTimer.unref();
    }
  }

  get pendingExposures(): number {
    return this.exposures.size;
  }

  /**
   * Resolves once everything handed in so far has been attempted: written, or failed (exposures that
   * could not be written then are still counted in `pendingExposures`).
   */
  drain(): Promise<void> {
    if (this.running === 0 && !this.scheduled && this.waiting.length === 0 && this.exposures.size === 0) {
      return Promise.resolve();
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.exposuresDue = true;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.schedule();
    return idle;
  }

  private schedule(): void {
    // After an outage only exposures wait for the retry timer; results are tried at once (and fail at
    // once while the database is still away).
    if (
      this.running >= (this.options.concurrency ?? 1) ||
      this.scheduled ||
      (this.retryTimer && this.waiting.length === 0)
    ) {
      return;
    }
    // A second batch only starts for requests waiting (exposures alone go with the running one's loop).
    if (this.running > 0 && this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running++;
    const exposuresFree = () => !this.exposuresRunning && this.exposuresDue && this.exposures.size > 0;
    while (this.waiting.length > 0 || exposuresFree()) {
      const groups = this.takeGroups();
      let exposures: ExposureBatch[] = [];
      if (!this.exposuresRunning) {
        exposures = this.exposures.take(this.maxExposures);
        if (this.exposures.size === 0) this.exposuresDue = false;
      }
      this.exposuresRunning ||= exposures.length > 0;
      const available = await this.commit(groups, exposures).finally(() => {
        if (exposures.length > 0) this.exposuresRunning = false;
      });
      if (!available && this.waiting.length === 0) {
        if (this.retryTimer) break;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.exposuresDue = true;
          this.schedule();
        }, this.options.retryDelayMs ?? 1000);
        this.retryTimer.unref();
        break;
      }
    }
    this.running--;
    if (this.running > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private takeGroups(): Waiting[] {
    let results = 0;
    let n = 0;
    while (
      n < this.waiting.length &&
      (n === 0 || results + this.waiting[n]!.results.length <= this.maxResults)
    ) {
      results += this.waiting[n]!.results.length;
      n++;
    }
    return this.waiting.splice(0, n);
  }

  /** False when the database was unavailable (then the exposures are back in the buffer). */
  private async commit(groups: Waiting[], exposures: ExposureBatch[]): Promise<boolean> {
    try {
      const decided = await this.write({
        results: groups.flatMap((g) => g.results),
        exposures,
        clientExposures: groups.flatMap((g) => g.clientExposures ?? []),
        feedback: groups.flatMap((g) => g.feedback ?? []),
        idempotencyRecords: recordsOf(groups),
      });
      let from = 0;
      for (const g of groups) {
        const to = from + g.results.length;
        g.resolve(overCapOf(decided, g.results.length, from, to));
        from = to;
      }
      if (this.options.onCommit) {
        const enqueuedAt = groups.map((g) => g.enqueuedAt);
        const results = groups.reduce((n, g) => n + g.results.length, 0);
        const waited = groups.reduce((n, g) => n + (g.clientExposures?.length ?? 0), 0);
        this.options.onCommit({ results, exposures: count(exposures) + waited, enqueuedAt });
      }
      return true;
    } catch (err) {
      if (err instanceof UnavailableError) {
        for (const g of groups) g.reject(err);
        this.putBack(exposures);
        return false;
      }
      if (groups.length + (exposures.length > 0 ? 1 : 0) <= 1) {
        for (const g of groups) g.reject(err);
        if (exposures.length > 0) this.options.onExposureError?.(err, count(exposures));
        return true;
      }
    }
    // Isolate the failure: each part on its own.
    if (exposures.length > 0) {
      await this.write({ results: [], exposures }).catch((err) => {
        if (err instanceof UnavailableError) this.putBack(exposures);
        else this.options.onExposureError?.(err, count(exposures));
      });
    }
    for (const g of groups) {
      await this.write({
        results: g.results,
        exposures: [],
        clientExposures: g.clientExposures,
        feedback: g.feedback,
        idempotencyRecords: recordsOf([g]),
      }).then((decided) => g.resolve(overCapOf(decided, g.results.length, 0, g.results.length)), g.reject);
    }
    return true;
  }

  private drop(n: number): void {
    this.droppedExposures += n;
    this.options.onExposuresDropped?.(n, this.droppedExposures);
  }

  /** Back to the front of the buffer, in order; what no longer fits is dropped and counted. */
  private putBack(exposures: ExposureBatch[]): void {
    const dropped = this.exposures.putBack(exposures);
    if (dropped > 0) this.drop(dropped);
  }
}

function recordsOf(groups: Waiting[]): IdempotencyRecord[] {
  const answers: IdempotencyRecord[] = [];
  for (const g of groups) if (g.record !== undefined) answers.push(g.record);
  return answers;
}

function count(batches: ExposureBatch[]): number {
  return batches.reduce((n, b) => n + b.count, 0);
}

/** A group's part of the store's decisions (results from..to of the batch); a writer that decided nothing: none over. */
function overCapOf(
  decided: Awaited<ReturnType<Write>>,
  n: number,
  from: number,
  to: number,
): Array<string[] | null> {
  return decided ? decided.metricsOverCap.slice(from, to) : new Array<null>(n).fill(null);
}
