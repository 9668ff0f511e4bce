// The history's rows (store/sql-store.ts): events inserted inside the change's own transaction, and read
// oldest first (by seq), a page at a time.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Actor, ChangeEvent } from '../core/events.js';
import type { JsonObject } from '../core/json.js';
import { type Database, type EventsTable, isoTime } from './schema.js';
import { json } from './sql-reads.js';
import type { EventQuery, StoredEvent } from './store.js';
import { enqueueDeliveries } from './webhook-rows.js';

function toEvent(row: Selectable<EventsTable>): StoredEvent {
  return {
    seq: Number(row.seq),
    id: row.id,
    type: row.type,
    at: isoTime(row.at),
    actor: json<Actor>(row.actor),
    experiment: row.experiment,
    data: json<JsonObject>(row.data),
  };
}

/**
 * Inserts the events in the transaction of the change they record (nothing when there are none), with
 * a pending delivery per subscribed webhook (webhook-rows.ts): a committed event always has them.
 */
export async function insertEventRows(
  trx: Transaction<Database>,
  events: readonly ChangeEvent[] | undefined,
): Promise<void> {
  if (events === undefined || events.length === 0) return;
  await trx
    .insertInto('events')
    .values(
      events.map((e) => ({
        id: e.id,
        type: e.type,
        at: e.at,
        actor: JSON.stringify(e.actor),
        experiment: e.experiment,
        data: JSON.stringify(e.data),
      })),
    )
    .execute();
  await enqueueDeliveries(trx, events);
}

export async function selectEvents(db: Kysely<Database>, q: EventQuery): Promise<StoredEvent[]> {
  let query = db.selectFrom('events').selectAll();
  if (q.experiment !== undefined) query = query.where('experiment', '=', q.experiment);
  if (q.type !== undefined) {
    const type = q.type;
    // substr, not LIKE: `_` in a type would be LIKE's wildcard.
    query =
      'exact' in type
        ? query.where('type', '=', type.exact)
        : query.where((eb) =>
            eb(eb.fn('substr', ['type', eb.val(1), eb.val(type.prefix.length)]), '=', type.prefix),
          );
  }
  if (q.since !== undefined) query = query.where('at', '>=', q.since);
  if (q.afterSeq !== undefined) query = query.where('seq', '>', q.afterSeq);
  const rows = await query.orderBy('seq').limit(q.limit).execute();
  return rows.map(toEvent);
}

/** The monitor's last findings of an experiment (migration 016). */
export async function selectMonitorState(
  db: Kysely<Database>,
  experimentId: number,
): Promise<JsonObject | undefined> {
  const row = await db
    .selectFrom('monitor_states')
    .select('state')
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  return row && json<JsonObject>(row.state);
}

/** Writes (or replaces) the monitor's last findings of an experiment. */
export async function upsertMonitorState(
  trx: Transaction<Database>,
  experimentId: number,
  state: JsonObject,
  at: string,
): Promise<void> {
  const text = JSON.stringify(state);
  await trx
    .insertInto('monitor_states')
    .values({ experiment_id: experimentId, state: text, updated_at: at })
    .onConflict((oc) => oc.column('experiment_id').doUpdateSet({ state: text, updated_at: at }))
    .execute();
}
