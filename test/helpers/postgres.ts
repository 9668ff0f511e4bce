// Test databases on the machine's PostgreSQL: one fresh database per suite, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server tests create their databases on (any database on it works as the admin connection). */
export const PG_ADMIN_URL =
  process.env.AGENTSPLIT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<boolean> | undefined;

/** Whether PostgreSQL answers. In CI it must: unreachable there is an error, not a skip. */
export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (err) {
      if (process.env.CI) throw new Error(`PostgreSQL is not reachable at ${PG_ADMIN_URL} in CI: ${err}`);
      process.stderr.write(
        `\n!!! PostgreSQL is not reachable at ${PG_ADMIN_URL} (${(err as Error).message}).\n` +
          '!!! The PostgreSQL suites are SKIPPED. Start it (see README) or set AGENTSPLIT_TEST_PG_URL.\n\n',
      );
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates `agentsplit_test_<random>`; `drop()` removes it even while connections are open. */
export async function createTestDatabase(label = 'db'): Promise<TestDatabase> {
  const name = `agentsplit_test_${label.replace(/[^a-z0-9_]/gi, '').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
