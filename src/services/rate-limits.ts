import type { Principal } from '../core/keys.js';
import { DEFAULT_RATE_LIMITS, type RateLimitOptions, rateLimitOptions } from '../core/rate-limit-options.js';
import { Counter, type PolicyName, type RateDecision, type SharedStore, seconds } from './rate-counter.js';

export type { PolicyName, RateDecision };
export { DEFAULT_RATE_LIMITS, type RateLimitOptions, rateLimitOptions };

export interface RateLimitDeps {
  /** Warnings (Redis unreachable; at most one every few seconds). */
  warn: (fields: Record<string, unknown>, message: string) => void;
  info: (fields: Record<string, unknown>, message: string) => void;
  /** A request refused with 429. */
  rateLimited: (reason: 'key' | 'failed_auth') => void;
}

/** At most one "Redis is unreachable" warning this often (ms). */
export const REDIS_WARN_EVERY_MS = 5000;
/** A Redis command slower than this counts as a failure; the request is counted in memory instead (ms). */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** How long start() waits for Redis before serving without it (ms). */
const REDIS_CONNECT_WAIT_MS = 2000;
/** Refused subjects are swept of expired entries when there are more than this many. */
const BLOCKED_SWEEP_SIZE = 1024;
/** Refusals announced at once are read back at most this many at a time (ZRANGEBYSCORE ... LIMIT). */
const BLOCKED_READ_LIMIT = 10_000;

export class RateLimits {
  private readonly perKey = new Map<number, Counter>();
  private readonly authFailures: Counter;
  private readonly prefixFailures: Counter;
  /** Subjects (addresses, key prefixes) whose failures are refused until a time (ms). */
  private readonly blocked = new Map<string, number>();
  private lastWarn = 0;
  private redisDown = false;
  /** Why the connection is down (the client's latest error), for the warning. */
  private connectionError: Error | undefined;
  private closed = false;

  private constructor(
    private readonly options: RateLimitOptions,
    private readonly deps: RateLimitDeps,
    private readonly store: SharedStore | undefined,
  ) {
    this.authFailures = new Counter(
      'failed-auth',
      options.authFailureLimit,
      options.authFailureWindowSeconds,
      `${options.redisKeyPrefix}ratelimit:auth`,
      this,
      store,
    );
    this.prefixFailures = new Counter(
      'failed-auth-prefix',
      options.authFailureLimit,
      options.authFailureWindowSeconds,
      `${options.redisKeyPrefix}ratelimit:authprefix`,
      this,
      store,
    );
  }

