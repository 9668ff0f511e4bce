// Experiment management, and the in-memory table that assignment reads (never the database).
import { type CompiledExperiment, compileExperiment } from '../core/assignment.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import {
  applyChanges,
  createExperiment,
  type Experiment,
  type ExperimentChanges,
  type NewExperiment,
  SLUG_PATTERN,
  type Status,
  validateSlug,
} from '../core/experiment.js';
import { isoNow } from '../core/ids.js';
import type { Store, StoredExperiment } from '../store/store.js';

export type ExperimentStore = Pick<
  Store,
  'listExperiments' | 'findExperiment' | 'insertExperiment' | 'updateExperiment' | 'deleteExperiment'
>;

/** An experiment as the hot path sees it: store id, definition, and its compiled assignment table. */
export interface LiveExperiment {
  id: number;
  experiment: Experiment;
  compiled: CompiledExperiment;
}

/**
 * A slug that create would reject names no experiment, so it is 404 without asking the store (which may
 * not even accept it: PostgreSQL text cannot hold a NUL, and would fail the query with a 500).
 */
function assertPossibleSlug(slug: string): void {
  try {
    validateSlug(slug);
  } catch {
    throw new NotFoundError(`no experiment with slug '${slug}'`);
  }
}

function live(stored: StoredExperiment): LiveExperiment {
  return { id: stored.id, experiment: stored.experiment, compiled: compileExperiment(stored.experiment) };
}

export class ExperimentService {
  private readonly bySlug = new Map<string, LiveExperiment>();
  /** Bumped by every change this instance makes, so a reload that raced one can tell. */
  private generation = 0;

  constructor(
    private readonly store: ExperimentStore,
    private readonly now: () => string = isoNow,
  ) {}

  /**
   * (Re)fills the in-memory table from the store: at start, and when another instance changed
   * experiments. The table is swapped only after the read succeeded, so an outage keeps the old one.
   */
  async load(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const generation = this.generation;
      const stored = await this.store.listExperiments();
      // A local change committed while reading may be missing from this snapshot: read again (a few
      // times at most; under a stream of changes the next sync check catches up instead).
      if (generation !== this.generation && attempt < 5) continue;
      this.bySlug.clear();
      for (const s of stored) this.bySlug.set(s.experiment.slug, live(s));
      return;
    }
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
    return stored && (this.bySlug.get(slug) ?? this.remember(stored));
  }

  /** The live entry for `slug`, or undefined. O(1), no I/O: what assign uses. */
  lookup(slug: string): LiveExperiment | undefined {
    return this.bySlug.get(slug);
  }

  async get(slug: string): Promise<Experiment> {
    const found = await this.find(slug);
    if (!found) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return found.experiment;
  }

  list(status?: Status): Experiment[] {
    const all = [...this.bySlug.values()].map((l) => l.experiment);
    return status ? all.filter((e) => e.status === status) : all;
  }

  async create(input: NewExperiment): Promise<Experiment> {
    const experiment = createExperiment(input, this.now());
    if (this.bySlug.has(experiment.slug)) {
      throw new ConflictError(`an experiment with slug '${experiment.slug}' already exists`);
    }
    return this.remember(await this.store.insertExperiment(experiment)).experiment;
  }

  /** Applies the changes inside a store transaction; the next assign sees them. */
  async update(slug: string, changes: ExperimentChanges): Promise<Experiment> {
    assertPossibleSlug(slug);
    const stored = await this.store.updateExperiment(slug, (current) =>
      applyChanges(current, changes, this.now()),
    );
    return this.remember(stored).experiment;
  }

  /** Only a draft with no results may be deleted; anything else is archived instead. */
  async remove(slug: string): Promise<void> {
    assertPossibleSlug(slug);
    await this.store.deleteExperiment(slug, (current, hasResults) => {
      if (current.status !== 'draft') {
        throw new ConflictError(
          `only a draft experiment can be deleted ('${slug}' is ${current.status}); archive it instead`,
        );
      }
      if (hasResults) {
        throw new ConflictError(`experiment '${slug}' has results and cannot be deleted; archive it instead`);
      }
    });
    this.generation++;
    this.bySlug.delete(slug);
  }

  private remember(stored: StoredExperiment): LiveExperiment {
    this.generation++;
    const entry = live(stored);
    this.bySlug.set(stored.experiment.slug, entry);
    return entry;
  }
}
