// Managed API keys in SQL (migration 005; pages by migration 010's index): rows to keys and back. The SQL store runs these in its
// error translation and bumps the revision other instances watch.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { KeyScope } from '../core/keys.js';
import { type ApiKeysTable, type Database, isoTime } from './schema.js';
import type { StoredKey } from './store.js';

function toKey(row: Selectable<ApiKeysTable>): StoredKey {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as KeyScope[],
    experiments: row.experiments === null ? null : (JSON.parse(row.experiments) as string[]),
    prefix: row.prefix,
    hash: row.hash,
    rateLimitPerSecond: row.rate_limit_per_second === null ? null : Number(row.rate_limit_per_second),
    createdAt: isoTime(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : isoTime(row.last_used_at),
  };
}

export async function selectKeys(db: Kysely<Database>): Promise<StoredKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toKey);
}

/**
 * Up to `limit` live keys after `after` in creation order (created_at, then id): keyset pagination, so a
 * page reads its own rows through the index and no others, however many keys there are.
 */
export async function selectKeyPage(
  db: Kysely<Database>,
  after: { createdAt: string; id: string } | undefined,
  limit: number,
): Promise<StoredKey[]> {
  let query = db.selectFrom('api_keys').selectAll().where('revoked_at', 'is', null);
  if (after !== undefined) {
    // A row value comparison, which both engines answer from the index (created_at, id).
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)),
    );
  }
  const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute();
  return rows.map(toKey);
}

export async function insertKeyRow(trx: Transaction<Database>, key: StoredKey): Promise<void> {
  await trx
    .insertInto('api_keys')
    .values({
      id: key.id,
      name: key.name,
      scopes: JSON.stringify(key.scopes),
      experiments: key.experiments === null ? null : JSON.stringify(key.experiments),
      prefix: key.prefix,
      hash: key.hash,
      rate_limit_per_second: key.rateLimitPerSecond,
      created_at: key.createdAt,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
}

/** The revoked key's name; undefined when no unrevoked key has this id. */
export async function revokeKeyRow(
  trx: Transaction<Database>,
  id: string,
  at: string,
): Promise<string | undefined> {
  const row = await trx
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('name')
    .executeTakeFirst();
  return row?.name;
}

/** Only moves forward: an older report from another instance never overwrites a newer one. */
export async function updateKeyUse(
  db: Kysely<Database>,
  uses: Array<{ id: string; at: string }>,
): Promise<void> {
  for (const use of uses) {
    await db
      .updateTable('api_keys')
      .set({ last_used_at: use.at })
      .where('id', '=', use.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', use.at)]))
      .execute();
  }
}
