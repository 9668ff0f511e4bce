// What a dialect file hands the SQL store: Kysely instances and the few things that differ by engine.
import type { Kysely, Transaction } from 'kysely';
import type { CompiledRows } from './compile-rows.js';
import type { InstanceLock } from './instance-lock.js';
import type { LeaderLock } from './leader-lock.js';
import type { Database } from './schema.js';

export interface SqlDatabase {
  dialect: 'sqlite' | 'postgres';
  /** Statements sent so far (PostgreSQL's clients count them; SQLite does not). */
  statementsSent?(): number;
  /** Writes and transactions (on SQLite, the connection in the writer thread). */
  readWrite: Kysely<Database>;
  /** Reads outside transactions; may be the same instance as `readWrite`. */
  readOnly: Kysely<Database>;
  /**
   * Work that may run for minutes (rebuilding rollups): connections without the statement timeout
   * (PostgreSQL). Absent: `readWrite`.
   */
  longWork?: Kysely<Database>;
  /** Runs a multi-statement SQL script (migrations). */
  runScript(sql: string): Promise<void>;
  /** Runs `fn` while holding a lock that keeps other processes from migrating at the same time. */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Called first in every transaction that appends results: afterwards, no other transaction can
   * append to these experiments until this one ends, so result positions follow commit order.
   */
  lockExperimentsForAppend(trx: Transaction<Database>, experimentIds: number[]): Promise<void>;
  /** Called in every transaction that changes experiments; other instances hear of it at commit. */
  announceExperimentChange(trx: Transaction<Database>): Promise<void>;
  /**
   * Where several processes write (PostgreSQL): takes a lock that marks this process alive to the others
   * for as long as it runs (released by `close`, or by the database when the process dies). Undefined
   * when one process owns the data.
   */
  holdInstanceLock?(): Promise<InstanceLock>;
  /**
   * Where several processes share the data (PostgreSQL): the lock that makes one of them lead the job
   * `key` names (leader-lock.ts). Undefined when one process owns the data: it always leads.
   */
  leaderLock?(key: number): LeaderLock;
  /** Calls `onChange` on every announced change (and after reconnecting); undefined when one process owns the data. */
  watchExperimentChanges?(onChange: () => void): Promise<() => Promise<void>>;
  /**
   * Where the engine has it: runs each statement (compiled by Kysely) once per parameter list, all in
   * one transaction, in one call. SQLite has it: its writer thread runs prepared multi-row statements in
   * microseconds, and one message per batch keeps the event loop free. PostgreSQL does not (it would
   * need the whole batch in one round trip): the store sends multi-row statements in a Kysely
   * transaction there.
   */
  writeBatch?(statements: CompiledRows[]): Promise<void>;
  isUniqueViolation(err: unknown): boolean;
  /** A row referenced something that does not exist (e.g. a result of an experiment just deleted). */
  isForeignKeyViolation(err: unknown): boolean;
  /** The database refused a value itself (a data exception): the request is at fault, not the server. */
  isInvalidData(err: unknown): boolean;
  /** The database cannot be reached or cannot take writes right now: worth a retry. */
  isUnavailable(err: unknown): boolean;
  close(): Promise<void>;
}
