// The store of webhooks (issue 27 item 3) for both databases: endpoints changed in one transaction with
// their events, deliveries claimed and written back. The SQL store only (the runtime's store); the memory
// fake keeps no webhooks.
import type { ChangeEvent } from '../core/events.js';
import type { SqlDatabase } from './database.js';
import { insertEventRows } from './event-rows.js';
import { translatingErrors } from './sql-errors.js';
import {
  type AttemptRecord,
  claimDueDeliveries,
  type DueDelivery,
  deleteWebhookRow,
  enqueueDeliveries,
  insertWebhookRow,
  recordAttemptRow,
  requeueDeliveryRow,
  type StoredDelivery,
  type StoredWebhook,
  selectDeliveries,
  selectWebhook,
  selectWebhooks,
  updateWebhookRow,
} from './webhook-rows.js';

export type { AttemptRecord, DueDelivery, StoredDelivery, StoredWebhook };

export interface WebhookStore {
  listWebhooks(): Promise<StoredWebhook[]>;
  findWebhook(id: string): Promise<StoredWebhook | undefined>;
  /** Inserts the endpoint and its events (its own creation is not delivered to it). */
  insertWebhook(w: StoredWebhook, events: readonly ChangeEvent[]): Promise<void>;
  /** Changes the endpoint; false when there is none with this id. */
  updateWebhook(
    id: string,
    change: (before: StoredWebhook) => { after: StoredWebhook; events: readonly ChangeEvent[] },
  ): Promise<StoredWebhook | undefined>;
  /** Deletes the endpoint and its deliveries; false when there is none with this id. */
  deleteWebhook(id: string, events: (before: StoredWebhook) => readonly ChangeEvent[]): Promise<boolean>;
  /** Records the event and one delivery of it to this endpoint only. */
  enqueueFor(webhookId: string, event: ChangeEvent): Promise<void>;
  claimDue(token: string, now: string, until: string, limit: number): Promise<DueDelivery[]>;
  recordAttempt(key: { webhookId: string; eventId: string; token: string }, r: AttemptRecord): Promise<void>;
  listDeliveries(webhookId: string, limit: number): Promise<StoredDelivery[]>;
  /**
   * Makes one delivery due again now, with the events of that (in its transaction); undefined: none;
   * 'claimed': an attempt is under way (then nothing changes and no event is written).
   */
  requeueDelivery(
    webhookId: string,
    eventId: string,
    now: string,
    events: (requeued: StoredDelivery) => readonly ChangeEvent[],
  ): Promise<StoredDelivery | 'claimed' | undefined>;
}

export class SqlWebhooks implements WebhookStore {
  constructor(private readonly db: SqlDatabase) {}

  private run<T>(work: () => Promise<T>): Promise<T> {
    return translatingErrors(this.db, work);
  }

  listWebhooks(): Promise<StoredWebhook[]> {
    return this.run(() => selectWebhooks(this.db.readOnly));
  }

  findWebhook(id: string): Promise<StoredWebhook | undefined> {
    return this.run(() => selectWebhook(this.db.readOnly, id));
  }

  insertWebhook(w: StoredWebhook, events: readonly ChangeEvent[]): Promise<void> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        await insertEventRows(trx, events);
        await insertWebhookRow(trx, w);
      }),
    );
  }

  updateWebhook(
    id: string,
    change: (before: StoredWebhook) => { after: StoredWebhook; events: readonly ChangeEvent[] },
  ): Promise<StoredWebhook | undefined> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const before = await selectWebhook(trx, id);
        if (before === undefined) return undefined;
        const { after, events } = change(before);
        await updateWebhookRow(trx, after);
        await insertEventRows(trx, events);
        return after;
      }),
    );
  }

  deleteWebhook(id: string, events: (before: StoredWebhook) => readonly ChangeEvent[]): Promise<boolean> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const before = await selectWebhook(trx, id);
        if (before === undefined) return false;
        await deleteWebhookRow(trx, id);
        await insertEventRows(trx, events(before));
        return true;
      }),
    );
  }

  enqueueFor(webhookId: string, event: ChangeEvent): Promise<void> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        await insertEventRows(trx, [event]);
        await enqueueDeliveries(trx, [event], webhookId);
      }),
    );
  }

  claimDue(token: string, now: string, until: string, limit: number): Promise<DueDelivery[]> {
    return this.run(() => claimDueDeliveries(this.db.readWrite, token, now, until, limit));
  }

  recordAttempt(key: { webhookId: string; eventId: string; token: string }, r: AttemptRecord): Promise<void> {
    return this.run(() => recordAttemptRow(this.db.readWrite, key, r));
  }

  listDeliveries(webhookId: string, limit: number): Promise<StoredDelivery[]> {
    return this.run(() => selectDeliveries(this.db.readOnly, webhookId, limit));
  }

  requeueDelivery(
    webhookId: string,
    eventId: string,
    now: string,
    events: (requeued: StoredDelivery) => readonly ChangeEvent[],
  ): Promise<StoredDelivery | 'claimed' | undefined> {
    return this.run(() =>
      this.db.readWrite.transaction().execute(async (trx) => {
        const d = await requeueDeliveryRow(trx, webhookId, eventId, now);
        if (typeof d === 'object') await insertEventRows(trx, events(d));
        return d;
      }),
    );
  }
}
