// Leadership of a periodic job among instances on one PostgreSQL (the guardrail monitor): a session-level
// advisory lock on a connection of its own. The instance whose session holds it leads; PostgreSQL drops it
// the moment that session ends (the process exited, was killed, or its connection broke), and another
// instance takes it on its next try. SQLite has no such lock: its one process always leads.
import pg from 'pg';

export interface LeaderLock {
  /**
   * True when this process leads now: it held the lock and its connection still answers, or it just
   * took the lock. False when another instance holds it or the database cannot be reached.
   */
  tryLead(): Promise<boolean>;
  /** Ends the session: the lock is released at once. */
  close(): Promise<void>;
}

/** A check or a connection attempt slower than this counts as a lost connection (ms). */
const TIMEOUT_MS = 3000;

export function leaderLock(url: string, namespace: number, key: number): LeaderLock {
  let client: pg.Client | null = null;
  let leading = false;
  let closed = false;

  const drop = async () => {
    const c = client;
    client = null;
    leading = false;
    await c?.end().catch(() => {});
  };

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: TIMEOUT_MS,
      keepAlive: true,
    });
    c.on('error', () => {}); // 'end' follows
    c.on('end', () => {
      if (client !== c) return;
      client = null;
      leading = false;
    });
    await c.connect();
    return c;
  };

  return {
    async tryLead() {
      if (closed) return false;
      try {
        if (client === null) client = await connect();
        if (leading) {
          // Still ours while the session lives: a query proves it does.
          await client.query('select 1');
          return true;
        }
        const r = await client.query<{ locked: boolean }>(
          'select pg_try_advisory_lock($1::int, $2::int) as locked',
          [namespace, key],
        );
        leading = r.rows[0]?.locked === true;
        return leading;
      } catch {
        await drop();
        return false;
      }
    },
    async close() {
      closed = true;
      await drop();
    },
  };
}
