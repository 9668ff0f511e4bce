// Opens PostgreSQL: a pg pool under Kysely, advisory locks, LISTEN/NOTIFY, and driver-error translation.
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { SqlDatabase } from './database.js';
import { holdInstanceLock, type InstanceLock } from './instance-lock.js';
import { type LeaderLock, leaderLock } from './leader-lock.js';
import { preparedOf } from './postgres-batch.js';
import type { Database } from './schema.js';

// bigint columns (counts, sequences) come back as numbers; every value we store fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

const CHANNEL = 'agentsplit_experiments';
/** Advisory lock keys: a namespace for this service, then one key per purpose or experiment. */
const LOCK_NAMESPACE = 0x61677370; // 'agsp'
const MIGRATION_LOCK = 0;
/** The namespace of instance locks (second key: the instance id); LOCK_NAMESPACE + 1 locks experiments. */
const INSTANCE_LOCK_NAMESPACE = LOCK_NAMESPACE + 2;
/** The namespace of leader locks (second key: the job, e.g. MONITOR_LEADER in sql-records.ts). */
const LEADER_LOCK_NAMESPACE = LOCK_NAMESPACE + 3;

export interface PostgresOptions {
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** How long a request waits for a connection before the database counts as unavailable (ms). */
  connectTimeoutMs?: number;
  /**
   * DATABASE_STATEMENT_TIMEOUT_MS (default 4000; 0: none): the server cancels a statement running longer,
   * and a second later the client gives up on a server that does not answer at all (a stalled network
   * path) and drops that connection. Rebuilds and migrations run on connections of their own without it.
   */
  statementTimeoutMs?: number;
}

/** How long idle TCP connections wait before the kernel probes them (keepalive), ms. */
const KEEPALIVE_DELAY_MS = 10_000;

/** Statements sent by this process's clients (agentsplit_database_statements_total). */
const sent = { statements: 0 };

/**
 * A client that drops its connection when a query gets no answer within query_timeout: node-postgres
 * rejects the query but keeps the connection, whose next query would queue behind the unanswered one.
 * Destroyed, the pool forgets it and opens a fresh one once the database answers again.
 */
class StallSafeClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; all are passed through.
  override query(...args: any[]): any {
    sent.statements++;
    // A batch's statement (postgres-batch.ts) runs named: parsed and planned once per connection.
    const prepared = typeof args[0] === 'string' ? preparedOf(args[0]) : undefined;
    if (prepared !== undefined) args = [{ ...prepared, values: args[1] }, ...args.slice(2)];
    // biome-ignore lint/suspicious/noExplicitAny: see above.
    const result = (super.query as (...a: any[]) => any)(...args);
    if (result && typeof result.catch === 'function') {
      result.catch((err: unknown) => {
        if ((err as { message?: unknown })?.message === 'Query read timeout') {
          (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        }
      });
    }
    return result;
  }
}

/** Network errors of the driver: the server cannot be reached or dropped the connection. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that mean "the database cannot take this now" (a retry may succeed): every one answers 503
 * with Retry-After, never 500. Whole classes: 08 connection exception, 53 insufficient resources (disk
 * full, out of memory, too many connections), 57P operator intervention (shutdown, restart, database
 * dropped or refusing), 58 system errors (I/O). Single codes of other classes are listed.
 */
