// What a dialect file hands the SQL store: Kysely instances and the few things that differ by engine.
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface SqlDatabase {
  dialect: 'sqlite' | 'postgres';
  /** Writes and transactions. */
  writer: Kysely<Database>;
  /** Reads; may be the same instance as `writer`. */
  reader: Kysely<Database>;
  /** Runs a multi-statement SQL script (migrations). */
  runScript(sql: string): Promise<void>;
  isUniqueViolation(err: unknown): boolean;
  close(): Promise<void>;
}
