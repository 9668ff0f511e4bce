// Rate limits (issue 14, section 3; ADR 0017): per-key limits (RATE_LIMIT_PER_SECOND, or a key's own
// rateLimitPerSecond) answered 429 with Retry-After, RateLimit and RateLimit-Policy on both transports;
// failed authentications throttled per client address (TRUST_PROXY; IPv6 per /64) and per key prefix, never refusing a
// valid key (issue 34); counters shared through Redis across instances;
// Redis down → still serving, counted in memory, and a warning. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, request } from 'node:http';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { RateLimitOptions } from '../src/services/rate-limits.js';
import {
  API_KEY,
  assertError,
  assertUnauthorized,
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';

const REDIS_URL = process.env.AGENTSPLIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether Redis answers. In CI it must: unreachable there is an error, not a skip. */
async function redisReachable(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (err) {
    if (process.env.CI) throw new Error(`Redis is not reachable at ${REDIS_URL} in CI: ${err}`);
    process.stderr.write(
      `\n!!! Redis is not reachable at ${REDIS_URL}: the shared-limit tests are SKIPPED.\n\n`,
    );
    return false;
  } finally {
    client.disconnect();
  }
}

const SKIP_REDIS: string | false =
  SKIP_BACKEND || ((await redisReachable()) ? false : 'Redis is not reachable');

interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on a connection of its own, from `localAddress` (another loopback address is another client). */
function call(
  port: number,
  c: {
    method: string;
    url: string;
    key?: string | null;
    body?: unknown;
    localAddress?: string;
    headers?: Record<string, string>;
  },
): Promise<Answer> {
  const payload = c.body === undefined ? undefined : JSON.stringify(c.body);
  const headers: Record<string, string> = { ...c.headers };
  if (c.key !== null) headers['x-api-key'] = c.key ?? API_KEY;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: c.method,
        path: c.url,
        headers,
        localAddress: c.localAddress,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ statusCode: res.statusCode!, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const RETRY_AFTER = /^[1-9][0-9]*$/;

/** A 429 as section 3 wants it: {"error"} naming the limit and the wait, Retry-After, and both RateLimit fields. */
function assertTooMany(res: Answer, policy: string, quota: number, window: number): void {
  const message = assertError(
    { ...res, rawPayload: Buffer.from(res.body), json: () => JSON.parse(res.body) },
    429,
  );
  assert.match(message, /retry in [1-9][0-9]* s/);
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, RETRY_AFTER);
  assert.equal(res.headers['ratelimit-policy'], `"${policy}";q=${quota};w=${window}`);
  const current = String(res.headers.ratelimit);
  assert.match(current, new RegExp(`^"${policy}";r=0;t=[1-9][0-9]*$`));
  // Retry-After is not earlier than the end of the effective window (draft-11, section 6).
  assert.ok(Number(retryAfter) >= Number(/t=(\d+)/.exec(current)![1]), `${retryAfter} vs ${current}`);
}

/** The next full second: a fresh one-second window for every key that starts counting after it. */
async function freshWindow(): Promise<void> {
  await sleep(1100);
}

/** POST /keys with `admin` (a key of its own with a high limit, where the root key is limited). */
async function createKey(rt: TestRuntime, body: Record<string, unknown>, admin = API_KEY): Promise<string> {
  const res = await rt.api.call({ method: 'POST', url: '/keys', body, key: admin });
  assert.equal(res.statusCode, 201, res.body);
  return (res.json() as { key: string }).key;
}

async function scrapeLimited(rt: TestRuntime, reason: string): Promise<number> {
  const text = await rt.metrics.scrape();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`agentsplit_rate_limited_total{reason="${reason}"}`));
  assert.ok(line, `no agentsplit_rate_limited_total{reason="${reason}"} in the metrics`);
  return Number(line.split(' ').pop());
}

const dir = makeTempDir();
after(() => removeTempDir(dir));

