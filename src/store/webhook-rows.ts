// Webhooks' rows (migration 015): endpoints, and the delivery rows inserted with each event in its own
// transaction (insertEventRows calls enqueueDeliveries), claimed by one instance per attempt.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Actor, ChangeEvent } from '../core/events.js';
import type { JsonObject } from '../core/json.js';
import { type DeliveryStatus, subscribed, type WebhookFormat } from '../core/webhooks.js';
import { type Database, isoTime, type WebhookDeliveriesTable, type WebhooksTable } from './schema.js';
import { json } from './sql-reads.js';

export interface StoredWebhook extends WebhookHealth {
  id: string;
  url: string;
  /** `*`, types, or prefixes ending in `.*`. */
  events: string[];
  description: string | null;
  format: WebhookFormat;
  /** The signing secret, `whsec_…`. */
  secret: string;
  /** The secret the last rotation replaced, still signing (beside `secret`) until `previousSecretUntil`. */
  previousSecret: string | null;
  previousSecretUntil: string | null;
  /** False once an endpoint answered 410 (or was disabled by PATCH). */
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** An endpoint's health: its last attempt (written by the worker, never by a change of the endpoint). */
export interface WebhookHealth {
  /** When the last attempt ended; null: none yet. */
  lastDeliveryAt: string | null;
  /** 'ok': the last attempt was answered 2xx; 'failing': it was not; null: none yet. */
  lastStatus: 'ok' | 'failing' | null;
  /** Why the last attempt failed, in words (getaddrinfo ENOTFOUND host, HTTP 500, …); null when ok. */
  lastError: string | null;
}

export interface StoredDelivery {
  eventId: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  lastResponseStatus: number | null;
  /** Why the last attempt failed, in words; null: no attempt yet, or delivered. */
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

/** A delivery this instance claimed: what to post, where. */
export interface DueDelivery {
  webhook: StoredWebhook;
  event: ChangeEvent;
  attempts: number;
}

/** How an attempt ended, as written back. */
export interface AttemptRecord {
  status: DeliveryStatus;
  responseStatus: number | null;
  /** Why it failed, in words; null: delivered. */
  error: string | null;
  /** When the attempt ended. */
  at: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  disable: boolean;
}

function toWebhook(row: Selectable<WebhooksTable>): StoredWebhook {
  return {
    id: row.id,
    url: row.url,
    events: json<string[]>(row.events),
    description: row.description,
    format: row.format as WebhookFormat,
    secret: row.secret,
    previousSecret: row.previous_secret ?? null,
    previousSecretUntil: row.previous_secret_until == null ? null : isoTime(row.previous_secret_until),
    enabled: Boolean(row.enabled),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    ...healthOf(row),
  };
}

function webhookRow(w: StoredWebhook) {
  return {
    id: w.id,
    url: w.url,
    events: JSON.stringify(w.events),
    description: w.description,
    format: w.format,
    secret: w.secret,
    previous_secret: w.previousSecret,
    previous_secret_until: w.previousSecretUntil,
    enabled: w.enabled ? 1 : 0,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
  };
}

export async function insertWebhookRow(trx: Transaction<Database>, w: StoredWebhook): Promise<void> {
  await trx.insertInto('webhooks').values(webhookRow(w)).execute();
}

export async function updateWebhookRow(trx: Transaction<Database>, w: StoredWebhook): Promise<void> {
  const { id: _id, created_at: _created, ...fields } = webhookRow(w);
  await trx.updateTable('webhooks').set(fields).where('id', '=', w.id).execute();
}

export async function deleteWebhookRow(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
  await trx.deleteFrom('webhooks').where('id', '=', id).execute();
}

/** An endpoint row's health columns (migration 025); written by recordAttemptRow only. */
function healthOf(row: Selectable<WebhooksTable>): WebhookHealth {
  const status = row.last_status ?? null;
  return {
    lastDeliveryAt: row.last_delivery_at == null ? null : isoTime(row.last_delivery_at),
    lastStatus: status === 'ok' || status === 'failing' ? status : null,
    lastError: row.last_error ?? null,
  };
}

export async function selectWebhooks(db: Kysely<Database>): Promise<StoredWebhook[]> {
  const rows = await db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toWebhook);
}

export async function selectWebhook(
  db: Kysely<Database> | Transaction<Database>,
  id: string,
): Promise<StoredWebhook | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toWebhook(row);
}

