// The client: assign (remote or local), log, track, feedback, flush, close. Fail-open throughout: no call
// throws or rejects because of the service; problems go to the logger (docs/client-contract.md).
import { assignLocal, drawLocal } from './assign-local.js';
import { type AssignTarget, requestAssignment } from './assign-remote.js';
import { defaultAssignment, isObject } from './assignment.js';
import { Delivery } from './delivery.js';
import { describeError } from './http.js';
import { LOCAL_DRAW, type LocalDraw, WARN } from './internal.js';
import { Definitions } from './local.js';
import type { ManageTarget } from './manage.js';
import { ManagementCalls } from './management.js';
import type { QueuedExposure } from './queue.js';
import { runEntry } from './track.js';
import type {
  AgentSplitOptions,
  Assignment,
  AssignOptions,
  DeliveryStats,
  FeedbackEntry,
  JsonObject,
  LogEntry,
  Run,
  TrackOptions,
} from './types.js';
import { Warnings } from './warnings.js';

function env(name: string): string | undefined {
  return typeof process !== 'undefined' ? process.env?.[name] : undefined;
}

export class AgentSplit<P = JsonObject> extends ManagementCalls {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly flushTimeoutMs: number;
  private readonly managementTimeoutMs: number;
  private readonly warnings: Warnings;
  private readonly delivery: Delivery;
  private readonly definitions: Definitions | undefined;
  /** Why the client cannot reach the service at all (no URL or key), or ''. */
  private readonly unusable: string;
  private closed = false;
  private closing: Promise<number> | undefined;
  private enqueued = 0;
  private exitFlushedAt = -1;
  private readonly onBeforeExit: (() => void) | undefined;
  /** Counts an exposure of a local assignment and queues it. */
  private readonly expose = (item: QueuedExposure): void => {
    this.enqueued++;
    this.delivery.enqueue(item);
  };

  constructor(options: AgentSplitOptions = {}) {
    super();
    this.baseUrl = (options.baseUrl ?? env('AGENTSPLIT_URL') ?? '').replace(/\/+$/, '');
    this.apiKey = options.apiKey ?? env('AGENTSPLIT_API_KEY') ?? '';
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.flushTimeoutMs = options.flushTimeoutMs ?? 10_000;
    this.managementTimeoutMs = options.managementTimeoutMs ?? 10_000;
    this.warnings = new Warnings(options.logger ?? console);
    this.unusable =
      this.baseUrl === ''
        ? 'no baseUrl (nor AGENTSPLIT_URL)'
        : this.apiKey === ''
          ? 'no apiKey (nor AGENTSPLIT_API_KEY)'
          : '';
    if (this.unusable !== '') {
      this.warnings.error(`${this.unusable}: every assign answers its default and nothing is sent`);
    }
    const batchSize = Math.max(1, Math.min(1000, options.batchSize ?? 100));
    this.delivery = new Delivery(
      {
        baseUrl: this.baseUrl,
        apiKey: this.apiKey,
        batchSize,
        maxQueueSize: Math.max(1, options.maxQueueSize ?? 10_000),
        flushIntervalMs: options.flushIntervalMs ?? 1000,
        deliveryTimeoutMs: options.deliveryTimeoutMs ?? 10_000,
        retryBaseMs: options.retryBaseMs ?? 500,
        retryMaxMs: options.retryMaxMs ?? 30_000,
      },
      this.warnings,
    );
    if (options.local && this.unusable === '') {
      this.definitions = new Definitions(
        this.baseUrl,
        this.apiKey,
        this.timeoutMs,
        options.definitionsRefreshMs ?? 5000,
        this.warnings,
      );
    }
    if ((options.flushOnExit ?? true) && typeof process !== 'undefined' && typeof process.on === 'function') {
      this.onBeforeExit = () => {
        // Once per batch of new items: a flush that could not deliver must not loop the exit forever.
        if (this.delivery.idle() || this.exitFlushedAt === this.enqueued) return;
        this.exitFlushedAt = this.enqueued;
        const timeoutMs = this.flushTimeoutMs;
        void this.delivery.flush(timeoutMs).then((done) => {
          // Not delivered in time: say how much is lost, and abort what is in flight so the process
          // can exit now rather than when the request times out.
          if (!done) {
            this.shutDown(
              `exit flush: %n item(s) not delivered within ${timeoutMs} ms (call close() in your shutdown path)`,
            );
          }
        });
      };
      process.on('beforeExit', this.onBeforeExit);
    }
  }

