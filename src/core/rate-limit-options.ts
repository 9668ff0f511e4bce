// The rate limits' settings and their defaults: read by config.ts from the environment, used by
// services/rate-limits.ts (which re-exports them). Kept apart so that configuration imports no service.

export interface RateLimitOptions {
  /** Requests per second each key may make (RATE_LIMIT_PER_SECOND); 0: no limit, unless a key sets its own. */
  perSecond: number;
  /** Failed authentications an address may make within the window before it is refused (AUTH_FAILURE_LIMIT). */
  authFailureLimit: number;
  /** The failed-authentication window, in seconds (AUTH_FAILURE_WINDOW_SECONDS). */
  authFailureWindowSeconds: number;
  /** Counters shared through this Redis (REDIS_URL); absent: in memory. */
  redisUrl?: string;
  /** What every Redis key this service writes starts with (REDIS_KEY_PREFIX). */
  redisKeyPrefix: string;
}

export const DEFAULT_RATE_LIMITS: RateLimitOptions = {
  perSecond: 0,
  authFailureLimit: 50,
  authFailureWindowSeconds: 10,
  redisKeyPrefix: 'agentsplit:',
};

/** The options with the defaults where `given` leaves a field out (or undefined). */
export function rateLimitOptions(given: Partial<RateLimitOptions> = {}): RateLimitOptions {
  const merged: RateLimitOptions = { ...DEFAULT_RATE_LIMITS };
  for (const [name, value] of Object.entries(given)) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[name] = value;
  }
  return merged;
}
