// Opens the store named by a database URL and brings its schema up to date.
import type { SqlDatabase } from './database.js';
import { migrate } from './migrate.js';
import { openPostgres, type PostgresOptions } from './postgres.js';
import { SqlStore } from './sql-store.js';
import { openSqlite } from './sqlite/sqlite.js';

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
