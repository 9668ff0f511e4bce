// The SQLite writer thread: owns the only write connection, so fsync never blocks the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import Database, { type Statement } from 'better-sqlite3';
import { lowerThreadPriority } from '../../thread-priority.js';
import type { BatchStatement, WriterRequest, WriterResponse } from './writer-thread-protocol.js';

const { path, nice } = workerData as { path: string; nice?: number };

if (nice !== undefined) lowerThreadPriority(nice);

const port = parentPort!;
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');

// Multi-row inserts of varying sizes produce many distinct statements: keep the cache bounded.
const statements = new Map<string, Statement>();
function prepare(sql: string): Statement {
  let stmt = statements.get(sql);
  if (!stmt) {
    if (statements.size >= 256) statements.clear();
    stmt = db.prepare(sql);
    statements.set(sql, stmt);
  }
  return stmt;
}

/** BEGIN IMMEDIATE … COMMIT around every execution of every statement; any error rolls it all back. */
const writeBatch = db.transaction((statements: ReadonlyArray<BatchStatement>) => {
  for (const { sql, rows, tally } of statements) {
    const stmt = prepare(sql);
    if (tally === undefined) for (const parameters of rows) stmt.run(parameters);
    else runTallied(stmt, rows, prepare(tally));
  }
});

/** Runs `stmt` per parameter list, then `tally` once per distinct row it answered, with the count. */
function runTallied(stmt: Statement, rows: readonly unknown[][], tally: Statement): void {
  const counts = new Map<string, { values: unknown[]; n: number }>();
  for (const parameters of rows) {
    for (const row of stmt.raw(true).all(parameters) as unknown[][]) {
      const key = row.join('\u0000');
      const seen = counts.get(key);
      if (seen) seen.n++;
      else counts.set(key, { values: row, n: 1 });
    }
  }
  for (const { values, n } of counts.values()) tally.run([...values, n]);
}

function handle(msg: WriterRequest): WriterResponse {
  switch (msg.type) {
    case 'query': {
      const stmt = prepare(msg.sql);
      if (stmt.reader) return { id: msg.id, ok: true, rows: stmt.all(...msg.parameters) };
      const r = stmt.run(...msg.parameters);
      return { id: msg.id, ok: true, changes: r.changes, lastInsertRowid: Number(r.lastInsertRowid) };
    }
    case 'batch':
      // IMMEDIATE: the write lock is taken at BEGIN, never upgraded halfway (no SQLITE_BUSY mid-batch).
      writeBatch.immediate(msg.statements);
      return { id: msg.id, ok: true };
    case 'exec':
      try {
        db.exec(msg.sql);
      } catch (err) {
        // A failed script must not leave its transaction open on the only write connection.
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
      return { id: msg.id, ok: true };
    case 'close':
      statements.clear();
      db.close();
      return { id: msg.id, ok: true };
  }
}

port.on('message', (msg: WriterRequest) => {
  let response: WriterResponse;
  try {
    response = handle(msg);
  } catch (err) {
    const e = err as { message?: string; code?: string };
    response = { id: msg.id, ok: false, message: e.message ?? String(err), code: e.code };
  }
  port.postMessage(response);
});
port.postMessage({ id: 0, ok: true });
