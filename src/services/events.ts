// The history (issue 27): reading it (GET /experiment/:slug/events, GET /events), and telling this
// process's listeners of events once their change committed (what webhooks and the monitor build on).

import { decodeCursor, encodeCursor } from '../core/cursor.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import { type ChangeEvent, parseTypeFilter } from '../core/events.js';
import { normalizeTime } from '../core/time.js';
import type { EventStore, StoredEvent } from '../store/store.js';

/** Events per page by default (as GET /experiments). */
export const DEFAULT_EVENT_PAGE = 50;
const CURSOR_KIND = 'h';

/** Called with the events of one committed change, oldest first. */
export type EventListener = (events: readonly ChangeEvent[]) => void;

/**
 * In-process publish/subscribe of committed events. The services publish the events of a change after
 * its transaction committed (never before, never for a change that failed); each listener is called in
 * turn, synchronously, and one that throws does not stop the others (`onError` hears of it). Only this
 * process's changes are published: a consumer that must see every instance's events (webhook
 * deliveries) reads the store's history from its own position (EventStore.listEvents, afterSeq).
 */
export class EventBus {
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly onError: (err: unknown) => void = () => {}) {}

  /** Subscribes; returns the function that unsubscribes. */
  onCommitted(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Tells every listener of committed events (nothing when there are none). */
  publish(events: readonly ChangeEvent[]): void {
    if (events.length === 0) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(events);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}

export interface EventListQuery {
  limit?: number;
  cursor?: string;
  /** An exact type, or a prefix ending in `.*` (`experiment.*`). */
  type?: string;
  /** ISO 8601: events at or after it. */
  since?: string;
}

export interface EventPage {
  events: ChangeEvent[];
  nextCursor: string | null;
}

export class EventService {
  constructor(
    private readonly store: Pick<EventStore, 'listEvents'>,
    /** Whether an experiment exists now (GET /experiment/:slug/events of an unknown slug is 404). */
    private readonly exists: (slug: string) => boolean,
  ) {}

  /** The experiment's history, oldest first. */
  forExperiment(slug: string, q: EventListQuery = {}): Promise<EventPage> {
    if (!this.exists(slug)) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return this.page({ ...q, experiment: slug });
  }

  /** The audit log: every event, of experiments deleted since too, oldest first. */
  all(q: EventListQuery = {}): Promise<EventPage> {
    return this.page(q);
  }

  private async page(q: EventListQuery & { experiment?: string }): Promise<EventPage> {
    const limit = q.limit ?? DEFAULT_EVENT_PAGE;
    const type = q.type === undefined ? undefined : parseTypeFilter(q.type);
    if (q.type !== undefined && type === undefined) {
      throw new ValidationError(
        `type must be an event type (experiment.updated) or a prefix ending in .* (experiment.*); got '${q.type}'`,
      );
    }
    // One row more than the page tells whether another page follows.
    const rows = await this.store.listEvents({
      experiment: q.experiment,
      type,
      since: q.since === undefined ? undefined : normalizeTime(q.since, 'since'),
      afterSeq: q.cursor === undefined ? undefined : decodeCursor(CURSOR_KIND, q.cursor),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map(shown),
      nextCursor: rows.length > limit && last !== undefined ? encodeCursor(CURSOR_KIND, last.seq) : null,
    };
  }
}

function shown({ seq: _seq, ...event }: StoredEvent): ChangeEvent {
  return event;
}
