// The memory store's rollouts (store contract: the same answers as rollout-rows.ts): one live at a time per
// experiment, a move written only over the version it was planned from.
import { isLive, liveRolloutConflict, type Rollout } from '../core/rollout.js';
import type { StoredRollout } from './store.js';

export class MemoryRollouts {
  private readonly byId = new Map<string, StoredRollout>();

  /** The newest rollout of the experiment, a copy; undefined when it has none. */
  newest(experimentId: number): StoredRollout | undefined {
    let found: StoredRollout | undefined;
    for (const r of this.byId.values()) if (r.experimentId === experimentId) found = r;
    return found && structuredClone(found);
  }

  /** Checks that `r` may be inserted (ConflictError when its experiment has a live rollout). */
  check(r: StoredRollout): void {
    for (const other of this.byId.values()) {
      if (other.experimentId === r.experimentId && isLive(other.rollout)) {
        throw liveRolloutConflict();
      }
    }
  }

  insert(r: StoredRollout): void {
    this.check(r);
    this.byId.set(r.id, structuredClone(r));
  }

  /** Whether `id` is at version `from` (the move may be written). */
  at(id: string, from: number): boolean {
    return this.byId.get(id)?.version === from;
  }

  /** Writes `next` as version `from + 1` (after `at` said yes); answers the stored rollout. */
  move(id: string, from: number, next: Rollout): StoredRollout {
    const current = this.byId.get(id)!;
    const moved = { ...current, version: from + 1, rollout: structuredClone(next) };
    this.byId.set(id, moved);
    return structuredClone(moved);
  }

  forget(experimentId: number): void {
    for (const [id, r] of this.byId) if (r.experimentId === experimentId) this.byId.delete(id);
  }
}
