// Runs a batch's row statements (row-statements.ts): as multi-row INSERTs of `chunk` rows on a
// connection (PostgreSQL, rebuilds), or compiled once into flat parameter arrays for SQLite's writer thread.
import type { Kysely } from 'kysely';
import { inKeyOrder, type RowStatement } from './row-statements.js';
import type { Database } from './schema.js';

/** A statement compiled once, and the parameters of each execution in its parameter order. */
export interface CompiledRows {
  sql: string;
  rows: unknown[][];
  /**
   * SQLite's writer thread: `sql` answers rows (RETURNING); per distinct row, `tally` runs with that
   * row's values and how many times it came back (exposure-user-statements.ts).
   */
  tally?: string;
}

/**
 * Executes a statement as multi-row INSERTs of `chunk` rows, on `db` (usually a transaction), upserts in
 * their table's key order (row-statements.ts inKeyOrder: concurrent PostgreSQL writers never deadlock).
 */
export async function executeInChunks(db: Kysely<Database>, statement: RowStatement): Promise<void> {
  const s = inKeyOrder(statement);
  for (let i = 0; i < s.rows.length; i += s.chunk) await s.build(db, s.rows.slice(i, i + s.chunk)).execute();
}

/**
 * Rows per statement on SQLite's writer thread: one statement of 100 rows runs about 1.7× faster per
 * row than 100 runs of a one-row statement, and larger statements gain nothing more (measured).
 */
export const SQLITE_ROWS_PER_STATEMENT = 100;

const compiledSql = new WeakMap<Kysely<Database>, Map<string, string>>();

/** The SQL of `s` for `n` rows, compiled once per statement, row count and column list. */
function sqlFor(
  db: Kysely<Database>,
  s: RowStatement,
  n: number,
  columns: string[],
  columnKey: string,
): string {
  let cache = compiledSql.get(db);
  if (!cache) {
    cache = new Map();
    compiledSql.set(db, cache);
  }
  const key = `${s.name}|${n}|${columnKey}`;
  let text = cache.get(key);
  if (text === undefined) {
    const compiled = s.build(db, s.rows.slice(0, n)).compile();
    if (compiled.parameters.length !== n * columns.length) {
      throw new Error(
        `${s.name}: ${compiled.parameters.length} parameters for ${n} rows of ${columns.length} columns`,
      );
    }
    text = compiled.sql;
    cache.set(key, text);
  }
  return text;
}

const pushers = new Map<string, (out: unknown[], row: unknown) => void>();

/**
 * A function pushing a row's values in `columns` order, compiled once per column list (the names are
 * the statements' own column names, never input): one property load per column where a loop over
 * computed names made every load a keyed, megamorphic one.
 */
function pusherOf(columns: string[], key: string): (out: unknown[], row: unknown) => void {
  let push = pushers.get(key);
  if (push === undefined) {
    const values = columns.map((c) => `row[${JSON.stringify(c)}]`).join(', ');
    push = new Function('out', 'row', `out.push(${values});`) as (out: unknown[], row: unknown) => void;
    pushers.set(key, push);
  }
  return push;
}

/**
 * Lays a statement out as multi-row statements of `rowsPerStatement` rows (and one for the rest), each
 * execution's parameters flat, row by row, in column order: a flat array of scalars is also the
 * cheapest thing to post to the writer thread.
 */
export function compileRows(
  db: Kysely<Database>,
  s: RowStatement,
  rowsPerStatement = SQLITE_ROWS_PER_STATEMENT,
): CompiledRows[] {
  const columns = Object.keys(s.rows[0] as object);
  const full = Math.floor(s.rows.length / rowsPerStatement);
  const rest = s.rows.length - full * rowsPerStatement;
  const columnKey = columns.join(',');
  const push = pusherOf(columns, columnKey);
  // Built by push, not `new Array(n)`: a preallocated array stays "holey" in V8, and the structured
  // clone that posts it to the writer thread sends a holey array index by index (measured: 0.9 µs a
  // row to serialize and 1.4 µs to read back, against 0.45 and 0.85 for a packed one).
  const params = (from: number, to: number) => {
    const out: unknown[] = [];
    for (let i = from; i < to; i++) push(out, s.rows[i]);
    return out;
  };
  const out: CompiledRows[] = [];
  if (full > 0) {
    const rows: unknown[][] = [];
    for (let i = 0; i < full; i++) rows.push(params(i * rowsPerStatement, (i + 1) * rowsPerStatement));
    out.push({ sql: sqlFor(db, s, rowsPerStatement, columns, columnKey), rows });
  }
  if (rest > 0) {
    out.push({
      sql: sqlFor(db, s, rest, columns, columnKey),
      rows: [params(s.rows.length - rest, s.rows.length)],
    });
  }
  return out;
}