/** One pending delivery row per event and enabled endpoint subscribed to its type, in the event's transaction. */
export async function enqueueDeliveries(
  trx: Transaction<Database>,
  events: readonly ChangeEvent[],
  only?: string,
): Promise<void> {
  let query = trx.selectFrom('webhooks').select(['id', 'events']).where('enabled', '=', 1);
  if (only !== undefined) query = query.where('id', '=', only);
  const hooks = await query.execute();
  const rows = events.flatMap((e) =>
    hooks
      .filter((h) => only !== undefined || subscribed(json<string[]>(h.events), e.type))
      .map((h) => ({
        webhook_id: h.id,
        event_id: e.id,
        type: e.type,
        status: 'pending',
        attempts: 0,
        last_response_status: null,
        next_attempt_at: e.at,
        delivered_at: null,
        created_at: e.at,
        claimed_by: null,
        claimed_until: null,
      })),
  );
  if (rows.length > 0) await trx.insertInto('webhook_deliveries').values(rows).execute();
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints for `token` until `until`. Each claim is one
 * conditional UPDATE: of two instances racing for a row, the second finds it claimed (PostgreSQL
 * re-checks the condition on the locked row; SQLite has one writer).
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  token: string,
  now: string,
  until: string,
  limit: number,
): Promise<DueDelivery[]> {
  const candidates = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select(['d.webhook_id', 'd.event_id'])
    .where('d.status', '=', 'pending')
    .where('w.enabled', '=', 1)
    .where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', now)]))
    .orderBy('d.next_attempt_at')
    .limit(limit)
    .execute();
  const claimed: Array<{ webhook_id: string; event_id: string }> = [];
  for (const c of candidates) {
    const res = await db
      .updateTable('webhook_deliveries')
      .set({ claimed_by: token, claimed_until: until })
      .where('webhook_id', '=', c.webhook_id)
      .where('event_id', '=', c.event_id)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) claimed.push(c);
  }
  const due: DueDelivery[] = [];
  for (const c of claimed) {
    const row = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select(['d.attempts', 'e.id', 'e.type', 'e.at', 'e.actor', 'e.experiment', 'e.data'])
      .where('d.webhook_id', '=', c.webhook_id)
      .where('d.event_id', '=', c.event_id)
      .executeTakeFirst();
    const webhook = await selectWebhook(db, c.webhook_id);
    if (row === undefined || webhook === undefined) continue;
    due.push({
      webhook,
      attempts: Number(row.attempts),
      event: {
        id: row.id,
        type: row.type,
        at: isoTime(row.at),
        actor: json<Actor>(row.actor),
        experiment: row.experiment,
        data: json<JsonObject>(row.data),
      },
    });
  }
  return due;
}

/** Writes an attempt's outcome, if this instance's claim still holds; 410 also disables the endpoint. */
export async function recordAttemptRow(
  db: Kysely<Database>,
  key: { webhookId: string; eventId: string; token: string },
  r: AttemptRecord,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: r.status,
        attempts: eb('attempts', '+', 1),
        last_response_status: r.responseStatus,
        last_error: r.error,
        next_attempt_at: r.nextAttemptAt,
        delivered_at: r.deliveredAt,
        claimed_by: null,
        claimed_until: null,
      }))
      .where('webhook_id', '=', key.webhookId)
      .where('event_id', '=', key.eventId)
      .where('claimed_by', '=', key.token)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return;
    await trx
      .updateTable('webhooks')
      .set({
        last_delivery_at: r.at,
        last_status: r.error === null ? 'ok' : 'failing',
        last_error: r.error,
        ...(r.disable ? { enabled: 0 } : {}),
      })
      .where('id', '=', key.webhookId)
      .execute();
  });
}

/** An endpoint's deliveries, newest first. */
export async function selectDeliveries(
  db: Kysely<Database>,
  webhookId: string,
  limit: number,
): Promise<StoredDelivery[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .orderBy('created_at', 'desc')
    .orderBy('event_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toDelivery);
}

function toDelivery(r: Selectable<WebhookDeliveriesTable>): StoredDelivery {
  return {
    eventId: r.event_id,
    type: r.type,
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    lastResponseStatus: r.last_response_status === null ? null : Number(r.last_response_status),
    lastError: r.last_error ?? null,
    nextAttemptAt: r.next_attempt_at === null ? null : isoTime(r.next_attempt_at),
    deliveredAt: r.delivered_at === null ? null : isoTime(r.delivered_at),
  };
}

/**
 * Makes one delivery pending and due at `now`, its schedule started again (attempts 0), whatever its
 * status. Undefined when there is no such delivery; 'claimed' while an instance's attempt is under way
 * (requeued then, the attempt's outcome would be dropped and the event sent twice at once).
 */
export async function requeueDeliveryRow(
  trx: Transaction<Database>,
  webhookId: string,
  eventId: string,
  now: string,
): Promise<StoredDelivery | 'claimed' | undefined> {
  const res = await trx
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      delivered_at: null,
      claimed_by: null,
      claimed_until: null,
    })
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .executeTakeFirst();
  const row = await trx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return Number(res.numUpdatedRows) === 1 ? toDelivery(row) : 'claimed';
}
