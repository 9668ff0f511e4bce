// The memory store's history (memory-store.ts): events in insertion order, read as event-rows.ts reads them.
import { type ChangeEvent, matchesType } from '../core/events.js';
import type { EventQuery, StoredEvent } from './store.js';

export class MemoryEvents {
  private readonly events: StoredEvent[] = [];

  add(events: readonly ChangeEvent[] | undefined): void {
    for (const e of events ?? []) {
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
