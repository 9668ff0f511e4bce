// The contexts assignments were made with (issue 26), found where they are stored: in the exposure
// batches (issue 37). Assign writes nothing but its exposure; before results are read, `indexContexts`
// copies the contexts of the experiment's batches after its mark in context_marks into
// assignment_contexts (one INSERT … SELECT over the batches' JSON, in the database), and moves the mark.
// Batches that carry a context commit in seq order per experiment (SQLite: one writer; PostgreSQL: under
// the experiment's append lock, batch-plan.ts exposureLocks, which the indexer takes too), so a batch
// committed later always lies after the mark.
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { CompiledRows } from './compile-rows.js';
import type { Database } from './schema.js';

/** Exposures one step indexes at most (a lone larger batch is a step of its own): tens of ms of the writer. */
const STEP_EXPOSURES = 20_000;
/** Batches looked at to size a step. */
const STEP_BATCHES = 500;

const MARK = {
  sqlite: 'coalesce((SELECT m.seq FROM context_marks m WHERE m.experiment_id = ?), 0)',
  postgres: 'coalesce((SELECT m.seq FROM context_marks m WHERE m.experiment_id = $1), 0)',
};

/** The statements that index the batches after the mark, up to seq `upto`, and move the mark. */
export function contextStatements(
  dialect: 'sqlite' | 'postgres',
  experimentId: number,
  upto: number,
): CompiledRows[] {
  if (dialect === 'sqlite') {
    return [
      {
        sql: `INSERT OR IGNORE INTO assignment_contexts (experiment_id, assignment_uuid, context)
          SELECT b.experiment_id, substr(json_extract(e.value, '$[0]'), 1, 36), json_extract(e.value, '$[3]')
          FROM exposure_batches b, json_each(b.exposures) e
          WHERE b.experiment_id = ? AND b.seq > ${MARK.sqlite} AND b.seq <= ?
            AND json_array_length(e.value) = 5 AND json_type(e.value, '$[3]') = 'object'`,
        rows: [[experimentId, experimentId, upto]],
      },
      {
        sql: `INSERT INTO context_marks (experiment_id, seq) VALUES (?, ?)
          ON CONFLICT (experiment_id) DO UPDATE SET seq = max(seq, excluded.seq)`,
        rows: [[experimentId, upto]],
      },
    ];
  }
  return [
    {
      sql: `INSERT INTO assignment_contexts (experiment_id, assignment_uuid, context)
        SELECT b.experiment_id, substr(e.value ->> 0, 1, 36), (e.value -> 3)::text
        FROM exposure_batches b, json_array_elements(b.exposures::json) e
        WHERE b.experiment_id = $1 AND b.seq > ${MARK.postgres} AND b.seq <= $2
          AND json_array_length(e.value) = 5 AND json_typeof(e.value -> 3) = 'object'
        ON CONFLICT DO NOTHING`,
      rows: [[experimentId, upto]],
    },
    {
      sql: `INSERT INTO context_marks (experiment_id, seq) VALUES ($1, $2)
        ON CONFLICT (experiment_id) DO UPDATE SET seq = greatest(context_marks.seq, excluded.seq)`,
      rows: [[experimentId, upto]],
    },
  ];
}

/** The seq up to which the next step indexes (null: nothing after the mark). */
export async function contextStep(db: Kysely<Database>, experimentId: number): Promise<number | null> {
  const { rows } = await sql<{ seq: number | string; count: number | string }>`
    SELECT b.seq, b.count FROM exposure_batches b WHERE b.experiment_id = ${experimentId}
      AND b.seq > coalesce((SELECT m.seq FROM context_marks m WHERE m.experiment_id = ${experimentId}), 0)
    ORDER BY b.seq LIMIT ${STEP_BATCHES}`.execute(db);
  if (rows.length === 0) return null;
  let upto = Number(rows[0]!.seq);
  let exposures = 0;
  for (const r of rows) {
    exposures += Number(r.count);
    if (exposures > STEP_EXPOSURES && Number(r.seq) !== upto) break;
    upto = Number(r.seq);
  }
  return upto;
}

/** Runs compiled statements on a connection or transaction (PostgreSQL; SQLite without a writer thread). */
export async function runCompiled(db: Kysely<Database>, statements: CompiledRows[]): Promise<void> {
  for (const s of statements) for (const row of s.rows) await db.executeQuery(CompiledQuery.raw(s.sql, row));
}