describe('per-key rate limits', { skip: SKIP_BACKEND }, () => {
  let rt: TestRuntime;
  let slug: string;
  let assignKey: string;
  const assign = () => ({ method: 'POST', url: `/experiment/${slug}/assign`, body: { userId: 'u-1' } });

  let admin: string;
  const keyFor = (body: Record<string, unknown>) => createKey(rt, body, admin);

  before(async () => {
    rt = await startTestRuntime(dir, 'rate-keys', { rateLimits: { perSecond: 3 } });
    slug = (await rt.api.createExperiment({ slug: uniqueSlug('rl') })).slug;
    admin = await createKey(rt, { name: 'admin', scopes: ['admin'], rateLimitPerSecond: 100_000 });
    assignKey = await keyFor({ name: 'agent', scopes: ['assign', 'read'] });
  });
  after(() => rt?.close());

  test('RATE_LIMIT_PER_SECOND: the 4th assign within a second is 429 with Retry-After, RateLimit and RateLimit-Policy (fast transport)', async () => {
    const key = await keyFor({ name: 'fast', scopes: ['assign'] });
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i++) answers.push(await call(rt.api.port, { ...assign(), key }));
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200, 200, 429, 429],
    );
    for (const a of answers.slice(3)) assertTooMany(a, 'per-key', 3, 1);
    assert.match(JSON.parse(answers[3]!.body).error, /3 requests per second/);
  });

  test('allowed answers on a limited key carry RateLimit-Policy and RateLimit with what is left', async () => {
    const key = await keyFor({ name: 'headers', scopes: ['assign', 'read'] });
    const first = await call(rt.api.port, { ...assign(), key });
    const second = await call(rt.api.port, { method: 'GET', url: '/experiments', key });
    for (const res of [first, second]) {
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['ratelimit-policy'], '"per-key";q=3;w=1');
    }
    assert.match(String(first.headers.ratelimit), /^"per-key";r=2;t=1$/);
    assert.match(String(second.headers.ratelimit), /^"per-key";r=1;t=1$/);
  });

  test('a Fastify route (GET /experiments) is limited alike: 429 with the same headers', async () => {
    const key = await keyFor({ name: 'reader', scopes: ['read'] });
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++)
      answers.push(await call(rt.api.port, { method: 'GET', url: '/experiments', key }));
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      [200, 200, 200, 429],
    );
    assertTooMany(answers[3]!, 'per-key', 3, 1);
  });

  test('both transports count against one limit, and the same assign over Fastify (inject) answers the same 429', async () => {
    const key = await keyFor({ name: 'both', scopes: ['assign', 'read'] });
    const statuses = [
      (await call(rt.api.port, { ...assign(), key })).statusCode,
      (await call(rt.api.port, { method: 'GET', url: '/experiments', key })).statusCode,
      (await call(rt.api.port, { ...assign(), key })).statusCode,
    ];
    assert.deepEqual(statuses, [200, 200, 200]);
    const fast = await call(rt.api.port, { ...assign(), key });
    const viaFastify = await rt.app.inject({
      method: 'POST',
      url: assign().url,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify(assign().body),
    });
    assertTooMany(fast, 'per-key', 3, 1);
    assertTooMany(
      {
        statusCode: viaFastify.statusCode,
        headers: viaFastify.headers as IncomingHttpHeaders,
        body: viaFastify.body,
      },
      'per-key',
      3,
      1,
    );
    assert.equal(viaFastify.body, fast.body);
  });

  test('the limit is per key: another key is served while one is refused', async () => {
    const a = await keyFor({ name: 'a', scopes: ['assign'] });
    const b = await keyFor({ name: 'b', scopes: ['assign'] });
    for (let i = 0; i < 3; i++)
      assert.equal((await call(rt.api.port, { ...assign(), key: a })).statusCode, 200);
    assertTooMany(await call(rt.api.port, { ...assign(), key: a }), 'per-key', 3, 1);
    const other = await call(rt.api.port, { ...assign(), key: b });
    assert.equal(other.statusCode, 200, other.body);
    assert.match(String(other.headers.ratelimit), /^"per-key";r=2;t=1$/);
  });

  test("a key's own rateLimitPerSecond overrides RATE_LIMIT_PER_SECOND (lower and higher)", async () => {
    const strict = await keyFor({ name: 'strict', scopes: ['assign'], rateLimitPerSecond: 1 });
    const generous = await keyFor({ name: 'generous', scopes: ['assign'], rateLimitPerSecond: 50 });
    assert.equal((await call(rt.api.port, { ...assign(), key: strict })).statusCode, 200);
    assertTooMany(await call(rt.api.port, { ...assign(), key: strict }), 'per-key', 1, 1);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await call(rt.api.port, { ...assign(), key: generous })).statusCode);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
  });

  test('RATE_LIMIT_PER_SECOND applies to the root key (API_KEY) too', async () => {
    await freshWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(rt.api.port, assign())).statusCode);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  });

  test('a refused key is served again in the next window, and refusals are counted in agentsplit_rate_limited_total{reason="key"}', async () => {
    const before = await scrapeLimited(rt, 'key');
    for (let i = 0; i < 3; i++) await call(rt.api.port, { ...assign(), key: assignKey });
    const refused = await call(rt.api.port, { ...assign(), key: assignKey });
    assertTooMany(refused, 'per-key', 3, 1);
    await sleep(Number(refused.headers['retry-after']) * 1000 + 50);
    assert.equal((await call(rt.api.port, { ...assign(), key: assignKey })).statusCode, 200);
    assert.ok((await scrapeLimited(rt, 'key')) >= before + 1);
  });
});

