// Results search in SQL (issue 36, ADR 0039). result_text holds each result's input and output text
// (SQLite: FTS5, trigram tokenizer; PostgreSQL: a pg_trgm GIN index), filled off the /log path: before a
// search reads, `indexResults` adds the experiment's results after its mark in search_marks. Results of
// one experiment commit in seq order (one writer on SQLite; lockExperimentsForAppend on PostgreSQL), so
// every result committed before the search is indexed when it reads. Comments are matched in feedback.
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { CompiledRows } from './compile-rows.js';
import type { Database } from './schema.js';

/**
 * Results one indexing step adds (~37 µs each on SQLite): a step holds the writer for a few tens of
 * milliseconds, so batches of /log wait at most that long behind a search.
 */
const INDEX_STEP = 1000;

/** q as a LIKE pattern that matches it literally anywhere (`\` escapes). */
function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** q as an FTS5 string (a phrase: with the trigram tokenizer, a substring), its `"` doubled. */
function ftsPhrase(q: string): string {
  return `"${q.replaceAll('"', '""')}"`;
}

/**
 * True for results row `r` whose input, output, or a comment on its logId or assignment holds q: its seq
 * is among the matches, worked out once as a set (the text index's, then the few commented results: by
 * logId through its unique index, by assignment through a scan of the experiment's results per matching
 * comment; no index holds assignment ids).
 */
export function searchCondition(
  dialect: 'sqlite' | 'postgres',
  experimentId: number,
  q: string,
  common = false,
): RawBuilder<SqlBool> {
  const pattern = likePattern(q);
  const like = dialect === 'sqlite' ? sql`LIKE ${pattern} ESCAPE '\\'` : sql`ILIKE ${pattern}`;
  const comments = (kind: 'l' | 'a') =>
    sql`f.experiment_id = ${experimentId} AND f.target LIKE ${`${kind}:%`} AND f.comment ${like}`;
  const text =
    dialect === 'sqlite'
      ? sql`SELECT rowid FROM result_text WHERE result_text MATCH ${ftsPhrase(q)}`
      : // body is stored lowercased: LIKE is several times cheaper than ILIKE on each candidate it rechecks.
        sql`SELECT t.seq FROM result_text t WHERE t.experiment_id = ${experimentId} AND t.body LIKE ${likePattern(q.toLowerCase())}`;
  // SQLite: CROSS JOIN keeps feedback the outer loop (a scan of results per matching comment only).
  const join = dialect === 'sqlite' ? sql`CROSS JOIN` : sql`JOIN`;
  const commented = sql`SELECT c.seq FROM feedback f ${join} results c ON c.log_id = substr(f.target, 3)
      WHERE ${comments('l')} AND c.experiment_id = ${experimentId}
    UNION ALL SELECT c.seq FROM feedback f ${join} results c
      ON c.experiment_id = f.experiment_id AND substr(c.assignment_id, 1, 36) = substr(f.target, 3)
      WHERE ${comments('a')}`;
  if (common && dialect === 'postgres') {
    // Text in many results: each result is looked at in the page's order until the page is full,
    // rather than every match gathered first (0.66 s for a word in 1 result of 3 over 100,000). A scalar
    // subquery, not EXISTS: PostgreSQL turns an EXISTS beside OR into a hashed subplan that gathers every
    // match anyway (123 ms for "refund" over 100,000; 0.5 ms as written here).
    return sql<SqlBool>`((SELECT t.body FROM result_text t WHERE t.seq = r.seq)
      LIKE ${likePattern(q.toLowerCase())} OR r.seq IN (${commented}))`;
  }
  return sql<SqlBool>`r.seq IN (${text} UNION ALL ${commented})`;
}

/** Text matches from which the PostgreSQL page is read in order, each result looked at (searchCondition). */
const COMMON = 1000;

/** PostgreSQL: whether q is in at least COMMON results of the experiment (read from the index, then stopped). */
export async function commonText(db: Kysely<Database>, experimentId: number, q: string): Promise<boolean> {
  const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM (SELECT 1 FROM result_text t
    WHERE t.experiment_id = ${experimentId} AND t.body LIKE ${likePattern(q.toLowerCase())} LIMIT ${COMMON}) s`.execute(
    db,
  );
  return Number(rows[0]?.n ?? 0) >= COMMON;
}

const BODY = {
  sqlite: "coalesce(input, '') || char(10) || coalesce(output, '')",
  postgres: "lower(coalesce(input::text, '') || E'\\n' || coalesce(output::text, ''))",
};

/** The statements that index the experiment's results after its mark, up to `upto`, and move the mark. */
function indexStatements(dialect: 'sqlite' | 'postgres', experimentId: number, upto: number): CompiledRows[] {
  const mark = 'coalesce((SELECT m.seq FROM search_marks m WHERE m.experiment_id = ?), 0)';
  const text =
    dialect === 'sqlite'
      ? `INSERT INTO result_text (rowid, body) SELECT seq, ${BODY.sqlite} FROM results
         WHERE experiment_id = ? AND seq > ${mark} AND seq <= ?`
      : `INSERT INTO result_text (seq, experiment_id, body) SELECT seq, experiment_id, ${BODY.postgres}
         FROM results WHERE experiment_id = $1 AND seq > ${mark.replace('?', '$1')} AND seq <= $2
         ON CONFLICT DO NOTHING`;
  const moved =
    dialect === 'sqlite'
      ? 'INSERT INTO search_marks (experiment_id, seq) VALUES (?, ?) ON CONFLICT (experiment_id) DO UPDATE SET seq = max(seq, excluded.seq)'
      : 'INSERT INTO search_marks (experiment_id, seq) VALUES ($1, $2) ON CONFLICT (experiment_id) DO UPDATE SET seq = greatest(search_marks.seq, excluded.seq)';
  return [
    { sql: text, rows: [dialect === 'sqlite' ? [experimentId, experimentId, upto] : [experimentId, upto]] },
    { sql: moved, rows: [[experimentId, upto]] },
  ];
}

/**
 * Indexes every result of the experiment committed so far that is not yet indexed, INDEX_STEP at a
 * time. `write` runs statements in one transaction (SQLite: on the writer thread, in turn with batches).
 */
export async function indexResults(
  read: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  experimentId: number,
  write: (statements: CompiledRows[]) => Promise<void>,
): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ upto: number | string | null }>`
      SELECT (SELECT max(s.seq) FROM (SELECT r.seq FROM results r WHERE r.experiment_id = ${experimentId}
                AND r.seq > coalesce((SELECT m.seq FROM search_marks m WHERE m.experiment_id = ${experimentId}), 0)
                ORDER BY r.seq LIMIT ${INDEX_STEP}) s) AS upto`.execute(read);
    const upto = rows[0]?.upto;
    if (upto === null || upto === undefined) return;
    await write(indexStatements(dialect, experimentId, Number(upto)));
  }
}
