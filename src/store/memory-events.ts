// The memory store's history (memory-experiments.ts): events in insertion order, read as event-rows.ts reads them.
import { type ChangeEvent, matchesType } from '../core/events.js';
import type { EventQuery, StoredEvent } from './store.js';

export class MemoryEvents {
  private readonly events: StoredEvent[] = [];
  private readonly ids = new Set<string>();

  /** All or nothing, as the SQL store's insert: an id already kept (the unique index) keeps none. */
  add(events: readonly ChangeEvent[] | undefined): void {
    const ids = new Set((events ?? []).map((e) => e.id));
    if (ids.size !== (events ?? []).length || [...ids].some((id) => this.ids.has(id))) {
      throw new Error('an event with this id is already kept');
    }
    for (const e of events ?? []) {
      this.ids.add(e.id);
      this.events.push(structuredClone({ ...e, seq: this.events.length + 1 }));
    }
  }

  list(q: EventQuery): StoredEvent[] {
    const page: StoredEvent[] = [];
    for (const e of this.events) {
      if (page.length === q.limit) break;
      if (q.afterSeq !== undefined && e.seq <= q.afterSeq) continue;
      if (q.experiment !== undefined && e.experiment !== q.experiment) continue;
      if (q.type !== undefined && !matchesType(q.type, e.type)) continue;
      if (q.since !== undefined && e.at < q.since) continue;
      page.push(structuredClone(e));
    }
    return page;
  }
}
