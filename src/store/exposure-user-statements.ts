// Distinct users of sticky experiments (issue 23), counted where they are inserted (issue 37): each
// sticky exposure batch's users are inserted straight from its JSON (the stored form's userId and
// variantKey), a user already stored inserts nothing, and only the rows inserted are counted into
// exposure_user_rollups. No users map on the main thread and no read of the stored users: the database's
// unique key decides, in the batch's own transaction.
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { ExposureBatch } from '../core/writes.js';
import type { CompiledRows } from './compile-rows.js';
import type { Database } from './schema.js';

/** The sticky batches' parameters: experiment, version and the batch's JSON array of stored exposures. */
function userBatches(batches: readonly ExposureBatch[]): unknown[][] {
  return batches.filter((b) => b.unit === true).map((b) => [b.experimentId, b.version, b.json]);
}

/**
 * SQLite (json_each walks the array in order, so a user appearing twice keeps its first variant): the
 * insert answers the rows it inserted, and the writer thread adds their count per variant (`tally`).
 */
const SQLITE_INSERT = `INSERT INTO exposure_users (experiment_id, experiment_version, user_id, variant_key)
  SELECT ?, ?, json_extract(e.value, '$[2]'), json_extract(e.value, '$[1]') FROM json_each(?) e WHERE true
  ON CONFLICT DO NOTHING RETURNING experiment_id, experiment_version, variant_key`;
const SQLITE_TALLY = `INSERT INTO exposure_user_rollups (experiment_id, experiment_version, variant_key, n)
  VALUES (?, ?, ?, ?) ON CONFLICT (experiment_id, experiment_version, variant_key)
  DO UPDATE SET n = exposure_user_rollups.n + excluded.n`;

/** The statements of the batch's distinct users, for SQLite's writer thread (none without sticky batches). */
export function sqliteUserStatements(batches: readonly ExposureBatch[]): CompiledRows[] {
  const rows = userBatches(batches);
  return rows.length === 0 ? [] : [{ sql: SQLITE_INSERT, rows, tally: SQLITE_TALLY }];
}

/**
 * Inside transaction `trx` (PostgreSQL; SQLite without a writer thread). PostgreSQL: one statement per
 * sticky batch, the count a CTE of the insert; ORDINALITY keeps the array's order, and DO NOTHING skips a
 * user this statement inserted a moment before as it skips a stored one.
 */
export async function insertUsers(
  trx: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  batches: readonly ExposureBatch[],
): Promise<void> {
  if (dialect === 'sqlite') {
    for (const { sql: text, rows, tally } of sqliteUserStatements(batches)) {
      const counts = new Map<string, unknown[]>();
      for (const parameters of rows) {
        const { rows: inserted } = await trx.executeQuery<Record<string, unknown>>(
          CompiledQuery.raw(text, parameters),
        );
        for (const row of inserted) {
          const values = Object.values(row);
          const key = values.join('\u0000');
          const seen = counts.get(key);
          if (seen) seen[seen.length - 1] = (seen[seen.length - 1] as number) + 1;
          else counts.set(key, [...values, 1]);
        }
      }
      for (const values of counts.values()) await trx.executeQuery(CompiledQuery.raw(tally!, values));
    }
    return;
  }
  for (const [experimentId, version, json] of userBatches(batches)) {
    await sql`WITH inserted AS (
        INSERT INTO exposure_users (experiment_id, experiment_version, user_id, variant_key)
        SELECT ${experimentId}::bigint, ${version}::int, e.value ->> 2, e.value ->> 1
        FROM json_array_elements(${json}::json) WITH ORDINALITY AS e(value, i) ORDER BY e.i
        ON CONFLICT DO NOTHING RETURNING variant_key)
      INSERT INTO exposure_user_rollups (experiment_id, experiment_version, variant_key, n)
      SELECT ${experimentId}::bigint, ${version}::int, variant_key, count(*) FROM inserted
      GROUP BY variant_key ORDER BY variant_key
      ON CONFLICT (experiment_id, experiment_version, variant_key)
      DO UPDATE SET n = exposure_user_rollups.n + excluded.n`.execute(trx);
  }
}
