// Environment variables → a typed Config. Pure: main.ts passes process.env in.
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { MIN_KEY_LENGTH } from './api-key.js';
import { DEFAULT_RATE_LIMITS, type RateLimitOptions } from './core/rate-limit-options.js';
import { DEFAULT_RETRY_SCHEDULE } from './core/webhooks.js';
import { checkTrustedProxies, type TrustProxy } from './http/client-address.js';
import type { DatabaseTarget } from './store/index.js';

export interface Config {
  port: number;
  host: string;
  /** Undefined: main.ts generates one (outside production) and keeps it in dataDir. */
  apiKey: string | undefined;
  database: DatabaseTarget;
  dataDir: string;
  logLevel: string;
  bodyLimit: number;
  /** A request's headers and body must arrive within this many ms (408 otherwise). */
  bodyTimeoutMs: number;
  /** Requests slower than this are logged at warn. */
  slowRequestMs: number;
  /** Exposures held in memory while the database cannot take them; beyond it they are dropped and counted. */
  exposureBuffer: number;
  /** HMAC key for managed API keys' hashes (undefined: the built-in default; ADR 0015). */
  keyHashSecret: string | undefined;
  /** How long an unfinished Idempotency-Key claim holds off other instances (ms). */
  idempotencyClaimTimeoutMs: number;
  production: boolean;
  /** Origins browsers may call from (CORS_ORIGINS); `*` is any origin; empty: CORS off. */
  corsOrigins: string[];
  /** RATE_LIMIT_PER_SECOND, AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_SECONDS, REDIS_URL, REDIS_KEY_PREFIX (ADR 0017). */
  rateLimits: RateLimitOptions;
  /** TRUST_PROXY: the proxies whose X-Forwarded-For names the client (a hop count or addresses); 0: none. */
  trustProxy: TrustProxy;
  /** WEBHOOK_RETRY_SCHEDULE (seconds between attempts), WEBHOOK_TIMEOUT_SECONDS, WEBHOOK_DENY_PRIVATE. */
  webhooks: { retrySchedule: number[]; timeoutMs: number; denyPrivate: boolean };
  /** MONITOR_INTERVAL_SECONDS: how often the guardrail monitor runs its round; 0: off. */
  monitorIntervalSeconds: number;
  /** Who /mcp answers (DNS-rebinding protection, ADR 0030): MCP_ALLOWED_HOSTS, MCP_ALLOWED_ORIGINS. */
  mcp: { allowedHosts: string[]; allowedOrigins: string[] };
  /** ANALYSIS_THREADS, ANALYSIS_QUEUE, ANALYSIS_BUDGET_SECONDS, ANALYSIS_CACHE_MB (ADR 0036). */
  analysis: { threads: number; queue: number; budgetMs: number; cacheBytes: number };
  /** TRACES_BODY_LIMIT, TRACE_WINDOW_SECONDS, TRACE_MESSAGE_BYTES, TRACE_PRICES (a file; ADR 0045). */
  traces: { bodyLimit: number; windowSeconds: number; messageBytes: number; pricesFile: string | undefined };
}

export class ConfigError extends Error {}

/** ANALYSIS_THREADS' default: the cores but one (the event loop's), at least 1, at most 4. */
export const defaultThreads = () => Math.max(1, Math.min(4, availableParallelism() - 1));

/** See ADR 0008: the SQLite writer thread yields the core to the event loop under contention. */
const DEFAULT_WRITER_NICE = 10;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got '${raw}')`);
  }
  return n;
}

/** WEBHOOK_RETRY_SCHEDULE: comma-separated seconds between attempts (at most 20, each up to a week). */
export function parseRetrySchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_RETRY_SCHEDULE];
  const parts = raw.split(',').map((p) => p.trim());
  const seconds = parts.map(Number);
  if (
    parts.length > 20 ||
    seconds.some((n, i) => parts[i] === '' || !Number.isFinite(n) || n < 0 || n > 604800)
  ) {
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE must be up to 20 comma-separated seconds from 0 to 604800 (got '${raw}')`,
    );
  }
  return seconds;
}

