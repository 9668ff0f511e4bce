// The memory store's saved groups (memory-experiments.ts), kept as the SQL store keeps them (group-rows.ts):
// copied in and out, createdAt kept on replace, listed by key.
import type { StoredGroup } from './store.js';

export class MemoryGroups {
  private readonly groups = new Map<string, StoredGroup>();

  list(): StoredGroup[] {
    return [...this.groups.values()]
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((g) => structuredClone(g));
  }

  get(key: string): StoredGroup | undefined {
    const g = this.groups.get(key);
    return g && structuredClone(g);
  }

  /** What put would store for `group`: its createdAt the replaced group's, when there is one. */
  next(group: StoredGroup): StoredGroup {
    return { ...structuredClone(group), createdAt: this.groups.get(group.key)?.createdAt ?? group.createdAt };
  }

  /** Values go through JSON as the SQL store's column does (-0 comes back 0). */
  set(group: StoredGroup): void {
    this.groups.set(group.key, JSON.parse(JSON.stringify(group)) as StoredGroup);
  }

  delete(key: string): void {
    this.groups.delete(key);
  }
}
