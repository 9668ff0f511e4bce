// This process's liveness in PostgreSQL (ADR 0016): a session-level advisory lock, keyed by the
// instance's id, held on a connection of its own for the life of the process. PostgreSQL drops it the
// moment that session ends (the process exited or was killed, or the connection broke), so another
// instance tells a dead instance's pending Idempotency-Key claims from a live one's by trying the lock.
import { type Expression, type RawBuilder, sql } from 'kysely';
import pg from 'pg';

export interface InstanceLock {
  /** This process's instance id: the lock's second key, recorded in the claims it makes. */
  readonly id: number;
  /**
   * True while the lock is held. False while its connection is lost and being re-established: other
   * instances may then take this one's claims over, so it must make none (it is not alive to them).
   */
  readonly held: boolean;
  /**
   * SQL true when the instance named by `instance` (a column) is not alive: it holds no lock. Asked
   * with a shared transaction-level try of the same lock, which only the live instance's exclusive
   * session lock refuses: checks of the same dead instance by many claims at once never refuse each
   * other. Released when the statement's transaction ends.
   */
  gone(instance: Expression<number | null>): RawBuilder<boolean>;
  /** Ends the session: the lock is released at once. */
  close(): Promise<void>;
}

/** How often the lock's connection is checked, so a silently broken one is noticed (ms). */
const HEARTBEAT_MS = 5000;
/** A check or a connection attempt slower than this counts as a lost connection (ms). */
const TIMEOUT_MS = 3000;
/** Ids tried at start before giving up (another live instance holding a random id is a 1-in-2^31 event). */
const START_TRIES = 20;

function randomId(): number {
  // 1 .. 2^31 - 1: the lock's int4 key, and the claims' INTEGER column.
  return 1 + Math.floor(Math.random() * 0x7ffffffe);
}

/**
 * Takes the lock under a fresh random id (throws when the database cannot be reached). When the
 * connection is lost, `held` turns false and the same id is taken again, with backoff, until `close`.
 */
export async function holdInstanceLock(url: string, namespace: number): Promise<InstanceLock> {
  let client: pg.Client | null = null;
  let held = false;
  let stopped = false;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let delay = 250;
  let id = 0;

  /** Connects and tries the lock under `id`; true when held. */
  const acquire = async (): Promise<boolean> => {
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: TIMEOUT_MS,
      keepAlive: true,
    });
    c.on('error', () => {}); // 'end' follows
    try {
      await c.connect();
      const r = await c.query<{ locked: boolean }>(
        'select pg_try_advisory_lock($1::int, $2::int) as locked',
        [namespace, id],
      );
      if (r.rows[0]?.locked !== true || stopped) {
        await c.end().catch(() => {});
        return false;
      }
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    c.on('end', () => {
      if (client !== c) return;
      client = null;
      held = false;
      if (!stopped) schedule();
    });
    client = c;
    held = true;
    delay = 250;
    return true;
  };

  const schedule = () => {
    clearTimeout(reconnectTimer);
    reconnectTimer = setTimeout(() => {
      acquire().then(
        (ok) => {
          if (!ok && !stopped) schedule();
        },
        () => {
          if (!stopped) schedule();
        },
      );
      delay = Math.min(delay * 2, 5000);
    }, delay);
    reconnectTimer.unref();
  };

  for (let attempt = 0; attempt < START_TRIES && !held; attempt++) {
    id = randomId();
    await acquire();
  }
  if (!held) throw new Error('no free instance id for the PostgreSQL instance lock');

  // A connection that broke without a word (a firewall dropping an idle session) is found by a query.
  const heartbeat = setInterval(() => {
    const c = client;
    c?.query('select 1').catch(() => c.end().catch(() => {}));
  }, HEARTBEAT_MS);
  heartbeat.unref();

  return {
    get id() {
      return id;
    },
    get held() {
      return held;
    },
    gone: (instance) =>
      sql<boolean>`(${instance} is not null and pg_try_advisory_xact_lock_shared(${sql.lit(namespace)}::int, ${instance}))`,
    close: async () => {
      stopped = true;
      held = false;
      clearTimeout(reconnectTimer);
      clearInterval(heartbeat);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
