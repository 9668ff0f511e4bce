// Opens the store named by a database URL and brings its schema up to date.
import type { SqlDatabase } from './database.js';
import { migrate } from './migrate.js';
import { SqlStore } from './sql-store.js';
import { openSqlite } from './sqlite.js';

export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export async function openDatabase(target: DatabaseTarget): Promise<SqlDatabase> {
  if (target.kind === 'sqlite') return openSqlite(target.path);
  throw new Error('PostgreSQL support is not available in this version; use a sqlite: DATABASE_URL');
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