describe('no RATE_LIMIT_PER_SECOND (the default)', { skip: SKIP_BACKEND }, () => {
  let rt: TestRuntime;
  before(async () => {
    rt = await startTestRuntime(dir, 'rate-off');
  });
  after(() => rt?.close());

  test('keys without their own limit are never limited and get no RateLimit headers', async () => {
    const slug = (await rt.api.createExperiment()).slug;
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        call(rt.api.port, { method: 'POST', url: `/experiment/${slug}/assign`, body: { userId: 'u' } }),
      ),
    );
    for (const a of answers) {
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(a.headers.ratelimit, undefined);
      assert.equal(a.headers['ratelimit-policy'], undefined);
    }
  });

  test('a key with its own rateLimitPerSecond is limited even so', async () => {
    const slug = (await rt.api.createExperiment()).slug;
    const key = await createKey(rt, { name: 'own', scopes: ['assign'], rateLimitPerSecond: 2 });
    const url = `/experiment/${slug}/assign`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push(
        (await call(rt.api.port, { method: 'POST', url, body: { userId: 'u' }, key })).statusCode,
      );
    assert.deepEqual(statuses, [200, 200, 429]);
  });
});

describe('failed authentication is throttled per client address', { skip: SKIP_BACKEND }, () => {
  let rt: TestRuntime;
  let slug: string;
  before(async () => {
    rt = await startTestRuntime(dir, 'rate-auth', {
      rateLimits: { authFailureLimit: 6, authFailureWindowSeconds: 2 },
    });
    slug = (await rt.api.createExperiment()).slug;
  });
  after(() => rt?.close());

  test('CORS preflights (OPTIONS without a key) never count as failed authentications; an OPTIONS with a wrong key does', async () => {
    const port = rt.api.port;
    const preflight = {
      method: 'OPTIONS',
      url: '/experiments',
      key: null,
      headers: { origin: 'https://not-listed.example', 'access-control-request-method': 'POST' },
    };
    // Three times the limit, from a page on an origin CORS_ORIGINS does not list (CORS is off here).
    for (let i = 0; i < 18; i++) {
      const answer = await call(port, { ...preflight, localAddress: '127.0.0.3' });
      assert.equal(answer.statusCode, 401, answer.body);
    }
    const right = await call(port, { method: 'GET', url: '/experiments', localAddress: '127.0.0.3' });
    assert.equal(right.statusCode, 200, `the address was locked out by preflights: ${right.body}`);
    // A key sent with OPTIONS is an authentication like any other: guessing keys that way is throttled.
    for (let i = 0; i < 6; i++) await call(port, { ...preflight, key: 'wrong', localAddress: '127.0.0.4' });
    const locked = await call(port, {
      method: 'GET',
      url: '/experiments',
      key: 'x',
      localAddress: '127.0.0.4',
    });
    assertTooMany(locked, 'failed-auth', 6, 2);
  });

  test('after AUTH_FAILURE_LIMIT failures (wrong or missing key) the address gets 429 for further failures until the window passes, while the right key is served; other addresses are unaffected', async () => {
    const from = '127.0.0.2';
    const port = rt.api.port;
    const failures = [
      await call(port, { method: 'GET', url: '/experiments', key: 'wrong', localAddress: from }),
      await call(port, { method: 'GET', url: '/experiments', key: null, localAddress: from }),
      await call(port, {
        method: 'POST',
        url: `/experiment/${slug}/assign`,
        body: {},
        key: 'wrong',
        localAddress: from,
      }),
      await call(port, {
        method: 'POST',
        url: `/experiment/${slug}/log`,
        body: {},
        key: null,
        localAddress: from,
      }),
      await call(port, { method: 'GET', url: '/no/such/route', key: 'wrong', localAddress: from }),
      // A URL Fastify cannot route (its frameworkErrors handler answers the 401, without hooks).
      await call(port, { method: 'GET', url: '/experiment/%E0%A4%A/assign', key: null, localAddress: from }),
    ];
    for (const f of failures)
      assertUnauthorized({ ...f, rawPayload: Buffer.from(f.body), json: () => JSON.parse(f.body) });
    const wrong = await call(port, { method: 'GET', url: '/experiments', key: 'wrong', localAddress: from });
    assertTooMany(wrong, 'failed-auth', 6, 2);
    assert.match(JSON.parse(wrong.body).error, /too many failed authentications/);
    assertTooMany(
      await call(port, { method: 'GET', url: '/experiments', key: null, localAddress: from }),
      'failed-auth',
      6,
      2,
    );
    // The right key is not refused for the failures of its address (issue 34).
    const right = await call(port, {
      method: 'POST',
      url: `/experiment/${slug}/assign`,
      body: { userId: 'u-1' },
      localAddress: from,
    });
    assert.equal(right.statusCode, 200, right.body);
    // Liveness stays open to it; another address is served and still gets the spec's 401.
    assert.equal(
      (await call(port, { method: 'GET', url: '/healthz', key: null, localAddress: from })).statusCode,
      200,
    );
    assert.equal((await call(port, { method: 'GET', url: '/experiments' })).statusCode, 200);
    const elsewhere = await call(port, { method: 'GET', url: '/experiments', key: 'wrong' });
    assert.equal(elsewhere.statusCode, 401);
    assert.ok((await scrapeLimited(rt, 'failed_auth')) >= 2);
    // The window passes: 200 with the right key, 401 with a wrong one.
    await sleep(Number(wrong.headers['retry-after']) * 1000 + 100);
    assert.equal(
      (await call(port, { method: 'GET', url: '/experiments', localAddress: from })).statusCode,
      200,
    );
    assert.equal(
      (await call(port, { method: 'GET', url: '/experiments', key: 'x', localAddress: from })).statusCode,
      401,
    );
  });

  test('the default (50 failures per 10 s): after 60 wrong keys from an address, its wrong keys get 429 and its valid keys 200 (issue 34)', async () => {
    const fresh = await startTestRuntime(dir, 'rate-auth-default');
    try {
      const port = fresh.api.port;
      const from = '127.0.0.8';
      const managed = await createKey(fresh, { name: 'beside-the-flood', scopes: ['read'] });
      const freshSlug = (await fresh.api.createExperiment()).slug;
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await call(port, {
          method: 'GET',
          url: '/experiments',
          key: `bad-${i}`,
          localAddress: from,
        });
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses, [...Array(50).fill(401), ...Array(10).fill(429)]);
      // Further failures from the address are refused, with Retry-After and an {"error"} body.
      const wrong = await call(port, { method: 'GET', url: '/experiments', key: 'bad', localAddress: from });
      assertTooMany(wrong, 'failed-auth', 50, 10);
      // Valid keys from the same address get their normal answers: the root key, a managed key (also
      // as a Bearer token), a write.
      const root = await call(port, { method: 'GET', url: '/experiments', localAddress: from });
      assert.equal(root.statusCode, 200, root.body);
      assert.equal(root.headers['retry-after'], undefined);
      const asManaged = await call(port, {
        method: 'GET',
        url: '/experiments',
        key: managed,
        localAddress: from,
      });
      assert.equal(asManaged.statusCode, 200, asManaged.body);
      const bearer = await call(port, {
        method: 'GET',
        url: '/keys/me',
        key: null,
        headers: { authorization: `Bearer ${managed}` },
        localAddress: from,
      });
      assert.equal(bearer.statusCode, 200, bearer.body);
      const assigned = await call(port, {
        method: 'POST',
        url: `/experiment/${freshSlug}/assign`,
        body: { userId: 'u-1' },
        localAddress: from,
      });
      assert.equal(assigned.statusCode, 200, assigned.body);
    } finally {
      await fresh.close();
    }
  });

  test('a wrong key that starts as a live key (its prefix) is locked out per that prefix, from any address', async () => {
    const port = rt.api.port;
    const key = await createKey(rt, { name: 'guessed', scopes: ['read'] });
    // The prefix key lists show (`ask_` and 8 characters), then a guess at the rest.
    const prefix = key.slice(0, 12);
    const guess = (i: number) => `${prefix}${String(i).padStart(43, 'x')}`;
    // Six addresses, one failure each: none of them reaches the address quota (6), the prefix does.
    for (let i = 0; i < 6; i++) {
      const res = await call(port, {
        method: 'GET',
        url: '/experiments',
        key: guess(i),
        localAddress: `127.0.1.${i + 1}`,
      });
      assert.equal(res.statusCode, 401, res.body);
    }
    const locked = await call(port, {
      method: 'GET',
      url: '/experiments',
      key: guess(6),
      localAddress: '127.0.1.20',
    });
    assertTooMany(locked, 'failed-auth-prefix', 6, 2);
    assert.match(JSON.parse(locked.body).error, /keys that start as this one/);
    // From that address, another wrong key (no live key's prefix) is a plain 401, and the key itself is served.
    const other = await call(port, {
      method: 'GET',
      url: '/experiments',
      key: 'ask_nobodysprefix-at-all',
      localAddress: '127.0.1.20',
    });
    assert.equal(other.statusCode, 401, other.body);
    const right = await call(port, { method: 'GET', url: '/experiments', key, localAddress: '127.0.1.20' });
    assert.equal(right.statusCode, 200, right.body);
    // The window passes: a guess is a 401 again.
    await sleep(Number(locked.headers['retry-after']) * 1000 + 100);
    const later = await call(port, {
      method: 'GET',
      url: '/experiments',
      key: guess(7),
      localAddress: '127.0.1.21',
    });
    assert.equal(later.statusCode, 401, later.body);
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot change its address by sending one', async () => {
    const port = rt.api.port;
    const from = '127.0.2.1';
    for (let i = 0; i < 6; i++) {
      const res = await call(port, {
        method: 'GET',
        url: '/experiments',
        key: 'wrong',
        localAddress: from,
        headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
      });
      assert.equal(res.statusCode, 401, res.body);
    }
    const spoofed = await call(port, {
      method: 'GET',
      url: '/experiments',
      key: 'wrong',
      localAddress: from,
      headers: { 'x-forwarded-for': '203.0.113.99' },
    });
    assertTooMany(spoofed, 'failed-auth', 6, 2);
  });
});

