// Offline runs (issue 40, ADR 0047): opening a run of an experiment's variants over a dataset version,
// checking the results that answer it (log's runId, itemId, trial), and comparing its variants item by item.

import { NotFoundError, ValidationError } from '../core/errors.js';
import type { Actor, ChangeEvent } from '../core/events.js';
import {
  type OfflineAnswer,
  type OfflineRun,
  type OpenRunInput,
  offlineProblem,
  runPlan,
} from '../core/offline-runs.js';
import { compareRun, type RunComparison } from '../core/run-comparison.js';
import type { RunStore } from '../store/sql-runs.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

/** What runs need of datasets: a dataset by name, and the item ids of one of its versions. */
export interface DatasetLookup {
  find(name: string): Promise<{ id: string; name: string; version: number } | undefined>;
  itemIds(datasetId: string, version: number): Promise<Set<string>>;
}

export interface RunDeps {
  store: RunStore;
  experiments: Pick<ExperimentCache, 'find' | 'list'>;
  datasets: DatasetLookup;
  newId: () => string;
  now: () => string;
}

/** Runs whose item ids are held for checking results (a run's results arrive together). */
const HELD_RUNS = 16;

export class RunService {
  /** The item ids of recent runs' dataset versions, by run id (most recently used last). */
  private readonly held = new Map<string, { run: OfflineRun; items: Set<string> }>();

  constructor(private readonly deps: RunDeps) {}

  async open(slug: string, input: OpenRunInput, actor: Actor): Promise<OfflineRun> {
    const live = await this.experiment(slug);
    const plan = runPlan(
      input,
      live.experiment.variants.map((v) => v.key),
    );
    const dataset = await this.deps.datasets.find(input.dataset);
    if (dataset === undefined) throw new NotFoundError(`no dataset named '${input.dataset}'`);
    const version = input.version ?? dataset.version;
    if (!Number.isInteger(version) || version < 1 || version > dataset.version) {
      throw new ValidationError(
        `dataset '${dataset.name}' has versions 1 to ${dataset.version} (got ${version})`,
      );
    }
    const items = await this.deps.datasets.itemIds(dataset.id, version);
    if (items.size === 0)
      throw new ValidationError(`version ${version} of dataset '${dataset.name}' has no items`);
    const run: OfflineRun = {
      id: this.deps.newId(),
      experimentId: live.id,
      datasetId: dataset.id,
      dataset: dataset.name,
      version,
      ...plan,
      items: items.size,
      createdAt: this.deps.now(),
    };
    const event: ChangeEvent = {
      id: this.deps.newId(),
      type: 'run.created',
      at: run.createdAt,
      actor,
      experiment: slug,
      data: {
        run: run.id,
        dataset: run.dataset,
        version,
        variants: run.variants,
        trials: run.trials,
        items: run.items,
      },
    };
    await this.deps.store.insertRun(run, [event]);
    this.hold(run, items);
    return run;
  }

  /** The run, and its experiment's slug (a key's experiments are checked on it). */
  async get(id: string): Promise<{ run: OfflineRun; slug: string }> {
    const run = await this.deps.store.findRun(id);
    const live = run && this.deps.experiments.list().find((l) => l.id === run.experimentId);
    if (run === undefined || live === undefined) throw new NotFoundError(`no run with id '${id}'`);
    return { run, slug: live.experiment.slug };
  }

  /** A page of the experiment's runs, newest first; `cursor`: the previous page's last run id. */
  async list(
    slug: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ runs: OfflineRun[]; nextCursor: string | null }> {
    const live = await this.experiment(slug);
    const runs = await this.deps.store.listRuns(live.id, page.limit + 1, page.cursor);
    const more = runs.length > page.limit;
    const shown = more ? runs.slice(0, page.limit) : runs;
    return { runs: shown, nextCursor: more ? shown[shown.length - 1]!.id : null };
  }

  /** The run's comparison against `control` (default: the run's first variant). */
  async compare(
    run: OfflineRun,
    slug: string,
    o: { control?: string; alpha?: number; metrics?: string[] },
  ): Promise<RunComparison> {
    const control = o.control ?? run.variants[0]!;
    if (!run.variants.includes(control)) {
      throw new ValidationError(
        `control must be one of the run's variants (${run.variants.join(', ')}), not '${control}'`,
      );
    }
    const live = await this.experiment(slug);
    const rows = await this.deps.store.runRows(run);
    return compareRun(rows, {
      control,
      ...(o.alpha === undefined ? {} : { alpha: o.alpha }),
      ...(o.metrics === undefined ? {} : { metrics: o.metrics }),
      definitions: live.experiment.metrics,
    });
  }

  /** The offline answer a result names, checked: a 404 for an unknown run, a 400 for what does not fit it. */
  async answerOf(
    live: LiveExperiment,
    variantKey: string,
    named: { runId: string; itemId?: string; trial?: number },
  ): Promise<OfflineAnswer> {
    if (named.itemId === undefined)
      throw new ValidationError('a result of a run needs itemId: the dataset item it answers');
    const held = await this.heldRun(named.runId);
    if (held === undefined || held.run.experimentId !== live.id) {
      throw new NotFoundError(`experiment '${live.experiment.slug}' has no run with id '${named.runId}'`);
    }
    const answer = { runId: named.runId, itemId: named.itemId, trial: named.trial ?? 1 };
    const problem = offlineProblem(held.run, variantKey, answer, (id) => held.items.has(id));
    if (problem !== null) throw new ValidationError(problem);
    return answer;
  }

  private async heldRun(id: string): Promise<{ run: OfflineRun; items: Set<string> } | undefined> {
    const held = this.held.get(id);
    if (held !== undefined) {
      this.held.delete(id);
      this.held.set(id, held);
      return held;
    }
    const run = await this.deps.store.findRun(id);
    if (run === undefined) return undefined;
    return this.hold(run, await this.deps.datasets.itemIds(run.datasetId, run.version));
  }

  private hold(run: OfflineRun, items: Set<string>) {
    const held = { run, items };
    this.held.set(run.id, held);
    while (this.held.size > HELD_RUNS) this.held.delete(this.held.keys().next().value!);
    return held;
  }

  private async experiment(slug: string): Promise<LiveExperiment> {
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return live;
  }
}
