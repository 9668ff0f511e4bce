// Opens SQLite: a writer thread for a file (WAL, synchronous=FULL) plus a read connection on the main thread.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { SqlDatabase } from '../database.js';
import type { Database } from '../schema.js';
import { WriterThread, WriterThreadDialect } from './writer-thread-driver.js';

function code(err: unknown): string {
  const c = (err as { code?: unknown })?.code;
  return typeof c === 'string' ? c : '';
}

/** SQLite has one writer per file: these need no locks and no notifications. */
const singleProcess = {
  isUniqueViolation: (err: unknown) =>
    ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'].includes(code(err)),
  // Busy past the timeout, disk full, I/O errors, or the writer thread gone: the client may retry.
  isUnavailable: (err: unknown) =>
    /^SQLITE_(BUSY|FULL|IOERR|CANTOPEN|LOCKED)/.test(code(err)) || /writer thread exited/.test(String(err)),
  isForeignKeyViolation: (err: unknown) => code(err) === 'SQLITE_CONSTRAINT_FOREIGNKEY',
  isInvalidData: (err: unknown) => ['SQLITE_TOOBIG', 'SQLITE_MISMATCH'].includes(code(err)),
  withMigrationLock: <T>(fn: () => Promise<T>) => fn(),
  lockExperimentsForAppend: async () => {},
  announceExperimentChange: async () => {},
};

/** Opens `path`, or a private in-memory database for ':memory:' (single connection, no writer thread). */
export async function openSqlite(path: string, writerNice?: number): Promise<SqlDatabase> {
  if (path === ':memory:') return openMemory();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const writer = new WriterThread(path, writerNice);
  await writer.start();
  const readWrite = new Kysely<Database>({ dialect: new WriterThreadDialect(writer) });
  const readConnection = new BetterSqlite3(path);
  readConnection.pragma('busy_timeout = 5000');
  readConnection.pragma('query_only = ON');
  const readOnly = new Kysely<Database>({ dialect: new SqliteDialect({ database: readConnection }) });
  return {
    dialect: 'sqlite',
    readWrite,
    readOnly,
    runScript: async (sql) => {
      await writer.send({ type: 'exec', sql });
    },
    writeBatch: async (statements) => {
      await writer.exclusive({ type: 'batch', statements });
    },
    ...singleProcess,
    close: async () => {
      await readOnly.destroy();
      await readWrite.destroy();
    },
  };
}

/**
 * A read connection of its own to `path`, for a thread that only reads (the analysis workers): WAL lets it
 * read while the writer thread writes. Anything that would write fails.
 */
export function openSqliteReader(path: string): SqlDatabase {
  const connection = new BetterSqlite3(path, { fileMustExist: true });
  connection.pragma('busy_timeout = 5000');
  connection.pragma('query_only = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  return {
    dialect: 'sqlite',
    readWrite: db,
    readOnly: db,
    runScript: async () => {
      throw new Error('a read connection runs no scripts');
    },
    ...singleProcess,
    close: () => db.destroy(),
  };
}

function openMemory(): SqlDatabase {
  const connection = new BetterSqlite3(':memory:');
  connection.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  return {
    dialect: 'sqlite',
    readWrite: db,
    readOnly: db,
    runScript: async (sql) => {
      try {
        connection.exec(sql);
      } catch (err) {
        if (connection.inTransaction) connection.exec('ROLLBACK');
        throw err;
      }
    },
    ...singleProcess,
    close: () => db.destroy(),
  };
}
