// Idempotency-Keys in SQL (migrations 005 and 010; ADR 0016): claims and lookups. Answers are written
// with the data they describe (batch-rows.ts, idempotencyRecordStatement).
import type { Expression, Kysely, SqlBool } from 'kysely';
import type { InstanceLock } from './instance-lock.js';
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
 * Inserts a pending row, or takes over one that has expired (created before `since`) or whose claim was
 * abandoned: its instance is not alive (`instance.gone`), or it is this instance's own (the service
 * runs one request per key at a time in a process, so an own claim it meets was left behind by a
 * release that failed), or, as a last resort, it is pending since before `staleBefore`. One statement,
 * so two instances never both win. Without `instance` (one process writes) only the times count.
 */
export async function claimIdempotencyRow(
  db: Kysely<Database>,
  row: {
    owner: string;
    key: string;
    fingerprint: string;
    now: string;
    since: string;
    staleBefore: string;
    instance?: InstanceLock;
  },
): Promise<boolean> {
  const instance = row.instance;
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
      instance: instance?.id ?? null,
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
          instance: eb.ref('excluded.instance'),
        }))
        .where((eb) => {
          const abandoned: Expression<SqlBool>[] = [eb('idempotency_keys.created_at', '<', row.staleBefore)];
          if (instance !== undefined) {
            abandoned.push(eb('idempotency_keys.instance', '=', instance.id));
            abandoned.push(instance.gone(eb.ref('idempotency_keys.instance')));
          }
          return eb.or([
            eb('idempotency_keys.created_at', '<', row.since),
            eb.and([eb('idempotency_keys.state', '=', 'pending'), eb.or(abandoned)]),
          ]);
        }),
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
