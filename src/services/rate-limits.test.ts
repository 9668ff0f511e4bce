// RateLimits in memory (the Redis paths are tested end to end in test/api-rate-limits.test.ts), the
// header fields, and the configuration variables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, loadConfig } from '../config.js';
import { type Principal, ROOT } from '../core/keys.js';
import { limitField, policyField, tooManyHeaders, tooManyMessage } from '../http/rate-limit.js';
import { DEFAULT_RATE_LIMITS, RateLimits, rateLimitOptions } from './rate-limits.js';

function principal(id: string, rateLimitPerSecond: number | null): Principal {
  return { id, scopes: new Set(['assign']), experiments: null, rateLimitPerSecond };
}

async function start(options: Parameters<typeof rateLimitOptions>[0]) {
  const refused: string[] = [];
  const warnings: Array<Record<string, unknown>> = [];
  const limits = await RateLimits.start(rateLimitOptions(options), {
    warn: (fields) => warnings.push(fields),
    info: () => {},
    rateLimited: (reason) => refused.push(reason),
  });
  return { limits, refused, warnings };
}

test("limitOf: a key's own limit overrides RATE_LIMIT_PER_SECOND; 0 means no limit", async () => {
  const off = (await start({})).limits;
  assert.equal(off.limitOf(ROOT), 0);
  assert.equal(off.limitOf(principal('k', 7)), 7);
  const on = (await start({ perSecond: 5 })).limits;
  assert.equal(on.limitOf(ROOT), 5);
  assert.equal(on.limitOf(principal('k', null)), 5);
  assert.equal(on.limitOf(principal('k', 50)), 50);
});

test('consume: the quota per second per key, what is left, and refusals counted as reason "key"', async () => {
  const { limits, refused } = await start({ perSecond: 2 });
  const a = principal('a', null);
  const first = await limits.consume(a, 2);
  assert.deepEqual(
    { ...first, resetMs: undefined },
    {
      allowed: true,
      policy: 'per-key',
      quota: 2,
      windowSeconds: 1,
      remaining: 1,
      resetSeconds: 1,
      resetMs: undefined,
    },
  );
  assert.equal((await limits.consume(a, 2)).remaining, 0);
  const third = await limits.consume(a, 2);
  assert.equal(third.allowed, false);
  assert.equal(third.resetSeconds, 1);
  assert.deepEqual(refused, ['key']);
  // Another key has its own count.
  assert.equal((await limits.consume(principal('b', null), 2)).allowed, true);
});

test('failed authentications: the address is refused once it has used up the quota, others are not, until the window ends', async () => {
  const { limits, refused } = await start({ authFailureLimit: 3, authFailureWindowSeconds: 1 });
  assert.equal(limits.anyBlocked, false);
  await limits.failedAuthentication('10.0.0.1');
  await limits.failedAuthentication('10.0.0.1');
  assert.equal(limits.blockedFor('10.0.0.1'), 0);
  await limits.failedAuthentication('10.0.0.1');
  assert.equal(limits.anyBlocked, true);
  assert.equal(limits.blockedFor('10.0.0.1'), 1);
  assert.equal(limits.blockedFor('10.0.0.2'), 0);
  const decision = limits.refusedFailure('10.0.0.1', undefined);
  assert.equal(decision?.policy, 'failed-auth');
  assert.equal(decision?.quota, 3);
  assert.equal(limits.refusedFailure('10.0.0.2', undefined), null);
  assert.deepEqual(refused, ['failed_auth']);
  await sleep(1050);
  assert.equal(limits.blockedFor('10.0.0.1'), 0);
  assert.equal(limits.anyBlocked, false);
});

test('failed authentications per key prefix: counted from any address; refuses that prefix only', async () => {
  const { limits, warnings } = await start({ authFailureLimit: 3, authFailureWindowSeconds: 1 });
  const prefix = 'ask_AbCdEfGh';
  for (const address of ['10.0.1.1', '10.0.1.2', '10.0.1.3'])
    await limits.failedAuthentication(address, prefix);
  // No address used up its quota; the prefix did.
  assert.equal(limits.blockedFor('10.0.1.1'), 0);
  assert.equal(limits.blockedFor(prefix), 1);
  const decision = limits.refusedFailure('10.0.1.4', prefix);
  assert.equal(decision?.policy, 'failed-auth-prefix');
  assert.equal(decision?.quota, 3);
  assert.equal(limits.refusedFailure('10.0.1.4', 'ask_ZzZzZzZz'), null);
  assert.equal(limits.refusedFailure('10.0.1.4', undefined), null);
  // An address locked out is named first.
  for (let i = 0; i < 3; i++) await limits.failedAuthentication('10.0.1.5');
  assert.equal(limits.refusedFailure('10.0.1.5', prefix)?.policy, 'failed-auth');
  // One warning per lockout, naming what is locked out.
  assert.deepEqual(
    warnings.map((w) => [w.client ?? w.keyPrefix, w.policy]),
    [
      [prefix, 'failed-auth-prefix'],
      ['10.0.1.5', 'failed-auth'],
    ],
  );
});

test('the header fields and the 429 message (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  const v = {
    allowed: false,
    policy: 'per-key' as const,
    quota: 100,
    windowSeconds: 1,
    remaining: 0,
    resetSeconds: 1,
    resetMs: 400,
  };
  assert.equal(policyField(v), '"per-key";q=100;w=1');
  assert.equal(limitField(v), '"per-key";r=0;t=1');
  assert.deepEqual(tooManyHeaders(v), {
    'retry-after': '1',
    'ratelimit-policy': '"per-key";q=100;w=1',
    ratelimit: '"per-key";r=0;t=1',
  });
  assert.equal(
    tooManyMessage(v),
    'rate limit exceeded: this key may make 100 requests per second; retry in 1 s',
  );
  assert.match(
    tooManyMessage({ ...v, policy: 'failed-auth', quota: 50, windowSeconds: 10, resetSeconds: 7 }),
    /too many failed authentications from this address \(50 within 10 s\).*retry in 7 s/,
  );
});

test('configuration: defaults, and RATE_LIMIT_PER_SECOND, AUTH_FAILURE_*, REDIS_URL, REDIS_KEY_PREFIX read and checked', () => {
  assert.deepEqual(loadConfig({}).rateLimits, { ...DEFAULT_RATE_LIMITS, redisUrl: undefined });
  assert.deepEqual(
    loadConfig({
      RATE_LIMIT_PER_SECOND: '100',
      AUTH_FAILURE_LIMIT: '20',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
      REDIS_URL: 'redis://127.0.0.1:6379/2',
      REDIS_KEY_PREFIX: 'team-a:',
    }).rateLimits,
    {
      perSecond: 100,
      authFailureLimit: 20,
      authFailureWindowSeconds: 60,
      redisUrl: 'redis://127.0.0.1:6379/2',
      redisKeyPrefix: 'team-a:',
    },
  );
  assert.equal(
    loadConfig({ REDIS_URL: 'rediss://cache.internal:6380' }).rateLimits.redisUrl,
    'rediss://cache.internal:6380',
  );
  assert.throws(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' }), ConfigError);
  assert.throws(() => loadConfig({ RATE_LIMIT_PER_SECOND: '-1' }), /RATE_LIMIT_PER_SECOND/);
  assert.throws(() => loadConfig({ AUTH_FAILURE_LIMIT: '0' }), /AUTH_FAILURE_LIMIT/);
  assert.throws(() => loadConfig({ REDIS_KEY_PREFIX: 'a b' }), /REDIS_KEY_PREFIX/);
});