const UNAVAILABLE_CLASSES = ['08', '53', '57P', '58'];
const UNAVAILABLE_SQLSTATES = new Set([
  '55000', // object_not_in_prerequisite_state: "database … is not currently accepting connections"
  '55006', // object_in_use
  '55P03', // lock_not_available
  '57014', // query_canceled (statement_timeout)
  '3D000', // invalid_catalog_name: the database is gone or not yet restored
  '28000', // invalid_authorization_specification (pg_hba changed under us)
  '28P01', // invalid_password (credentials being rotated)
  '25006', // read_only_sql_transaction: a standby after failover
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Is this driver error one the client may retry (503), as opposed to a bug or a bad request? */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
  if (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_CLASSES.some((c) => code.startsWith(c))) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|connection error|Client was closed|not queryable|Client has encountered a connection error|Query read timeout/i.test(
    message,
  );
}

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<SqlDatabase> {
  const statementMs = options.statementTimeoutMs ?? 4000;
  const common = {
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  };
  const pool = new pg.Pool({
    ...common,
    max: options.poolSize ?? 10,
    Client: StallSafeClient,
    ...(statementMs > 0 ? { statement_timeout: statementMs, query_timeout: statementMs + 1000 } : {}),
  });
  // Rebuilds (a PATCH that changes declared sums, `rollups:rebuild`) and migrations may run for minutes.
  const longPool = new pg.Pool({ ...common, max: 2 });
  // A connection dropped by the server (restart, failover) must not crash the process: idle clients
  // report through the pool, checked-out ones (mid-transaction) through their own 'error' event.
  // The failed query itself rejects and is handled where it was made.
  for (const p of [pool, longPool]) {
    p.on('error', () => {});
    p.on('connect', (client) => client.on('error', () => {}));
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const longDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: longPool }) });
  const watchers = new Set<() => Promise<void>>();
  const instanceLocks = new Set<InstanceLock>();
  const leaderLocks = new Set<LeaderLock>();

  return {
    dialect: 'postgres',
    statementsSent: () => sent.statements,
    readWrite: db,
    readOnly: db,
    longWork: longDb,
    runScript: async (script) => {
      await longPool.query(script);
    },
    withMigrationLock: async (fn) => {
      // A connection of its own, outside the pool: the migrations themselves run on pool connections,
      // which must stay available even with DATABASE_POOL_SIZE=1.
      const client = new pg.Client({ ...common });
      client.on('error', () => {});
      await client.connect();
      try {
        await client.query('select pg_advisory_lock($1, $2)', [LOCK_NAMESPACE, MIGRATION_LOCK]);
        return await fn();
      } finally {
        await client.end().catch(() => {});
      }
    },
    lockExperimentsForAppend: async (trx: Transaction<Database>, ids: number[]) => {
      // Sorted, so two batches that share experiments always lock them in the same order (no deadlock);
      // one round trip for them all (unnest keeps the array's order).
      const sorted = [...new Set(ids)].sort((a, b) => a - b);
      if (sorted.length === 0) return;
      await sql`select pg_advisory_xact_lock(${LOCK_NAMESPACE + 1}::int, id) from unnest(${sorted}::int[]) as id`.execute(
        trx,
      );
    },
    announceExperimentChange: async (trx) => {
      await sql`select pg_notify(${CHANNEL}, '')`.execute(trx);
    },
    watchExperimentChanges: async (onChange) => {
      const stop = await listen(url, onChange);
      watchers.add(stop);
      return async () => {
        watchers.delete(stop);
        await stop();
      };
    },
    holdInstanceLock: async () => {
      const lock = await holdInstanceLock(url, INSTANCE_LOCK_NAMESPACE);
      instanceLocks.add(lock);
      return lock;
    },
    leaderLock: (key) => {
      const lock = leaderLock(url, LEADER_LOCK_NAMESPACE, key);
      leaderLocks.add(lock);
      return lock;
    },
    isUniqueViolation: (err) => (err as { code?: unknown })?.code === '23505',
    isForeignKeyViolation: (err) => (err as { code?: unknown })?.code === '23503',
    // Class 22: data exceptions (e.g. a value PostgreSQL cannot represent).
    isInvalidData: (err) => String((err as { code?: unknown })?.code ?? '').startsWith('22'),
    isUnavailable,
    close: async () => {
      await Promise.all([...watchers].map((stop) => stop()));
      await Promise.all([...instanceLocks].map((lock) => lock.close()));
      await Promise.all([...leaderLocks].map((lock) => lock.close()));
      await db.destroy();
      await longDb.destroy();
    },
  };
}

/**
 * LISTEN on a dedicated connection that reconnects by itself (with backoff) when the server goes away.
 * After every reconnection `onChange` is called too, since notifications sent meanwhile were lost.
 */
async function listen(url: string, onChange: () => void): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let delay = 250;

  const connect = async (): Promise<void> => {
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 3000,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    });
    c.on('error', () => {}); // 'end' follows and reconnects
    c.on('end', () => {
      if (client === c) client = null;
      if (!stopped) schedule();
    });
    c.on('notification', () => onChange());
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      c.removeAllListeners('end');
      await c.end().catch(() => {});
      throw err;
    }
    if (stopped) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    delay = 250;
  };

  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      connect().then(
        () => onChange(),
        () => {
          delay = Math.min(delay * 2, 5000);
          if (!stopped) schedule();
        },
      );
    }, delay);
    timer.unref();
  };

  try {
    await connect();
  } catch {
    schedule();
  }
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const c = client;
    client = null;
    await c?.end().catch(() => {});
  };
}