describe('TRUST_PROXY: the client address behind a trusted proxy', { skip: SKIP_BACKEND }, () => {
  let rt: TestRuntime;
  before(async () => {
    rt = await startTestRuntime(dir, 'rate-proxy', {
      rateLimits: { authFailureLimit: 6, authFailureWindowSeconds: 10 },
      // One proxy in front (the test's connections play it).
      trustProxy: 1,
    });
  });
  after(() => rt?.close());

  /** A request through the proxy: from 127.0.0.1, with the X-Forwarded-For the proxy wrote. */
  const viaProxy = (forwardedFor: string, key = 'wrong') =>
    call(rt.api.port, {
      method: 'GET',
      url: '/experiments',
      key,
      headers: { 'x-forwarded-for': forwardedFor },
    });

  test('two clients behind the proxy are throttled separately; a valid key behind it is served', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await viaProxy('198.51.100.1')).statusCode, 401);
    assertTooMany(await viaProxy('198.51.100.1'), 'failed-auth', 6, 10);
    // Another client through the same proxy (the same socket address) is not locked out.
    assert.equal((await viaProxy('198.51.100.2')).statusCode, 401);
    // Nor is the locked-out client's valid key.
    assert.equal((await viaProxy('198.51.100.1', API_KEY)).statusCode, 200);
  });

  test('only the address the trusted proxy wrote counts: what the client put before it is not read', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await viaProxy(`10.9.9.${i}, 198.51.100.3`)).statusCode, 401);
    // A different address sent by the client, before the one the proxy appended, changes nothing.
    assertTooMany(await viaProxy('10.9.9.99, 198.51.100.3'), 'failed-auth', 6, 10);
  });

  test('IPv6 clients are locked out per /64: stepping through addresses of one /64 does not escape it', async () => {
    for (let i = 0; i < 6; i++) {
      assert.equal((await viaProxy(`2001:db8:a:b::${i + 1}`)).statusCode, 401);
    }
    // Any address of that /64, however written, is refused; the next /64 is another client.
    assertTooMany(await viaProxy('2001:db8:a:b:ffff:ffff:ffff:fffe'), 'failed-auth', 6, 10);
    assertTooMany(await viaProxy('2001:0DB8:000A:000B::99'), 'failed-auth', 6, 10);
    assert.equal((await viaProxy('2001:db8:a:c::1')).statusCode, 401);
    assert.equal((await viaProxy('2001:db8:a:b::1', API_KEY)).statusCode, 200);
  });

  test('an IPv4-mapped IPv6 address counts as its IPv4 address', async () => {
    for (let i = 0; i < 6; i++) {
      const address = i % 2 === 0 ? '198.51.100.40' : '::ffff:198.51.100.40';
      assert.equal((await viaProxy(address)).statusCode, 401);
    }
    assertTooMany(await viaProxy('::ffff:c633:6428'), 'failed-auth', 6, 10);
    assertTooMany(await viaProxy('198.51.100.40'), 'failed-auth', 6, 10);
    assert.equal((await viaProxy('198.51.100.41')).statusCode, 401);
  });

  test('a list of proxies: X-Forwarded-For is read only from a peer on the list', async () => {
    const listed = await startTestRuntime(dir, 'rate-proxy-list', {
      rateLimits: { authFailureLimit: 3, authFailureWindowSeconds: 10 },
      trustProxy: ['127.0.0.1/32', '::1'],
    });
    try {
      const port = listed.api.port;
      const send = (localAddress: string, forwardedFor: string) =>
        call(port, {
          method: 'GET',
          url: '/experiments',
          key: 'wrong',
          localAddress,
          headers: { 'x-forwarded-for': forwardedFor },
        });
      // From the listed proxy: each forwarded client is counted on its own.
      for (let i = 0; i < 4; i++)
        assert.equal((await send('127.0.0.1', `198.51.100.${10 + i}`)).statusCode, 401);
      // From a peer not on the list: its header is ignored, the peer is the client.
      for (let i = 0; i < 3; i++)
        assert.equal((await send('127.0.3.1', `198.51.100.${20 + i}`)).statusCode, 401);
      assertTooMany(await send('127.0.3.1', '198.51.100.30'), 'failed-auth', 3, 10);
    } finally {
      await listed.close();
    }
  });
});

