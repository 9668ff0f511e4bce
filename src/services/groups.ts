// Saved groups (ADR 0038): put (create or replace), get, list, delete. Every change is an event in the
// history, written with it; the experiment cache holds the groups' Sets the evaluator reads.
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { Actor, ChangeEvent, EventSource } from '../core/events.js';
import {
  type GroupValue,
  groupDeleted,
  groupSaved,
  validateGroupDescription,
  validateGroupKey,
  validateGroupValues,
} from '../core/groups.js';
import type { Store, StoredGroup } from '../store/store.js';
import type { EventBus } from './events.js';
import type { ExperimentCache, GroupInfo } from './experiment-cache.js';

export interface GroupInput {
  values: unknown;
  description?: string;
}

export type GroupSummary = GroupInfo & { usedBy: string[] };
export type GroupView = GroupSummary & { values: GroupValue[] };

export interface GroupServiceDeps {
  store: Pick<Store, 'putGroup' | 'deleteGroup'>;
  cache: Pick<ExperimentCache, 'groups' | 'groupOf' | 'listGroups' | 'putGroup' | 'forgetGroup'>;
  /** The non-archived experiments whose conditions name the group (group-usage.ts). */
  usedBy: (key: string) => string[];
  newId: () => string;
  now: () => string;
  bus?: EventBus;
}

export class GroupService {
  constructor(private readonly deps: GroupServiceDeps) {}

  private source(actor: Actor): EventSource {
    return { actor, at: this.deps.now(), newId: this.deps.newId };
  }

  list(): { groups: GroupSummary[] } {
    return { groups: this.deps.cache.listGroups().map((g) => ({ ...g, usedBy: this.deps.usedBy(g.key) })) };
  }

  get(key: string): GroupView {
    const info = this.deps.cache.groupOf(key);
    const values = this.deps.cache.groups.get(key);
    if (info === undefined || values === undefined)
      throw new NotFoundError(`no saved group with key '${key}'`);
    return { ...info, usedBy: this.deps.usedBy(key), values: [...values] };
  }

  async put(key: string, input: GroupInput, actor: Actor): Promise<GroupView> {
    validateGroupKey(key);
    const values = validateGroupValues(input.values);
    const description = validateGroupDescription(input.description);
    const src = this.source(actor);
    let events: readonly ChangeEvent[] = [];
    const group: StoredGroup = { key, description, values, createdAt: src.at, updatedAt: src.at };
    const stored = await this.deps.store.putGroup(group, (before, after) => {
      events = groupSaved(src, key, before?.values, after.values);
      return events;
    });
    this.deps.cache.putGroup(stored);
    this.deps.bus?.publish(events);
    return this.get(key);
  }

  async remove(key: string, actor: Actor): Promise<void> {
    const users = this.deps.usedBy(key);
    if (users.length > 0) {
      throw new ConflictError(
        `saved group '${key}' is used by ${users.length === 1 ? 'experiment' : 'experiments'} ${users
          .map((s) => `'${s}'`)
          .join(', ')}; remove it from their conditions (or archive them) first`,
      );
    }
    const src = this.source(actor);
    let events: readonly ChangeEvent[] = [];
    const deleted = await this.deps.store.deleteGroup(key, (before) => {
      events = groupDeleted(src, key, before.values.length);
      return events;
    });
    this.deps.cache.forgetGroup(key);
    if (!deleted) throw new NotFoundError(`no saved group with key '${key}'`);
    this.deps.bus?.publish(events);
  }
}
