// Opens the store named by a database URL and brings its schema up to date.
import type { SqlDatabase } from './database.js';
import { migrate } from './migrate.js';
import { openPostgres, type PostgresOptions } from './postgres.js';
import { SqlStore } from './sql-store.js';
import { openSqlite, openSqliteReader } from './sqlite/sqlite.js';

export type DatabaseTarget =
  | {
      kind: 'sqlite';
      path: string;
      /**
       * Niceness levels the writer thread runs below the process (0-19; Linux): under CPU contention
       * the event loop, which answers assign, runs ahead of commits (ADR 0008). Left as is when omitted.
       */
      writerNice?: number;
    }
  | ({ kind: 'postgres'; url: string } & PostgresOptions);

export async function openDatabase(target: DatabaseTarget): Promise<SqlDatabase> {
  if (target.kind === 'sqlite') return openSqlite(target.path, target.writerNice);
  return openPostgres(target.url, target);
}

export async function openStore(target: DatabaseTarget): Promise<SqlStore> {
  const db = await openDatabase(target);
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return new SqlStore(db);
}

/**
 * A store that only reads, for a worker thread beside the one that opened `target` (analysis workers): no
 * migration, one connection. An in-memory SQLite database cannot be shared with another thread.
 */
export async function openReadStore(target: DatabaseTarget): Promise<SqlStore> {
  if (target.kind === 'sqlite') {
    if (target.path === ':memory:')
      throw new Error('an in-memory database cannot be read from another thread');
    return new SqlStore(openSqliteReader(target.path));
  }
  return new SqlStore(await openPostgres(target.url, { ...target, poolSize: 1 }));
}