  /**
   * The variant `userId` gets in experiment `slug`. Remote (POST /experiment/:slug/assign, at most
   * timeoutMs) or, with `local: true`, in-process from the definitions. Never rejects: on any failure it
   * answers `options.default` with source 'default'.
   */
  assign(slug: string, userId: string, options?: AssignOptions<P>): Promise<Assignment<P>> {
    // Not an async function: local mode's usual answer is a resolved promise without a coroutine.
    if (this.closed) return Promise.resolve(this.afterClose(`assign ${slug}`, slug, userId, options));
    if (this.definitions !== undefined) {
      if (this.definitions.loaded) return Promise.resolve(this.assignLocal(slug, userId, options));
      return this.definitions.ready.then(() => this.assignLocal(slug, userId, options));
    }
    return this.assignRemote(slug, userId, options);
  }

  private async assignRemote(
    slug: string,
    userId: string,
    options?: AssignOptions<P>,
  ): Promise<Assignment<P>> {
    if (this.unusable !== '') return defaultAssignment(slug, userId, options);
    const to: AssignTarget = { baseUrl: this.baseUrl, apiKey: this.apiKey, timeoutMs: this.timeoutMs };
    return (
      (await requestAssignment(to, slug, userId, options, this.warnings)) ??
      defaultAssignment(slug, userId, options)
    );
  }

  /**
   * The in-process assignment, synchronously (needs `local: true`): the same draw and sticky hash as the
   * server, an id in the server's form, and an exposure queued for POST /exposures. Answers the default
   * while no definitions are loaded or when the experiment is not among them (not running, unknown).
   */
  assignLocal(slug: string, userId: string, options?: AssignOptions<P>): Assignment<P> {
    if (this.closed) return this.afterClose(`assign ${slug}`, slug, userId, options);
    return assignLocal(this.definitions, slug, userId, options, this.warnings, this.expose);
  }

  /** For the OpenFeature provider: the local draw, its exposure recorded only if the caller takes it. */
  [LOCAL_DRAW](slug: string, userId: string, context?: JsonObject): LocalDraw {
    if (this.closed) return { kind: 'closed', message: 'the client is closed' };
    return drawLocal(this.definitions, this.unusable, slug, userId, context, this.expose);
  }

  /** For the OpenFeature provider: a warning through this client's logger (one a second per kind). */
  [WARN](kind: string, message: string): void {
    this.warnings.warn(kind, message);
  }

  /**
   * Queues a result for POST /experiment/:slug/logs (sent in the background). An entry without a
   * variantKey (a default assignment's) is not sent.
   */
  log(slug: string, entry: LogEntry): void {
    try {
      if (!entry || typeof entry.variantKey !== 'string' || entry.variantKey === '') return;
      if (this.closed) {
        this.dropClosed(`log ${slug}`);
        return;
      }
      if (this.unusable !== '') return;
      const copy: LogEntry = { ...entry };
      if (copy.assignmentId === '') delete copy.assignmentId;
      this.enqueued++;
      this.delivery.enqueue({ kind: 'log', slug, entry: copy, at: Date.now() });
    } catch (err) {
      this.warnings.warn('log:error', `log ${slug} failed (${describeError(err)})`);
    }
  }

  /**
   * Runs `fn` for assignment `a`, timing it, and logs the run: `metrics.latency_ms`, `metrics.error`
   * (true when `fn` threw, else false unless set), `run.output` and `run.metrics` as `fn` left them.
   * Returns what `fn` returns; re-throws `fn`'s own error, never one of the client's.
   * A default assignment runs `fn` and logs nothing.
   */
  async track<T>(a: Assignment<P>, fn: (run: Run) => T | Promise<T>, options?: TrackOptions): Promise<T> {
    const run: Run = { metrics: { ...options?.metrics } };
    if (options?.input !== undefined) run.input = options.input;
    if (options?.context !== undefined) run.context = options.context;
    const start = performance.now();
    let result: T;
    try {
      result = await fn(run);
    } catch (err) {
      this.record(a, run, start, err, true);
      throw err;
    }
    this.record(a, run, start, undefined, false);
    return result;
  }

  private record(a: Assignment<P>, run: Run, start: number, err: unknown, failed: boolean): void {
    try {
      const entry = runEntry(a, run, start, err, failed);
      if (entry !== undefined) this.log(a.experiment, entry);
    } catch (e) {
      this.warnings.warn('track:error', `track ${a?.experiment} could not log its run (${describeError(e)})`);
    }
  }

