// Webhook endpoints (issue 27 item 3): create (the signing secret shown once), list, read, change,
// delete, rotate the secret, test, and retry a delivery. Each change is an event in the history, written with it.
import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { Actor, ChangeEvent, EventSource } from '../core/events.js';
import type { JsonObject } from '../core/json.js';
import {
  checkEvents,
  checkWebhookUrl,
  SECRET_PREFIX,
  TEST_EVENT_TYPE,
  type WebhookFormat,
} from '../core/webhooks.js';
import type { StoredDelivery, StoredWebhook, WebhookStore } from '../store/sql-webhooks.js';
import type { EventBus } from './events.js';

/** Deliveries GET /webhooks/:id/deliveries shows, newest first. */
export const DELIVERY_PAGE = 100;

export interface WebhookInput {
  url: string;
  events?: string[];
  description?: string;
  format?: WebhookFormat;
  enabled?: boolean;
}

export type WebhookPatch = Partial<WebhookInput>;

/** How long a rotated-out secret keeps signing beside the new one, unless the rotation says otherwise. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
/** The longest grace period a rotation may ask for (7 days). */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;

export type WebhookView = Omit<StoredWebhook, 'secret' | 'previousSecret'>;

function view({ secret: _secret, previousSecret: _previous, ...w }: StoredWebhook): WebhookView {
  return w;
}

function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/** What the history keeps of an endpoint: never its secret. */
function described(w: StoredWebhook): JsonObject {
  return {
    id: w.id,
    url: w.url,
    events: [...w.events],
    description: w.description,
    format: w.format,
    enabled: w.enabled,
  };
}

export interface WebhookServiceDeps {
  store: WebhookStore;
  newId: () => string;
  now: () => string;
  bus?: EventBus;
  /** WEBHOOK_DENY_PRIVATE: refuse URLs whose literal host is not a global unicast address. */
  denyPrivate: boolean;
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  private source(actor: Actor): EventSource {
    return { actor, at: this.deps.now(), newId: this.deps.newId };
  }

  private event(src: EventSource, type: string, data: JsonObject): ChangeEvent {
    return { id: src.newId(), type, at: src.at, actor: src.actor, experiment: null, data };
  }

  async list(): Promise<{ webhooks: WebhookView[] }> {
    return { webhooks: (await this.deps.store.listWebhooks()).map(view) };
  }

  async get(id: string): Promise<WebhookView> {
    return view(await this.find(id));
  }

  private async find(id: string): Promise<StoredWebhook> {
    const w = await this.deps.store.findWebhook(id);
    if (w === undefined) throw new NotFoundError(`no webhook with id '${id}'`);
    return w;
  }

  async create(input: WebhookInput, actor: Actor): Promise<WebhookView & { secret: string }> {
    const url = checkWebhookUrl(input.url, this.deps.denyPrivate);
    const events = input.events ?? ['*'];
    checkEvents(events);
    const src = this.source(actor);
    const webhook: StoredWebhook = {
      id: this.deps.newId(),
      url,
      events,
      description: input.description ?? null,
      format: input.format ?? 'standard',
      secret: newSecret(),
      previousSecret: null,
      previousSecretUntil: null,
      enabled: input.enabled ?? true,
      createdAt: src.at,
      updatedAt: src.at,
      lastDeliveryAt: null,
      lastStatus: null,
      lastError: null,
    };
    const created = [this.event(src, 'webhook.created', described(webhook))];
    await this.deps.store.insertWebhook(webhook, created);
    this.deps.bus?.publish(created);
    return { ...view(webhook), secret: webhook.secret };
  }

  async update(id: string, patch: WebhookPatch, actor: Actor): Promise<WebhookView> {
    const url = patch.url === undefined ? undefined : checkWebhookUrl(patch.url, this.deps.denyPrivate);
    if (patch.events !== undefined) checkEvents(patch.events);
    const src = this.source(actor);
    let events: ChangeEvent[] = [];
    const after = await this.deps.store.updateWebhook(id, (before) => {
      const next: StoredWebhook = {
        ...before,
        url: url ?? before.url,
        events: patch.events ?? before.events,
        description: patch.description ?? before.description,
        format: patch.format ?? before.format,
        enabled: patch.enabled ?? before.enabled,
        updatedAt: src.at,
      };
      const was = described(before);
      const now = described(next);
      const changed = Object.keys(now).filter((k) => JSON.stringify(was[k]) !== JSON.stringify(now[k]));
      events =
        changed.length === 0
          ? []
          : [
              this.event(src, 'webhook.updated', {
                id,
                before: Object.fromEntries(changed.map((k) => [k, was[k]!])),
                after: Object.fromEntries(changed.map((k) => [k, now[k]!])),
              }),
            ];
      return { after: next, events };
    });
    if (after === undefined) throw new NotFoundError(`no webhook with id '${id}'`);
    this.deps.bus?.publish(events);
    return view(after);
  }