function flag(env: Record<string, string | undefined>, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false (got '${raw}')`);
}

export function parseDatabaseUrl(
  url: string | undefined,
  dataDir: string,
  { poolSize = 10, writerNice = DEFAULT_WRITER_NICE, statementTimeoutMs = 4000 } = {},
): DatabaseTarget {
  if (url === undefined || url === '')
    return { kind: 'sqlite', path: join(dataDir, 'agentsplit.db'), writerNice };
  if (url === 'sqlite::memory:') return { kind: 'sqlite', path: ':memory:' };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path === '')
      throw new ConfigError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/agentsplit.db');
    return { kind: 'sqlite', path: resolve(path), writerNice };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    return { kind: 'postgres', url, poolSize, statementTimeoutMs };
  throw new ConfigError(
    `DATABASE_URL must start with sqlite: or postgres:// (got '${url.split(':')[0]}:...')`,
  );
}

const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/[^/?#@\s]+$/i;

/**
 * CORS_ORIGINS: a comma-separated list of origins (`scheme://host[:port]`, as a browser sends them in
 * `Origin`) or `*` for any origin. http and https origins are normalized as browsers write them
 * (lowercase host, no default port), since they are compared exactly.
 */
export function parseCorsOrigins(raw: string | undefined): string[] {
  return parseOrigins(raw, 'CORS_ORIGINS');
}

function parseOrigins(raw: string | undefined, name: string): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const origins: string[] = [];
  for (const entry of raw.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    if (entry === '*') {
      origins.push(entry);
      continue;
    }
    const match = ORIGIN.exec(entry);
    let origin: string | undefined;
    if (match !== null) {
      const scheme = match[1]!.toLowerCase();
      if (scheme !== 'http' && scheme !== 'https') origin = entry;
      else {
        try {
          origin = new URL(entry).origin;
        } catch {
          origin = undefined;
        }
      }
    }
    if (origin === undefined) {
      throw new ConfigError(
        `${name} entries must be origins such as https://dash.example.com (scheme://host[:port], ` +
          `no path or trailing slash) or * for any origin (got '${entry}')`,
      );
    }
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
}

/** The names a local server is reached by (MCP_ALLOWED_HOSTS' default, with HOST). */
const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * MCP_ALLOWED_HOSTS: comma-separated host names /mcp answers under, without a port (any port), IPv6 in
 * brackets, or `*` for any. Unset: localhost, 127.0.0.1, [::1] and HOST (the address listened on).
 */
export function parseMcpHosts(raw: string | undefined, listenHost: string): string[] {
  const entries =
    raw === undefined || raw.trim() === ''
      ? [...LOCAL_HOSTS, listenHost]
      : raw.split(',').map((e) => e.trim());
  const hosts: string[] = [];
  for (let entry of entries) {
    entry = entry.toLowerCase();
    if (entry === '') continue;
    const colons = entry.split(':').length - 1;
    if (colons > 1 && !entry.startsWith('[')) entry = `[${entry}]`;
    const bracketed = entry.startsWith('[') && entry.endsWith(']');
    if (/[\s/@?#]/.test(entry) || (colons === 1 && !bracketed) || (entry.startsWith('[') && !bracketed)) {
      throw new ConfigError(
        `MCP_ALLOWED_HOSTS entries must be host names such as agents.example.com (no scheme, no port: ` +
          `any port is allowed; IPv6 as [::1]) or * for any host (got '${entry}')`,
      );
    }
    if (!hosts.includes(entry)) hosts.push(entry);
  }
  return hosts;
}

/** REDIS_URL: redis:// or rediss:// (TLS); empty or unset: counters in memory. */
export function parseRedisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const url = raw.trim();
  if (!/^rediss?:\/\/[^/?#\s]/.test(url)) {
    throw new ConfigError(
      `REDIS_URL must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379 (got '${url.split(':')[0]}:...')`,
    );
  }
  return url;
}

/** Proxies in front of a service are few; more hops than this is a mistake. */
const MAX_PROXY_HOPS = 10;

/**
 * TRUST_PROXY: how many proxies are in front (`1` for one nginx), or a comma-separated list of their
 * addresses and CIDRs (`10.0.0.0/8, 127.0.0.1`; also `loopback`, `linklocal`, `uniquelocal`). Unset, empty,
 * `0` or `false`: none (X-Forwarded-For is ignored). `true` (trust any chain) is refused: anyone could
 * then pick their address.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return 0;
  const usage = `TRUST_PROXY must be a hop count from 0 to ${MAX_PROXY_HOPS} (e.g. 1 behind one proxy) or a comma-separated list of the proxies' addresses or CIDRs`;
  if (value === 'true') throw new ConfigError(`${usage}; 'true' would let any client pick its address`);
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > MAX_PROXY_HOPS) throw new ConfigError(`${usage} (got '${raw}')`);
    return hops;
  }
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    try {
      checkTrustedProxies([entry]);
    } catch {
      throw new ConfigError(`${usage} (got '${entry}')`);
    }
  }
  return entries;
}

function rateLimitConfig(env: Record<string, string | undefined>): RateLimitOptions {
  const prefix = env.REDIS_KEY_PREFIX ?? DEFAULT_RATE_LIMITS.redisKeyPrefix;
  if (prefix === '' || prefix.length > 200 || /\s/.test(prefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX must be 1 to 200 characters without spaces');
  }
  return {
    perSecond: integer(env, 'RATE_LIMIT_PER_SECOND', DEFAULT_RATE_LIMITS.perSecond, 0, 1_000_000),
    authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', DEFAULT_RATE_LIMITS.authFailureLimit, 1, 1_000_000),
    authFailureWindowSeconds: integer(
      env,
      'AUTH_FAILURE_WINDOW_SECONDS',
      DEFAULT_RATE_LIMITS.authFailureWindowSeconds,
      1,
      3600,
    ),
    redisUrl: parseRedisUrl(env.REDIS_URL),
    redisKeyPrefix: prefix,
  };
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const dataDir = resolve(env.DATA_DIR || './data');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got '${logLevel}')`);
  }
  const apiKey = env.API_KEY === '' ? undefined : env.API_KEY;
  if (apiKey !== undefined && apiKey.length < MIN_KEY_LENGTH) {
    throw new ConfigError(`API_KEY must be at least ${MIN_KEY_LENGTH} characters long`);
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    apiKey,
    database: parseDatabaseUrl(env.DATABASE_URL, dataDir, {
      poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
      writerNice: integer(env, 'SQLITE_WRITER_NICE', DEFAULT_WRITER_NICE, 0, 19),
      statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 4000, 0, 3_600_000),
    }),
    dataDir,
    logLevel,
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_MS', 30_000, 100, 3_600_000),
    slowRequestMs: integer(env, 'SLOW_REQUEST_MS', 1000, 1, 3_600_000),
    exposureBuffer: integer(env, 'EXPOSURE_BUFFER', 200_000, 1000, 100_000_000),
    keyHashSecret: env.KEY_HASH_SECRET || undefined,
    idempotencyClaimTimeoutMs: integer(env, 'IDEMPOTENCY_CLAIM_TIMEOUT_MS', 60_000, 1000, 3_600_000),
    production: env.NODE_ENV === 'production',
    corsOrigins: parseCorsOrigins(env.CORS_ORIGINS),
    rateLimits: rateLimitConfig(env),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    webhooks: {
      retrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_SECONDS', 15, 1, 600) * 1000,
      denyPrivate: flag(env, 'WEBHOOK_DENY_PRIVATE'),
    },
    monitorIntervalSeconds: integer(env, 'MONITOR_INTERVAL_SECONDS', 60, 0, 86_400),
    analysis: {
      threads: integer(env, 'ANALYSIS_THREADS', defaultThreads(), 1, 64),
      queue: integer(env, 'ANALYSIS_QUEUE', 16, 0, 10_000),
      budgetMs: integer(env, 'ANALYSIS_BUDGET_SECONDS', 20, 1, 3600) * 1000,
      cacheBytes: integer(env, 'ANALYSIS_CACHE_MB', 32, 0, 65_536) * 1024 * 1024,
    },
    traces: {
      bodyLimit: integer(env, 'TRACES_BODY_LIMIT', 8 * 1024 * 1024, 1024, 256 * 1024 * 1024),
      windowSeconds: integer(env, 'TRACE_WINDOW_SECONDS', 3600, 1, 7 * 86_400),
      messageBytes: integer(env, 'TRACE_MESSAGE_BYTES', 16 * 1024, 0, 1024 * 1024),
      pricesFile: env.TRACE_PRICES ? resolve(env.TRACE_PRICES) : undefined,
    },
    mcp: {
      allowedHosts: parseMcpHosts(env.MCP_ALLOWED_HOSTS, env.HOST || '127.0.0.1'),
      // Unset: an Origin is allowed when its host is an allowed host (http/mcp.ts).
      allowedOrigins: parseOrigins(env.MCP_ALLOWED_ORIGINS, 'MCP_ALLOWED_ORIGINS'),
    },
  };
}