  /**
   * Queues late feedback (a thumbs-up, a judge's score) on an assignment or a result of experiment `slug`,
   * by assignmentId or logId. Sent in the background with the feedback of every experiment, up to
   * batchSize items a POST /feedback. Sending the same metric again for the same target replaces its value.
   */
  feedback(slug: string, entry: FeedbackEntry): void {
    try {
      if (!entry || (!entry.assignmentId && !entry.logId)) return; // a default assignment has no id
      if (this.closed) {
        this.dropClosed(`feedback ${slug}`);
        return;
      }
      if (this.unusable !== '') return;
      if (!isObject(entry.metrics) || Object.keys(entry.metrics).length === 0) {
        this.warnings.warn('feedback:invalid', `feedback ${slug} needs at least one metric: not sent`);
        return;
      }
      const copy: FeedbackEntry = { metrics: { ...entry.metrics } };
      if (entry.assignmentId) copy.assignmentId = entry.assignmentId;
      else copy.logId = entry.logId;
      if (entry.comment !== undefined) copy.comment = entry.comment;
      this.enqueued++;
      this.delivery.enqueue({ kind: 'feedback', slug, entry: copy });
    } catch (err) {
      this.warnings.warn('feedback:error', `feedback ${slug} failed (${describeError(err)})`);
    }
  }

  /**
   * Sends everything queued and waits for the answers, at most `timeoutMs` (default flushTimeoutMs).
   * Resolves true once nothing is left to send (every item committed, counted in `delivered`, or refused
   * by the server for good, in `failed`); false when the timeout passed first (`queued` + `inFlight`
   * items still wait, and are still retried). Never rejects.
   */
  async flush(timeoutMs: number = this.flushTimeoutMs): Promise<boolean> {
    try {
      return await this.delivery.flush(timeoutMs);
    } catch {
      return false;
    }
  }

  /**
   * Flushes what was queued before it (at most timeoutMs), then ends all work: the request in flight is
   * aborted, nothing is sent or retried after close resolves, the definitions' refresh stops. Resolves with
   * how many items were not delivered (0: all were), said as "closed with N item(s) not delivered" and
   * counted in `failed`. Calls made after close() answer the default (assign) or are dropped, counted as
   * failed and said once. Never rejects; a second call answers the first's promise.
   */
  close(timeoutMs: number = this.flushTimeoutMs): Promise<number> {
    this.closed = true;
    this.closing ??= (async () => {
      try {
        await this.delivery.flush(timeoutMs);
      } catch {
        // never raise
      }
      return this.shutDown(`closed with %n item(s) not delivered within ${timeoutMs} ms`);
    })();
    return this.closing;
  }

  /** Stops delivery (aborting requests in flight) and the definitions' refresh; says what was lost. */
  private shutDown(lost: string): number {
    this.closed = true;
    const n = this.delivery.stop();
    this.definitions?.stop();
    if (this.onBeforeExit !== undefined) process.removeListener('beforeExit', this.onBeforeExit);
    if (n > 0) this.warnings.warn('closed', lost.replace('%n', String(n)));
    return n;
  }

  protected target(): ManageTarget {
    return {
      baseUrl: this.baseUrl,
      apiKey: this.apiKey,
      timeoutMs: this.managementTimeoutMs,
      unusable: this.unusable,
      closed: this.closed,
    };
  }

  /** Re-reads the definitions now (local mode); resolves when done, never rejects. */
  async refreshDefinitions(): Promise<void> {
    await this.definitions?.refresh();
  }

  /** Counters of the background delivery. */
  stats(): DeliveryStats & { closed: boolean; definitionsLoaded: boolean } {
    return {
      ...this.delivery.stats(),
      closed: this.closed,
      definitionsLoaded: this.definitions?.loaded ?? false,
    };
  }

  /** A call after close: said once, counted as failed. */
  private dropClosed(what: string): void {
    this.delivery.discard();
    this.warnings.once('closed-call', `client is closed: ${what} dropped`);
  }

  private afterClose(
    what: string,
    slug: string,
    userId: string,
    options: AssignOptions<P> | undefined,
  ): Assignment<P> {
    this.dropClosed(what);
    return defaultAssignment(slug, userId, options);
  }
}
