// Runs a batch's row statements (row-statements.ts) on PostgreSQL as few round trips as it can: every run
// of consecutive inserts and upserts becomes ONE named, prepared statement, each table a data-modifying
// CTE fed by `unnest` of one array parameter per column. The statement's text depends only on the
// tables and columns of the batch, so the common batch shape is parsed and planned once per connection
// instead of once per statement per batch (issue 37: ~nine statements and their planning per batch).
import { createHash } from 'node:crypto';
import { CompiledQuery, type Kysely } from 'kysely';
import { executeInChunks } from './compile-rows.js';
import { inKeyOrder, type RowStatement, upsertOf } from './row-statements.js';
import type { Database } from './schema.js';

/**
 * Prefix of a query text the pg client (postgres.ts) runs as a named prepared statement: Kysely's
 * CompiledQuery has no name, so the name travels in a leading comment.
 */
export const PREPARED_PREFIX = '/*prepared:';

/** The query `{ name, text }` a text starting with PREPARED_PREFIX stands for, or undefined. */
export function preparedOf(text: string): { name: string; text: string } | undefined {
  if (!text.startsWith(PREPARED_PREFIX)) return undefined;
  const end = text.indexOf('*/');
  return { name: text.slice(PREPARED_PREFIX.length, end), text };
}

/** Plain inserts (no RETURNING, no reads) that may join the statement besides UPSERTS' tables. */
const INSERTS = new Set(['results', 'exposure_batches']);

const canJoin = (s: RowStatement) => INSERTS.has(s.name) || upsertOf(s.name) !== undefined;

/** Each table's column types (format_type), read once per process: arrays are cast to them. */
const columnTypes = new Map<string, Map<string, string>>();

async function typesOf(db: Kysely<Database>, table: string): Promise<Map<string, string>> {
  let types = columnTypes.get(table);
  if (types === undefined) {
    const { rows } = await db.executeQuery<{ name: string; type: string }>(
      CompiledQuery.raw(
        `select attname as name, format_type(atttypid, null) as type from pg_attribute
         where attrelid = $1::regclass and attnum > 0 and not attisdropped`,
        [table],
      ),
    );
    types = new Map(rows.map((r) => [r.name, r.type]));
    columnTypes.set(table, types);
  }
  return types;
}

const quote = (name: string) => `"${name}"`;

/** The CTE of one statement, its parameters numbered from `first`. */
function cteOf(s: RowStatement, columns: string[], types: Map<string, string>, first: number): string {
  const arrays = columns.map((c, i) => {
    const type = types.get(c);
    if (type === undefined) throw new Error(`${s.name}: no column ${c}`);
    return `$${first + i}::${type}[]`;
  });
  const list = columns.map(quote).join(', ');
  const insert = `insert into ${quote(s.name)} (${list}) select * from unnest(${arrays.join(', ')})`;
  const upsert = upsertOf(s.name);
  if (upsert === undefined) return insert;
  const { keys, add = [], replace = [], least = [], greatest = [] } = upsert;
  const conflict = ` on conflict (${keys.map(quote).join(', ')})`;
  if (add.length + replace.length + least.length + greatest.length === 0)
    return `${insert}${conflict} do nothing`;
  const t = quote(s.name);
  // As row-statements.ts upsert: NULL on either side compares to NULL, so the ELSE keeps the stored value.
  const past = (c: string, op: string) =>
    `${quote(c)} = case when excluded.${quote(c)} ${op} ${t}.${quote(c)} then excluded.${quote(c)} else ${t}.${quote(c)} end`;
  const sets = [
    ...add.map((c) => `${quote(c)} = ${t}.${quote(c)} + excluded.${quote(c)}`),
    ...replace.map((c) => `${quote(c)} = excluded.${quote(c)}`),
    ...least.map((c) => past(c, '<')),
    ...greatest.map((c) => past(c, '>')),
  ];
  return `${insert}${conflict} do update set ${sets.join(', ')}`;
}

/** Statement texts by shape (tables and columns), with their prepared names. */
const texts = new Map<string, string>();

/** Runs `group` (statements of distinct tables) as one prepared statement. */
async function runAsOne(db: Kysely<Database>, group: RowStatement[]): Promise<void> {
  const ordered = group.map(inKeyOrder);
  const columnsOf = ordered.map((s) => Object.keys(s.rows[0] as object));
  const shape = ordered.map((s, i) => `${s.name}(${columnsOf[i]?.join(',')})`).join(';');
  let text = texts.get(shape);
  if (text === undefined) {
    const ctes: string[] = [];
    let next = 1;
    for (const [i, s] of ordered.entries()) {
      const columns = columnsOf[i] as string[];
      ctes.push(`w${i} as (${cteOf(s, columns, await typesOf(db, s.name), next)})`);
      next += columns.length;
    }
    const name = `ab_${createHash('sha1').update(shape).digest('hex').slice(0, 20)}`;
    text = `${PREPARED_PREFIX}${name}*/ with ${ctes.join(', ')} select 1`;
    texts.set(shape, text);
  }
  const values: unknown[][] = [];
  for (const [i, s] of ordered.entries()) {
    for (const c of columnsOf[i] as string[]) {
      values.push(s.rows.map((r) => (r as Record<string, unknown>)[c] ?? null));
    }
  }
  await db.executeQuery(CompiledQuery.raw(text, values));
}

/**
 * Executes `statements` in order on `db` (a transaction): runs of inserts and upserts of distinct tables
 * as one statement each (CTEs of one statement do not see each other's writes, so a table written twice
 * starts a new statement), anything else (RETURNING, deletes) as multi-row statements as before.
 * Returns how many statements were sent.
 */
export async function executeAsFew(db: Kysely<Database>, statements: RowStatement[]): Promise<number> {
  let group: RowStatement[] = [];
  let sent = 0;
  const flush = async () => {
    if (group.length > 0) {
      await runAsOne(db, group);
      sent++;
    }
    group = [];
  };
  for (const s of statements) {
    if (s.rows.length === 0) continue;
    if (!canJoin(s)) {
      await flush();
      await executeInChunks(db, s);
      sent += Math.ceil(s.rows.length / s.chunk);
      continue;
    }
    if (group.some((g) => g.name === s.name)) await flush();
    group.push(s);
  }
  await flush();
  return sent;
}
