// A Kysely driver whose one connection lives in the SQLite writer thread; queries travel as messages.
import { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { WriterRequest, WriterResponse } from './writer-thread-protocol.js';

type Pending = { resolve: (r: WriterResponse & { ok: true }) => void; reject: (e: Error) => void };
type Outgoing = WriterRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** An error raised in the writer thread, carrying SQLite's code (e.g. SQLITE_CONSTRAINT_UNIQUE). */
export class WriterThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * Under tsx (tests, `npm start`) the thread's entry is a .ts file and its thread must register tsx first; a
 * compiled build runs the .js beside this file directly.
 */
function spawnWorker(path: string, nice: number | undefined): Worker {
  const options = { workerData: { path, nice } };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./writer-thread.js', import.meta.url), options);
  const entry = new URL('./writer-thread.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

export class WriterThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly ready: Promise<void>;
  private dead: Error | null = null;
  private lock: Promise<void> | null = null;
  private unlock: (() => void) | null = null;

  constructor(path: string, nice?: number) {
    this.worker = spawnWorker(path, nice);
    this.ready = new Promise((resolve, reject) => {
      this.pending.set(0, { resolve: () => resolve(), reject });
    });
    this.worker.on('message', (msg: WriterResponse) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg);
      else p.reject(new WriterThreadError(msg.message, msg.code));
    });
    const fail = (err: Error) => {
      this.dead = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`SQLite writer thread exited (code ${code})`)));
  }

  start(): Promise<void> {
    return this.ready;
  }

  send(msg: Outgoing): Promise<WriterResponse & { ok: true }> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...msg, id });
    });
  }

  /**
   * The writer has one connection: a Kysely transaction and a whole-batch message must not interleave.
   * Everything that writes takes this lock first.
   */
  async acquire(): Promise<void> {
    while (this.lock) await this.lock;
    this.lock = new Promise((resolve) => {
      this.unlock = resolve;
    });
  }

  release(): void {
    const unlock = this.unlock;
    this.lock = null;
    this.unlock = null;
    unlock?.();
  }

  /** Sends `msg` while holding the lock (for messages that are a transaction of their own). */
  async exclusive(msg: Outgoing): Promise<WriterResponse & { ok: true }> {
    await this.acquire();
    try {
      return await this.send(msg);
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    if (!this.dead) await this.send({ type: 'close' });
    await this.worker.terminate();
  }
}

class WriterConnection implements DatabaseConnection {
  constructor(private readonly thread: WriterThread) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const r = await this.thread.send({ type: 'query', sql: query.sql, parameters: query.parameters });
    if (r.rows) return { rows: r.rows as R[] };
    return {
      rows: [],
      numAffectedRows: r.changes === undefined ? undefined : BigInt(r.changes),
      insertId: r.lastInsertRowid === undefined ? undefined : BigInt(r.lastInsertRowid),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered across threads; pages are read instead.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by the SQLite writer connection');
  }
}

/** SQLite has one writer: the thread's lock hands the single connection to one transaction at a time. */
class WriterDriver implements Driver {
  private readonly connection: WriterConnection;

  constructor(private readonly thread: WriterThread) {
    this.connection = new WriterConnection(thread);
  }

  async init(): Promise<void> {
    await this.thread.start();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.thread.acquire();
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    this.thread.release();
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }
}

export class WriterThreadDialect implements Dialect {
  constructor(private readonly thread: WriterThread) {}
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver() {
    return new WriterDriver(this.thread);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's introspector takes any database type.
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}
