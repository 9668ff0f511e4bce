// The management and reading calls of the client (experiments, analysis, saved groups, layers, preview,
// datasets and offline runs, runDataset):
// a base class of AgentSplit so the client's file keeps to the hot path. Unlike the rest of the client
// these reject, with an AgentSplitError (status, the server's error).
import {
  addItems,
  createDataset,
  getDataset,
  getRun,
  listDatasets,
  listRuns,
  openRun,
  runComparison,
} from './datasets.js';
import {
  analysisQuery,
  deleteGroup,
  experimentPath,
  getGroup,
  getLayer,
  listGroups,
  type ManageTarget,
  manage,
  preview,
  saveGroup,
  verdictFirst,
} from './manage.js';
import type {
  Analysis,
  AnalysisParams,
  CreateExperimentFields,
  Experiment,
  LayerInfo,
  Preview,
  SavedGroup,
  SavedGroupSummary,
  SaveGroupFields,
  UpdateExperimentFields,
} from './manage-types.js';
import { type RunFunction, runDataset } from './run-dataset.js';
import type {
  Dataset,
  DatasetChange,
  DatasetItemFields,
  DatasetRun,
  OfflineRun,
  OpenRunOptions,
  RunComparison,
  RunComparisonParams,
  RunDatasetOptions,
} from './run-types.js';
import type { JsonObject } from './types.js';

export abstract class ManagementCalls {
  /** Where and how a management call goes (URL, key, timeout, whether the client can or may call). */
  protected abstract target(): ManageTarget;

  /** POST /experiments (a key with the admin scope, or the root key): the experiment as created. */
  createExperiment(fields: CreateExperimentFields): Promise<Experiment> {
    return this.manage('POST', '/experiments', 201, fields);
  }

  /** GET /experiment/:slug (a read or admin key). */
  getExperiment(slug: string): Promise<Experiment> {
    return this.manage('GET', experimentPath(slug), 200);
  }

  /**
   * PATCH /experiment/:slug (admin): status, variants, metrics, name, description, and who enters
   * (targeting, coverage, layer, overrides, defaultVariant); the experiment after.
   */
  updateExperiment(slug: string, fields: UpdateExperimentFields): Promise<Experiment> {
    return this.manage('PATCH', experimentPath(slug), 200, fields);
  }

  /** GET /experiment/:slug/analysis (a read or admin key): the verdict first, then every metric. */
  async analysis(slug: string, params?: AnalysisParams): Promise<Analysis> {
    const path = experimentPath(slug, `/analysis${analysisQuery(params)}`);
    return verdictFirst(await this.manage<Analysis>('GET', path, 200));
  }

  /** PUT /groups/:key (admin): saves a group of ids for `$inGroup` conditions. */
  saveGroup(key: string, fields: SaveGroupFields): Promise<SavedGroup> {
    return saveGroup(this.target(), key, fields);
  }

  /** GET /groups (read): every saved group, without its values (`size`, `usedBy`). */
  listGroups(): Promise<SavedGroupSummary[]> {
    return listGroups(this.target());
  }

  /** GET /groups/:key (read). */
  getGroup(key: string): Promise<SavedGroup> {
    return getGroup(this.target(), key);
  }

  /** DELETE /groups/:key (admin): refused (409) while a non-archived experiment uses the group. */
  deleteGroup(key: string): Promise<void> {
    return deleteGroup(this.target(), key);
  }

  /** GET /layers/:key (read): the experiments using a layer and the ranges still free. */
  getLayer(key: string): Promise<LayerInfo> {
    return getLayer(this.target(), key);
  }

  /**
   * POST /experiment/:slug/preview: the variant `userId` would get with `context`, whether it would enter
   * and why not (`explanation`), for an experiment in any status; records nothing.
   */
  preview(slug: string, userId: string, context?: JsonObject | null): Promise<Preview> {
    return preview(this.target(), slug, userId, context);
  }

  /** POST /datasets (admin, a key for every experiment): version 1 with up to 10,000 items. */
  createDataset(
    name: string,
    items: DatasetItemFields[],
    options?: { description?: string },
  ): Promise<Dataset> {
    return createDataset(this.target(), name, items, options?.description);
  }

  /**
   * POST /datasets/:name/items (admin): a new id adds an item, a known id with other content changes it;
   * one new version when anything changed (items sent as they are change nothing: a retry is safe).
   */
  addItems(name: string, items: DatasetItemFields[]): Promise<DatasetChange> {
    return addItems(this.target(), name, items);
  }

  /** GET /datasets (read), every page: the datasets, oldest first, without their items. */
  listDatasets(): Promise<Dataset[]> {
    return listDatasets(this.target());
  }

  /** GET /datasets/:name (read): its current version and item count. */
  getDataset(name: string): Promise<Dataset> {
    return getDataset(this.target(), name);
  }

  /** POST /experiment/:slug/runs (log): an offline run of the variants over a dataset version. */
  openRun(experiment: string, dataset: string, options?: OpenRunOptions): Promise<OfflineRun> {
    return openRun(this.target(), experiment, dataset, options);
  }

  /** GET /runs/:id (read). */
  getRun(id: string): Promise<OfflineRun> {
    return getRun(this.target(), id);
  }

  /** GET /experiment/:slug/runs (read): the experiment's runs, newest first. */
  listRuns(experiment: string): Promise<OfflineRun[]> {
    return listRuns(this.target(), experiment);
  }

  /** GET /runs/:id/comparison (read): each variant against the control, item by item, per metric. */
  runComparison(id: string, params?: RunComparisonParams): Promise<RunComparison> {
    return runComparison(this.target(), id, params);
  }

  /**
   * Runs every variant of `experiment` over `dataset`: opens a run, calls `fn(payload, item)` for each
   * (variant, item, trial), at most `concurrency` (8) at a time, retries a throw (`retries`, 2), logs
   * each outcome once (an Idempotency-Key per pair) and answers the run, the server's comparison, the
   * failures and how many were logged. Rejects (AgentSplitError) only when a setup call fails: opening
   * the run, reading the experiment or the items, the final comparison.
   */
  runDataset<P = JsonObject>(
    experiment: string,
    dataset: string,
    fn: RunFunction<P>,
    options?: RunDatasetOptions,
  ): Promise<DatasetRun> {
    return runDataset(() => this.target(), experiment, dataset, fn, options);
  }

  private manage<T>(method: string, path: string, expected: number, body?: unknown): Promise<T> {
    return manage<T>(this.target(), method, path, expected, body);
  }
}
