// Idempotency-Keys in SQL (migration 005; ADR 0016): claims and lookups. Answers are written with the
// data they describe (row-statements.ts, idempotencyAnswerStatement).
import type { Kysely } from 'kysely';
import { type Database, isoTime } from './schema.js';
import type { IdempotencyRow } from './store.js';

export async function selectIdempotencyKey(
  db: Kysely<Database>,
  owner: string,
  key: string,
  since: string,
): Promise<IdempotencyRow | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('owner', '=', owner)
    .where('key', '=', key)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    fingerprint: row.fingerprint,
    state: row.state === 'done' ? 'done' : 'pending',
    status: row.status === null ? null : Number(row.status),
    answer: row.answer,
    createdAt: isoTime(row.created_at),
  };
}

/**
 * Inserts a pending row, or takes over one that has expired (created before `since`) or whose claim
 * went stale (pending since before `staleBefore`): one statement, so two instances never both win.
 */
export async function claimIdempotencyRow(
  db: Kysely<Database>,
  row: { owner: string; key: string; fingerprint: string; now: string; since: string; staleBefore: string },
): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      owner: row.owner,
      key: row.key,
      fingerprint: row.fingerprint,
      state: 'pending',
      status: null,
      answer: null,
      created_at: row.now,
    })
    .onConflict((oc) =>
      oc
        .columns(['owner', 'key'])
        .doUpdateSet((eb) => ({
          fingerprint: eb.ref('excluded.fingerprint'),
          state: eb.ref('excluded.state'),
          status: null,
          answer: null,
          created_at: eb.ref('excluded.created_at'),
        }))
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.created_at', '<', row.since),
            eb.and([
              eb('idempotency_keys.state', '=', 'pending'),
              eb('idempotency_keys.created_at', '<', row.staleBefore),
            ]),
          ]),
        ),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deletePendingIdempotencyRow(
  db: Kysely<Database>,
  owner: string,
  key: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('owner', '=', owner)
    .where('key', '=', key)
    .where('state', '=', 'pending')
    .execute();
}

export async function deleteIdempotencyRowsBefore(db: Kysely<Database>, before: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