describe('limits shared through Redis (REDIS_URL)', { skip: SKIP_REDIS }, () => {
  const prefix = `agentsplit-test:${process.pid}-${Date.now()}:`;
  const shared: Partial<RateLimitOptions> = { redisUrl: REDIS_URL, redisKeyPrefix: prefix };
  let one: TestRuntime;
  let two: TestRuntime;
  let redis: Redis;

  before(async () => {
    redis = new Redis(REDIS_URL);
    one = await startTestRuntime(dir, 'rate-redis-1', {
      rateLimits: { ...shared, perSecond: 4, authFailureLimit: 4 },
    });
    two = await startTestRuntime(dir, 'rate-redis-2', {
      rateLimits: { ...shared, perSecond: 4, authFailureLimit: 4 },
    });
  });

  after(async () => {
    await one?.close();
    await two?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  test('requests through two instances count against one limit (root key, 4 per second)', async () => {
    const slugs = [(await one.api.createExperiment()).slug, (await two.api.createExperiment()).slug];
    await freshWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const rt = i % 2 === 0 ? one : two;
      statuses.push(
        (
          await call(rt.api.port, {
            method: 'POST',
            url: `/experiment/${slugs[i % 2]}/assign`,
            body: { userId: 'u' },
          })
        ).statusCode,
      );
    }
    // Either instance alone would have served all five.
    assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    const refused = await call(two.api.port, { method: 'GET', url: '/experiments' });
    assertTooMany(refused, 'per-key', 4, 1);
    assert.ok(
      (await redis.keys(`${prefix}ratelimit:key*`)).length > 0,
      'the counter lives in Redis under the prefix',
    );
  });

  test('failed authentications through two instances count together', async () => {
    const from = '127.0.0.3';
    for (const rt of [one, two, one, two]) {
      const res = await call(rt.api.port, {
        method: 'GET',
        url: '/experiments',
        key: 'wrong',
        localAddress: from,
      });
      assert.equal(res.statusCode, 401);
    }
    // The 4th failure (on `two`) used up the shared quota: `two` refuses the address's wrong keys.
    const wrongFrom = { method: 'GET', url: '/experiments', key: 'wrong', localAddress: from };
    assertTooMany(await call(two.api.port, wrongFrom), 'failed-auth', 4, 10);
    // `one` refuses them too, without a failure of its own (one it counted would be answered 401): `two`
    // announced the refusal through Redis. (Delivered before `two` answered its 401; the pause only
    // covers a slow read of that message.)
    await sleep(200);
    assertTooMany(await call(one.api.port, wrongFrom), 'failed-auth', 4, 10);
    // Both serve the right key from that address (in a fresh second of the root key's own limit).
    await freshWindow();
    for (const rt of [one, two])
      assert.equal(
        (await call(rt.api.port, { method: 'GET', url: '/experiments', localAddress: from })).statusCode,
        200,
      );
    assert.ok(
      (await redis.zscore(`${prefix}ratelimit:refused`, from)) !== null,
      'the refusal is recorded in Redis under the prefix',
    );
  });

  test('an instance started while an address is refused refuses it at once (it reads the refusals in Redis)', async () => {
    const from = '127.0.0.4';
    for (let i = 0; i < 4; i++) {
      const res = await call(one.api.port, {
        method: 'GET',
        url: '/experiments',
        key: 'wrong',
        localAddress: from,
      });
      assert.equal(res.statusCode, 401);
    }
    const late = await startTestRuntime(dir, 'rate-redis-3', {
      rateLimits: { ...shared, perSecond: 4, authFailureLimit: 4 },
    });
    try {
      assertTooMany(
        await call(late.api.port, { method: 'GET', url: '/experiments', key: 'wrong', localAddress: from }),
        'failed-auth',
        4,
        10,
      );
      // Another address is not refused: its wrong key is a plain 401.
      const other = await call(late.api.port, {
        method: 'GET',
        url: '/experiments',
        key: 'wrong',
        localAddress: '127.0.0.6',
      });
      assert.equal(other.statusCode, 401, other.body);
    } finally {
      await late.close();
    }
  });
});

describe('Redis down', { skip: SKIP_BACKEND }, () => {
  test('requests are still served, limits are counted in memory, and a warning names the cause', async () => {
    // A port nothing listens on.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));

    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    const rt = await startTestRuntime(dir, 'rate-redis-down', {
      logger: pino({ level: 'warn' }, stream),
      rateLimits: {
        redisUrl: `redis://127.0.0.1:${port}`,
        redisKeyPrefix: 'agentsplit-test-down:',
        perSecond: 3,
      },
    });
    try {
      const slug = (await rt.api.createExperiment()).slug;
      await freshWindow();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push(
          (
            await call(rt.api.port, {
              method: 'POST',
              url: `/experiment/${slug}/assign`,
              body: { userId: 'u' },
            })
          ).statusCode,
        );
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const warnings = lines.filter((l) => /Redis is unreachable/.test(String(l.msg)));
      assert.ok(warnings.length >= 1, `no warning in ${JSON.stringify(lines)}`);
      assert.equal(warnings[0]!.level, 40);
      assert.match(JSON.stringify(warnings[0]!.err), /ECONNREFUSED/);
      // At most one warning every few seconds, however many requests fell back.
      assert.ok(warnings.length <= 2, `${warnings.length} warnings`);
    } finally {
      await rt.close();
    }
  });
});
