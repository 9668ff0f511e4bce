// Saved groups' rows (migration 021): one row per group, its values one JSON array read and written whole.
import type { Kysely, Selectable, Transaction } from 'kysely';
import { type Database, isoTime, type SavedGroupsTable } from './schema.js';
import { json } from './sql-reads.js';
import type { StoredGroup } from './store.js';

function toGroup(row: Selectable<SavedGroupsTable>): StoredGroup {
  return {
    key: row.key,
    description: row.description,
    values: json<Array<string | number>>(row.values),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

export async function selectGroups(db: Kysely<Database>): Promise<StoredGroup[]> {
  const rows = await db.selectFrom('saved_groups').selectAll().orderBy('key').execute();
  return rows.map(toGroup);
}

/** The group of `key`, its row locked until the transaction ends on PostgreSQL (SQLite has one writer). */
export async function lockGroupRow(
  trx: Transaction<Database>,
  key: string,
  postgres: boolean,
): Promise<StoredGroup | undefined> {
  let query = trx.selectFrom('saved_groups').selectAll().where('key', '=', key);
  if (postgres) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : toGroup(row);
}

/** Inserts or replaces the row of `g.key` (created_at kept on replace). */
export async function upsertGroupRow(trx: Transaction<Database>, g: StoredGroup): Promise<void> {
  const values = JSON.stringify(g.values);
  await trx
    .insertInto('saved_groups')
    .values({
      key: g.key,
      description: g.description,
      values,
      size: g.values.length,
      created_at: g.createdAt,
      updated_at: g.updatedAt,
    })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        description: g.description,
        values,
        size: g.values.length,
        updated_at: g.updatedAt,
      }),
    )
    .execute();
}

export async function deleteGroupRow(trx: Transaction<Database>, key: string): Promise<void> {
  await trx.deleteFrom('saved_groups').where('key', '=', key).execute();
}
