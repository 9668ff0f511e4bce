// Owns the in-memory experiment table the hot path reads, and the saved groups its conditions name:
// filled from the store, kept current by the management services' writes and by reloads when another
// instance changed experiments or groups.
import { type CompiledExperiment, compileExperiment } from '../core/assignment.js';
import type { SavedGroups } from '../core/condition.js';
import { type DeclaredSums, declaredSums } from '../core/declared.js';
import { type CompiledEntry, compileEntry } from '../core/entry.js';
import { type Experiment, SLUG_PATTERN, type Status } from '../core/experiment.js';
import { servingOf } from '../core/rollout.js';
import type { Store, StoredExperiment, StoredGroup, StoredRollout } from '../store/store.js';

/** listGroups may be absent (stores of unit tests that keep no groups): then there are none. */
export type ExperimentCacheStore = Pick<Store, 'listExperiments' | 'findExperiment'> &
  Partial<Pick<Store, 'listGroups'>>;

/** A saved group without its values (those are in `groups`, as a Set). */
export interface GroupInfo {
  key: string;
  description: string;
  size: number;
  createdAt: string;
  updatedAt: string;
}

function infoOf(g: StoredGroup): GroupInfo {
  return {
    key: g.key,
    description: g.description,
    size: g.values.length,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
  };
}

/** An experiment as the hot path sees it: store id, definition, and its compiled assignment table. */
export interface LiveExperiment {
  id: number;
  experiment: Experiment;
  compiled: CompiledExperiment;
  /** Who enters (ADR 0038), compiled; null when everyone does (assign then does what it always did). */
  entry: CompiledEntry | null;
  /** The pair sums and capped users' bins its metric definitions ask the writes to keep (null: none). */
  declared?: DeclaredSums | null;
  /** Its newest rollout (issue 38), live or ended; undefined when it has none. */
  rollout?: StoredRollout;
}

function live(stored: StoredExperiment): LiveExperiment {
  return {
    id: stored.id,
    experiment: stored.experiment,
    compiled: compileExperiment(stored.experiment),
    entry: compileEntry(
      stored.experiment,
      stored.experiment.variants.map((v) => v.key),
      stored.experiment.variants.map((v) => v.trafficPercent / 100),
      servingOf(stored.rollout?.rollout, stored.experiment.version),
    ),
    rollout: stored.rollout,
    declared: declaredSums(stored.experiment.metrics),
  };
}

export class ExperimentCache {
  private readonly bySlug = new Map<string, LiveExperiment>();
  /** Replaced whole on load; a put or forget changes one entry (a Set is never changed in place). */
  private savedGroups = new Map<string, ReadonlySet<string | number>>();
  private groupInfo = new Map<string, GroupInfo>();
  /** Bumped by every change this instance makes, so a reload that raced one can tell. */
  private generation = 0;
  private changes = 0;

  constructor(private readonly store: ExperimentCacheStore) {}

  /**
   * (Re)fills the table from the store: at start, and when another instance changed experiments. The
   * table is swapped only after the read succeeded, so an outage keeps the old one.
   */
  async load(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const generation = this.generation;
      const [stored, groups] = await Promise.all([
        this.store.listExperiments(),
        this.store.listGroups?.() ?? Promise.resolve([]),
      ]);
      // A local change committed while reading may be missing from this snapshot: read again (a few
      // times at most; under a stream of changes the next sync check catches up instead).
      if (generation !== this.generation && attempt < 5) continue;
      this.bySlug.clear();
      for (const s of stored) this.bySlug.set(s.experiment.slug, live(s));
      this.savedGroups = new Map(groups.map((g) => [g.key, new Set(g.values)]));
      this.groupInfo = new Map(groups.map((g) => [g.key, infoOf(g)]));
      this.changes++;
      return;
    }
  }

  /**
   * Moves on every change to the table (a load, a put, a forget): what is derived from the whole table
   * (the definitions answer) is rebuilt only when it moved.
   */
  get revision(): number {
    return this.changes;
  }

  /** The live entry for `slug`, or undefined. O(1), no I/O: what assign uses. */
  lookup(slug: string): LiveExperiment | undefined {
    return this.bySlug.get(slug);
  }

  /**
   * The live entry, asking the store when this instance has not heard of it yet (an experiment created
   * through another instance a moment ago). For paths that wait on the database anyway (log, reads);
   * assign uses `lookup` and never waits.
   */
  async find(slug: string): Promise<LiveExperiment | undefined> {
    const known = this.bySlug.get(slug);
    if (known || !SLUG_PATTERN.test(slug)) return known;
    const stored = await this.store.findExperiment(slug);
    return stored && (this.bySlug.get(slug) ?? this.put(stored));
  }

  /** Every experiment (optionally of one status), in the order they were created (store id). */
  list(status?: Status): LiveExperiment[] {
    const all = [...this.bySlug.values()];
    return (status ? all.filter((l) => l.experiment.status === status) : all).sort((a, b) => a.id - b.id);
  }

  /** The experiments that serve assignments (running or released), in the order they were created. */
  serving(): LiveExperiment[] {
    return this.list().filter((l) => l.experiment.active);
  }

  /** Takes an experiment the store just committed (compiled once, here); the next assign sees it. */
  put(stored: StoredExperiment): LiveExperiment {
    this.generation++;
    this.changes++;
    const entry = live(stored);
    this.bySlug.set(stored.experiment.slug, entry);
    return entry;
  }

  /** Drops an experiment the store just deleted. */
  forget(slug: string): void {
    this.generation++;
    this.changes++;
    this.bySlug.delete(slug);
  }

  /** The saved groups by key, as conditions' $inGroup reads them: O(1) membership, no I/O. */
  get groups(): SavedGroups {
    return this.savedGroups;
  }

  /** A group's key, description, size and times; undefined when there is none. */
  groupOf(key: string): GroupInfo | undefined {
    return this.groupInfo.get(key);
  }

  /** Every group's info, by key. */
  listGroups(): GroupInfo[] {
    return [...this.groupInfo.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Takes a group the store just committed. */
  putGroup(group: StoredGroup): void {
    this.generation++;
    this.changes++;
    this.savedGroups.set(group.key, new Set(group.values));
    this.groupInfo.set(group.key, infoOf(group));
  }

  /** Drops a group the store just deleted. */
  forgetGroup(key: string): void {
    this.generation++;
    this.changes++;
    this.savedGroups.delete(key);
    this.groupInfo.delete(key);
  }
}
