// Environment variables → a typed Config. Pure: main.ts passes process.env in.
import { join, resolve } from 'node:path';
import { MIN_KEY_LENGTH } from './api-key.js';
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
  production: boolean;
}

export class ConfigError extends Error {}

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

export function parseDatabaseUrl(
  url: string | undefined,
  dataDir: string,
  { poolSize = 10, writerNice = DEFAULT_WRITER_NICE } = {},
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
    return { kind: 'postgres', url, poolSize };
  throw new ConfigError(
    `DATABASE_URL must start with sqlite: or postgres:// (got '${url.split(':')[0]}:...')`,
  );
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
    }),
    dataDir,
    logLevel,
    bodyLimit: integer(env, 'BODY_LIMIT', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_MS', 30_000, 100, 3_600_000),
    slowRequestMs: integer(env, 'SLOW_REQUEST_MS', 1000, 1, 3_600_000),
    production: env.NODE_ENV === 'production',
  };
}
