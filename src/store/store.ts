// The storage contract every backend fulfils; services depend on narrow slices of it.
import type { Experiment, Variant } from '../core/experiment.js';
import type { Exposure } from '../core/exposure.js';
import type { JsonObject } from '../core/json.js';
import type { ExposureRollup, MetricRollup } from '../core/rollups.js';
import type { WriteBatch } from '../ingest/write-batch.js';

/** An experiment with the store's internal id, which results and exposures reference. */
export interface StoredExperiment {
  id: number;
  experiment: Experiment;
}

/** A result as read back (the API's shape). */
export interface Result {
  logId: string;
  variantKey: string;
  /** Whether variantKey named a variant of the experiment when the result was logged. */
  knownVariant: boolean;
  userId: string | null;
  assignmentId: string | null;
  input: JsonObject | null;
  output: JsonObject | null;
  metrics: JsonObject | null;
  context: JsonObject | null;
  timestamp: string | null;
  createdAt: string;
  experimentVersion: number;
}

export interface ResultQuery {
  experimentId: number;
  /** Only results committed after this position (exclusive). */
  afterSeq?: number;
  /** Only results at or before this position (export snapshots). */
  uptoSeq?: number;
  variantKey?: string;
  /** createdAt >= since */
  since?: string;
  /** createdAt < until */
  until?: string;
  limit: number;
}

export interface ResultPage {
  results: Result[];
  /** Position of the last result returned, for the next page; null when nothing was returned. */
  lastSeq: number | null;
  hasMore: boolean;
}

/** Store methods throw UnavailableError when the database cannot be reached; it is worth a retry. */
export interface Rollups {
  metrics: MetricRollup[];
  exposures: ExposureRollup[];
}

export interface Store {
  listExperiments(): Promise<StoredExperiment[]>;
  findExperiment(slug: string): Promise<StoredExperiment | undefined>;
  /** Inserts a new experiment; ConflictError when the slug exists. */
  insertExperiment(experiment: Experiment): Promise<StoredExperiment>;
  /**
   * Reads the experiment, applies `change` (which may throw a domain error) and writes the result, all
   * in one transaction. NotFoundError when the slug is unknown.
   */
  updateExperiment(slug: string, change: (current: Experiment) => Experiment): Promise<StoredExperiment>;
  /** Deletes in one transaction after `guard` approved, given whether any result references it. */
  deleteExperiment(slug: string, guard: (current: Experiment, hasResults: boolean) => void): Promise<void>;
  /**
   * Commits results and exposures in one transaction, with the rollups that summarize them; resolves
   * only once committed. NotFoundError (nothing written) when a result's experiment does not exist.
   */
  appendBatch(batch: WriteBatch): Promise<void>;
  listResults(query: ResultQuery): Promise<ResultPage>;
  /** The newest result position of an experiment (0 when none), to bound an export. */
  lastResultSeq(experimentId: number): Promise<number>;
  countExposures(experimentId: number): Promise<number>;
  /** Every exposure of an experiment, in the order they were assigned (rows of every stored form). */
  listExposures(experimentId: number): Promise<Exposure[]>;
  /** The live rollups of one experiment, every version: what analysis reads instead of results. */
  readRollups(experimentId: number): Promise<Rollups>;
  /** Every variant definition the experiment has had, oldest first. */
  listVersions(experimentId: number): Promise<Array<{ version: number; variants: Variant[] }>>;
  /**
   * Recomputes the rollups of one experiment (or all) from the raw results and exposures, replacing
   * the live ones in one transaction. Returns how many results and exposures it read.
   */
  rebuildRollups(experimentId?: number): Promise<{ results: number; exposures: number }>;
  /** Bumped by every change to experiments; instances compare it to notice changes made elsewhere. */
  experimentsRevision(): Promise<number>;
  /**
   * Calls `onChange` whenever another process may have changed experiments; undefined when no other
   * process can change them. Returns a function that stops watching.
   */
  watchExperiments?(onChange: () => void): Promise<() => Promise<void>>;
  /** Throws when the database cannot be reached for reads and writes. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