  /** Connects to Redis when a URL is given (waiting at most 2 s: without it, limits count in memory). */
  static async start(options: RateLimitOptions, deps: RateLimitDeps): Promise<RateLimits> {
    if (options.redisUrl === undefined) return new RateLimits(options, deps, undefined);
    // Loaded only when configured: ioredis alone adds about 20 MB of RSS.
    const [{ Redis }, { default: Limiter }] = await Promise.all([
      import('ioredis'),
      import('rate-limiter-flexible/lib/RateLimiterRedis.js'),
    ]);
    const redis = new Redis(options.redisUrl, {
      // A command is never queued while disconnected, nor retried: the request is counted in memory.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: REDIS_CONNECT_WAIT_MS,
      lazyConnect: true,
    });
    // Subscribes again by itself after reconnecting; its failures are the main connection's to report.
    const subscriber = new Redis(options.redisUrl, {
      connectTimeout: REDIS_CONNECT_WAIT_MS,
      lazyConnect: true,
    });
    const limits = new RateLimits(options, deps, { client: redis, subscriber, Limiter });
    redis.on('error', (err) => {
      limits.connectionError = err;
      limits.redisFailed(err);
    });
    redis.on('close', () => {
      limits.connectionError ??= new Error('the connection to Redis closed');
    });
    redis.on('ready', () => limits.redisReady());
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, message: string) => limits.announced(message));
    // Announcements missed while away are in the sorted set: read whenever either connection is back
    // (the read needs the main one; the one ready last does it).
    subscriber.on('ready', () => void limits.readRefusals());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([
        redis.connect().catch(() => undefined),
        subscriber
          .connect()
          .then(() => subscriber.subscribe(limits.refusalsKey))
          .then(() => limits.readRefusals())
          .catch(() => undefined),
      ]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (redis.status !== 'ready') {
      limits.redisFailed(new Error(`Redis is not ready at start (${redis.status})`));
    }
    return limits;
  }

  /** Whether counters are shared through Redis (configured; it may be away for a while). */
  get shared(): boolean {
    return this.store !== undefined;
  }

  /** Requests per second this principal may make; 0: no limit (no count, no headers). */
  limitOf(principal: Principal): number {
    return principal.rateLimitPerSecond ?? this.options.perSecond;
  }

  /** Counts one request of `principal` against its limit (`limitOf`, not 0). */
  async consume(principal: Principal, limit: number): Promise<RateDecision> {
    let counter = this.perKey.get(limit);
    if (counter === undefined) {
      counter = new Counter(
        'per-key',
        limit,
        1,
        `${this.options.redisKeyPrefix}ratelimit:key`,
        this,
        this.store,
      );
      this.perKey.set(limit, counter);
    }
    const decision = await counter.consume(principal.id);
    if (!decision.allowed) this.deps.rateLimited('key');
    return decision;
  }

  /** True when some subject is refused (the only case where `refusedFailure` needs asking). */
  get anyBlocked(): boolean {
    return this.blocked.size !== 0;
  }

  /** Seconds failures of `subject` (an address or a key prefix) must still wait; 0: not refused. */
  blockedFor(subject: string | undefined): number {
    if (subject === undefined || this.blocked.size === 0) return 0;
    const until = this.blocked.get(subject);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left <= 0) {
      this.blocked.delete(subject);
      return 0;
    }
    return seconds(left);
  }

  /**
   * For a request whose key failed: the lockout that refuses it (its address first, then the prefix of the
   * live key its wrong key starts with), for the 429's headers; null: answer 401 and count it.
   */
  refusedFailure(address: string | undefined, prefix: string | undefined): RateDecision | null {
    if (this.blocked.size === 0) return null;
    const byAddress = this.blockedFor(address);
    const subject = byAddress !== 0 ? address : this.blockedFor(prefix) !== 0 ? prefix : undefined;
    if (subject === undefined) return null;
    const resetMs = this.blocked.get(subject)! - Date.now();
    this.deps.rateLimited('failed_auth');
    return {
      allowed: false,
      policy: subject === address ? 'failed-auth' : 'failed-auth-prefix',
      quota: this.options.authFailureLimit,
      windowSeconds: this.options.authFailureWindowSeconds,
      remaining: 0,
      resetSeconds: seconds(resetMs),
      resetMs,
    };
  }

  /**
   * Counts a failed authentication (answered 401) from `address`, and against `prefix` when the wrong key
   * starts with a live key's prefix. A subject that has used up its quota in the window has its further
   * failures refused (429) until the window ends.
   */
  async failedAuthentication(address: string | undefined, prefix?: string): Promise<void> {
    await Promise.all([
      address === undefined ? undefined : this.countFailure(this.authFailures, address, 'client'),
      prefix === undefined ? undefined : this.countFailure(this.prefixFailures, prefix, 'keyPrefix'),
    ]);
  }

  private async countFailure(counter: Counter, subject: string, kind: 'client' | 'keyPrefix'): Promise<void> {
    let decision: RateDecision;
    try {
      decision = await counter.consume(subject);
    } catch {
      return; // the memory counter does not fail; if it ever did, the 401 still stands
    }
    if (decision.remaining > 0 && decision.allowed) return;
    if (this.block(subject, Date.now() + decision.resetMs)) {
      // Once per lockout, on the instance that counted it: who to look at (the address as TRUST_PROXY
      // makes it; a prefix is what key lists show, no secret).
      this.deps.warn(
        { [kind]: subject, seconds: decision.resetSeconds, policy: counter.policy },
        'too many failed authentications: further failures are refused (valid keys are still served)',
      );
    }
    await this.announce(subject, decision.resetMs);
  }

  /** Where refusals are recorded (a sorted set: subject by the time it is refused until) and announced. */
  get refusalsKey(): string {
    return `${this.options.redisKeyPrefix}ratelimit:refused`;
  }

  /**
   * Refuses `subject`'s failures until `until` (ms), or longer if it is refused longer already. True when
   * it was not refused before.
   */
  private block(subject: string, until: number): boolean {
    const before = this.blocked.get(subject) ?? 0;
    if (until <= Date.now() || before >= until) return false;
    if (this.blocked.size >= BLOCKED_SWEEP_SIZE) this.sweep();
    this.blocked.set(subject, until);
    return before <= Date.now();
  }

  /**
   * Tells every instance (and those that connect later) that `subject` is refused for `ms`. Redis away:
   * the refusal holds on this instance only, as the counts do then.
   */
  private async announce(subject: string, ms: number): Promise<void> {
    if (this.store === undefined) return;
    const now = Date.now();
    try {
      await this.store.client
        .multi()
        .zadd(this.refusalsKey, now + ms, subject)
        .zremrangebyscore(this.refusalsKey, '-inf', now)
        .pexpire(this.refusalsKey, Math.max(ms, this.options.authFailureWindowSeconds * 1000))
        .publish(this.refusalsKey, `${ms} ${subject}`)
        .exec();
    } catch (err) {
      this.redisFailed(err);
    }
  }

  /** A refusal another instance (or this one) announced: `<ms> <subject>`. */
  announced(message: string): void {
    const space = message.indexOf(' ');
    const ms = Number(message.slice(0, space));
    if (space <= 0 || !Number.isFinite(ms)) return;
    this.block(message.slice(space + 1), Date.now() + ms);
  }

  /** Reads the refusals in force from Redis (at every connection of the subscriber). */
  async readRefusals(): Promise<void> {
    if (this.store === undefined || this.store.client.status !== 'ready') return;
    try {
      const found = await this.store.client.zrangebyscore(
        this.refusalsKey,
        Date.now(),
        '+inf',
        'WITHSCORES',
        'LIMIT',
        0,
        BLOCKED_READ_LIMIT,
      );
      for (let i = 0; i + 1 < found.length; i += 2) this.block(found[i]!, Number(found[i + 1]));
    } catch (err) {
      this.redisFailed(err);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [subject, until] of this.blocked) if (until <= now) this.blocked.delete(subject);
  }

  /** Redis failed (a connection error or a command that failed): warn, at most every few seconds. */
  redisFailed(err: unknown): void {
    if (this.closed) return;
    this.redisDown = true;
    const now = Date.now();
    if (now - this.lastWarn < REDIS_WARN_EVERY_MS) return;
    this.lastWarn = now;
    // "Connection is not ready" says less than what brought the connection down.
    this.deps.warn(
      { err: this.connectionError ?? err },
      'Redis is unreachable for rate limits: requests are served, and limits are counted in this ' +
        "instance's memory until it is back",
    );
  }

  private redisReady(): void {
    void this.readRefusals();
    this.connectionError = undefined;
    if (!this.redisDown) return;
    this.redisDown = false;
    this.lastWarn = 0;
    this.deps.info({}, 'Redis is reachable again: rate limits are shared across instances');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.store === undefined) return;
    // A subscriber queues commands while away (QUIT would wait for Redis): it is just disconnected.
    this.store.subscriber.disconnect();
    try {
      await this.store.client.quit();
    } catch {
      this.store.client.disconnect();
    }
  }
}
