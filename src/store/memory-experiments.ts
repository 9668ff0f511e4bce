// The memory store's experiments (memory-store.ts): experiments with their version history and rollouts,
// saved groups, the history, and the revision every change to them bumps, kept as the SQL store keeps them
// (sql-experiments.ts, sql-records.ts). MemoryStore extends it with results, exposures, feedback and rollups.
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { ChangeEvent } from '../core/events.js';
import type { Experiment } from '../core/experiment.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { Rollout } from '../core/rollout.js';
import { MemoryEvents } from './memory-events.js';
import { MemoryGroups } from './memory-groups.js';
import { MemoryRollouts } from './memory-rollouts.js';
import type {
  EventQuery,
  EventStore,
  ExperimentChange,
  RolloutStore,
  StoredEvent,
  StoredExperiment,
  StoredGroup,
  StoredRollout,
  StoredVersion,
} from './store.js';

/** Values are copied in and out; every call completes in one step, so a change is atomic as a transaction is. */
export class MemoryExperiments implements RolloutStore, EventStore {
  protected readonly experiments = new Map<number, Experiment>();
  private readonly idsBySlug = new Map<string, number>();
  private readonly versions = new Map<number, StoredVersion[]>();
  protected readonly events = new MemoryEvents();
  private readonly rollouts = new MemoryRollouts();
  private readonly groups = new MemoryGroups();
  private lastExperimentId = 0;
  private revision = 0;

  async listExperiments(): Promise<StoredExperiment[]> {
    return [...this.experiments.keys()].sort((a, b) => a - b).map((id) => this.stored(id));
  }

  async findExperiment(slug: string): Promise<StoredExperiment | undefined> {
    const id = this.idsBySlug.get(slug);
    return id === undefined ? undefined : this.stored(id);
  }

  async insertExperiment(
    experiment: Experiment,
    _record?: IdempotencyRecord,
    events?: readonly ChangeEvent[],
  ): Promise<StoredExperiment> {
    if (this.idsBySlug.has(experiment.slug)) {
      throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
    }
    this.events.add(events);
    const id = ++this.lastExperimentId;
    this.save(id, experiment);
    this.versions.set(id, []);
    this.recordVersion(id, experiment);
    return { id, experiment };
  }

  async updateExperiment(
    slug: string,
    change: (current: Experiment) => Experiment,
    events?: (before: Experiment, after: Experiment) => readonly ChangeEvent[],
  ): Promise<StoredExperiment> {
    const current = this.current(slug);
    const next = change(current.experiment);
    this.events.add(events?.(current.experiment, next));
    this.save(current.id, next);
    if (next.version !== current.experiment.version) this.recordVersion(current.id, next);
    return { ...current, experiment: next };
  }

  async insertRollout(
    slug: string,
    build: (current: StoredExperiment) => { rollout: StoredRollout; events: readonly ChangeEvent[] },
  ): Promise<StoredExperiment> {
    const current = this.current(slug);
    const { rollout, events } = build(current);
    this.rollouts.check(rollout);
    this.events.add(events);
    this.rollouts.insert(rollout);
    this.revision++;
    return { ...current, rollout: structuredClone(rollout) };
  }

  async moveRollout(
    slug: string,
    id: string,
    from: number,
    next: Rollout,
    events: readonly ChangeEvent[],
    change?: ExperimentChange,
  ): Promise<StoredExperiment | undefined> {
    const current = this.current(slug);
    if (!this.rollouts.at(id, from)) return undefined;
    const changed = change?.(current.experiment);
    this.events.add([...events, ...(changed?.events ?? [])]);
    if (changed !== undefined) this.save(current.id, changed.next);
    const rollout = this.rollouts.move(id, from, next);
    this.revision++;
    return { id: current.id, experiment: changed?.next ?? current.experiment, rollout };
  }

  async listGroups(): Promise<StoredGroup[]> {
    return this.groups.list();
  }

  async putGroup(
    group: StoredGroup,
    events: (before: StoredGroup | undefined, after: StoredGroup) => readonly ChangeEvent[],
  ): Promise<StoredGroup> {
    const after = this.groups.next(group);
    this.events.add(events(this.groups.get(group.key), structuredClone(after)));
    this.groups.set(after);
    this.revision++;
    return after;
  }

  async deleteGroup(key: string, events: (deleted: StoredGroup) => readonly ChangeEvent[]): Promise<boolean> {
    const before = this.groups.get(key);
    if (before === undefined) return false;
    this.events.add(events(before));
    this.groups.delete(key);
    this.revision++;
    return true;
  }

  async listEvents(q: EventQuery): Promise<StoredEvent[]> {
    return this.events.list(q);
  }

  async recordEvents(events: readonly ChangeEvent[]): Promise<void> {
    this.events.add(events);
  }

  async listVersions(experimentId: number): Promise<StoredVersion[]> {
    return structuredClone(this.versions.get(experimentId) ?? []);
  }

  async experimentsRevision(): Promise<number> {
    return this.revision;
  }

  private stored(id: number): StoredExperiment {
    const rollout = this.rollouts.newest(id);
    const experiment = structuredClone(this.experiments.get(id)!);
    return rollout === undefined ? { id, experiment } : { id, experiment, rollout };
  }

  protected current(slug: string): StoredExperiment {
    const id = this.idsBySlug.get(slug);
    if (id === undefined) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return this.stored(id);
  }

  /** Keeps a copy of `experiment` under `id`; every change bumps the revision. */
  private save(id: number, experiment: Experiment): void {
    const previous = this.experiments.get(id);
    if (previous && previous.slug !== experiment.slug) {
      if (this.idsBySlug.has(experiment.slug)) {
        throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
      }
      this.idsBySlug.delete(previous.slug);
    }
    this.experiments.set(id, structuredClone(experiment));
    this.idsBySlug.set(experiment.slug, id);
    this.revision++;
  }

  /** As the SQL store: a version starts when the experiment was last updated. */
  private recordVersion(id: number, e: Experiment): void {
    this.versions.get(id)!.push({
      version: e.version,
      variants: structuredClone(e.variants),
      createdAt: e.updatedAt,
    });
  }

  /** Forgets the experiment, its versions and rollouts (deleteExperiment, once its writes are forgotten). */
  protected forgetExperiment(id: number, slug: string): void {
    this.rollouts.forget(id);
    this.versions.delete(id);
    this.experiments.delete(id);
    this.idsBySlug.delete(slug);
    this.revision++;
  }
}
