// One rate-limit policy's counter (ADR 0017): rate-limiter-flexible in Redis when there is one, and
// always in memory, used while Redis is away (fail open). services/rate-limits.ts owns the policies.
import type { Redis } from 'ioredis';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';

/** The policies, named as the RateLimit and RateLimit-Policy headers name them. */
export type PolicyName = 'per-key' | 'failed-auth' | 'failed-auth-prefix';

/** What a count decided: a rate decision (not the analysis's verdict). */
export interface RateDecision {
  allowed: boolean;
  policy: PolicyName;
  /** The quota of the policy (requests, or failed attempts). */
  quota: number;
  /** The policy's window, in seconds. */
  windowSeconds: number;
  /** What is left of the quota in the current window. */
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
  /** The same in milliseconds. */
  resetMs: number;
}

/** Whole seconds, at least 1. */
export function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** One policy's counter: in Redis when there is one, and always in memory (used while Redis is away). */
export class Counter {
  private readonly memory: InstanceType<typeof RateLimiterMemory>;
  private readonly shared: RateLimiterRedis | undefined;

  constructor(
    readonly policy: PolicyName,
    readonly quota: number,
    readonly windowSeconds: number,
    keyPrefix: string,
    private readonly owner: { redisFailed(err: unknown): void },
    redis: SharedStore | undefined,
  ) {
    const options = { points: quota, duration: windowSeconds, keyPrefix };
    this.memory = new RateLimiterMemory(options);
    this.shared =
      redis === undefined
        ? undefined
        : new redis.Limiter({ ...options, storeClient: redis.client, rejectIfRedisNotReady: true });
  }

  private decision(res: InstanceType<typeof RateLimiterRes>, allowed: boolean): RateDecision {
    return {
      allowed,
      policy: this.policy,
      quota: this.quota,
      windowSeconds: this.windowSeconds,
      remaining: res.remainingPoints,
      resetSeconds: seconds(res.msBeforeNext),
      resetMs: res.msBeforeNext,
    };
  }

  /**
   * Counts one request under `key`. In Redis when it answers; when it does not (down, not yet connected,
   * slow), in memory, and the warning says why: the request is served either way (fail open).
   */
  async consume(key: string): Promise<RateDecision> {
    if (this.shared !== undefined) {
      try {
        return this.decision(await this.shared.consume(key), true);
      } catch (err) {
        if (err instanceof RateLimiterRes) return this.decision(err, false);
        this.owner.redisFailed(err);
      }
    }
    try {
      return this.decision(await this.memory.consume(key), true);
    } catch (err) {
      if (err instanceof RateLimiterRes) return this.decision(err, false);
      // Not expected of a memory counter; if it happens, the request is served (fail open).
      const ms = this.windowSeconds * 1000;
      return this.decision(new RateLimiterRes(this.quota, ms, 0), true);
    }
  }
}

/** Redis and the limiter class that counts in it (both loaded only when REDIS_URL is set). */
export interface SharedStore {
  client: Redis;
  /** A second connection, in subscriber mode: refusals announced by other instances. */
  subscriber: Redis;
  Limiter: typeof RateLimiterRedis;
}