  async remove(id: string, actor: Actor): Promise<void> {
    const src = this.source(actor);
    let events: ChangeEvent[] = [];
    const deleted = await this.deps.store.deleteWebhook(id, (before) => {
      events = [this.event(src, 'webhook.deleted', described(before))];
      return events;
    });
    if (!deleted) throw new NotFoundError(`no webhook with id '${id}'`);
    this.deps.bus?.publish(events);
  }

  /**
   * A new signing secret (answered once). The one it replaces keeps signing beside it for `graceSeconds`
   * (deliveries carry both signatures), so receivers can switch without losing one; a second rotation
   * within that time drops the oldest secret at once.
   */
  async rotateSecret(
    id: string,
    graceSeconds: number,
    actor: Actor,
  ): Promise<WebhookView & { secret: string }> {
    const src = this.source(actor);
    const until = new Date(Date.parse(src.at) + graceSeconds * 1000).toISOString();
    let events: ChangeEvent[] = [];
    const after = await this.deps.store.updateWebhook(id, (before) => {
      const next: StoredWebhook = {
        ...before,
        secret: newSecret(),
        previousSecret: graceSeconds > 0 ? before.secret : null,
        previousSecretUntil: graceSeconds > 0 ? until : null,
        updatedAt: src.at,
      };
      events = [
        this.event(src, 'webhook.secret_rotated', { id, previousSecretUntil: next.previousSecretUntil }),
      ];
      return { after: next, events };
    });
    if (after === undefined) throw new NotFoundError(`no webhook with id '${id}'`);
    this.deps.bus?.publish(events);
    return { ...view(after), secret: after.secret };
  }

  /** Enqueues a `webhook.test` event for this endpoint only; answers its id. */
  async test(id: string, actor: Actor): Promise<{ eventId: string }> {
    const w = await this.find(id);
    if (!w.enabled) throw new ConflictError('this webhook is disabled; PATCH {"enabled": true} first');
    const event = this.event(this.source(actor), TEST_EVENT_TYPE, { id: w.id, url: w.url });
    await this.deps.store.enqueueFor(w.id, event);
    this.deps.bus?.publish([event]);
    return { eventId: event.id };
  }

  async deliveries(id: string): Promise<{ deliveries: StoredDelivery[] }> {
    await this.find(id);
    return { deliveries: await this.deps.store.listDeliveries(id, DELIVERY_PAGE) };
  }

  /**
   * Sends one event to this endpoint again: its delivery (failed, delivered or pending) becomes due now,
   * with the whole retry schedule ahead of it. The same webhook-id, so a receiver still drops a repeat.
   * A `webhook.delivery_retried` event, written with it, records who asked.
   */
  async retry(id: string, eventId: string, actor: Actor): Promise<StoredDelivery> {
    const w = await this.find(id);
    if (!w.enabled) throw new ConflictError('this webhook is disabled; PATCH {"enabled": true} first');
    const src = this.source(actor);
    let events: ChangeEvent[] = [];
    const d = await this.deps.store.requeueDelivery(id, eventId, src.at, (requeued) => {
      events = [
        this.event(src, 'webhook.delivery_retried', { id, url: w.url, eventId, type: requeued.type }),
      ];
      return events;
    });
    if (d === undefined) throw new NotFoundError(`webhook '${id}' has no delivery of event '${eventId}'`);
    if (d === 'claimed') throw new ConflictError('an attempt of this delivery is under way; retry after it');
    this.deps.bus?.publish(events);
    // Made by the next round of some instance's worker (each polls: WebhookDelivery pollMs, 1 s).
    return d;
  }
}
