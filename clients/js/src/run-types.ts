// The answers and inputs of datasets and offline runs (issue 40): the server's own shapes (its OpenAPI
// document at /openapi.json), and what runDataset takes and answers (docs: clients/js/README.md).
import type { JsonObject, JsonValue } from './types.js';

/** An item as sent to POST /datasets or POST /datasets/:name/items. */
export interface DatasetItemFields {
  /** Unique in the dataset, 1-256 characters; absent: the server makes a UUID. */
  id?: string;
  /** Any JSON value (typically an object): what the agent is given. */
  input: JsonValue;
  /** What it should answer (null: none). */
  expected?: JsonValue;
  metadata?: JsonObject | null;
}

/** An item as a version holds it (GET /datasets/:name/items). */
export interface DatasetItem {
  id: string;
  input: JsonValue;
  /** null when none. */
  expected: JsonValue;
  /** null when none. */
  metadata: JsonObject | null;
  /** The version that added it or last changed it. */
  since: number;
}

/** A dataset without its items. */
export interface Dataset {
  id: string;
  name: string;
  description: string;
  /** The current version: 1 when created, one more per change of items. */
  version: number;
  /** Items in the current version. */
  items: number;
  createdAt: string;
  updatedAt: string;
}

/** The dataset after POST /datasets/:name/items: a new version when anything changed. */
export interface DatasetChange extends Dataset {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
}

/** An offline run: variants of an experiment over one dataset version. */
export interface OfflineRun {
  id: string;
  /** The experiment's slug. */
  experiment: string;
  dataset: string;
  /** The dataset version whose items the run answers. */
  version: number;
  variants: string[];
  trials: number;
  /** Items in that dataset version. */
  items: number;
  createdAt: string;
}

/** POST /experiment/:slug/runs's options. */
export interface OpenRunOptions {
  /** The dataset version (default: its newest). */
  version?: number;
  /** The variants to run, 2-50 (default: every variant); the first is the comparison's default control. */
  variants?: string[];
  /** Runs of each variant on each item (default 1). */
  trials?: number;
}

/** GET /runs/:id/comparison's query. */
export interface RunComparisonParams {
  /** Default: the run's first variant. */
  control?: string;
  /** Default 0.05. */
  alpha?: number;
  /** Metric names (an array or comma-separated; default: all). */
  metrics?: string[] | string;
}

/** One treatment against the control on one metric, over the items both answered. */
export interface RunVariantComparison {
  variant: string;
  /** Items with values in both variants. */
  items: number;
  /** Items with values in only one of them (left out). */
  unpaired: number;
  control: { mean: number };
  treatment: { mean: number };
  difference: { estimate: number; ci: [number, number] | null; se: number | null; pValue: number | null };
  adjustedPValue: number | null;
  significant: boolean;
  /** true: significantly better in the metric's direction; false: worse; null: not significant or no direction. */
  better: boolean | null;
  wilcoxon: {
    statistic: number;
    pValue: number;
    method: 'exact' | 'permutation' | 'normal';
    n: number;
  } | null;
  bootstrap: { ci: [number, number]; resamples: number } | null;
  mcnemar: { b: number; c: number; pValue: number } | null;
  wins: number;
  ties: number;
  losses: number;
  variance: { generation: number; items: number } | null;
  itemsNeeded: number | null;
}

/** GET /runs/:id/comparison: every variant against the control, per metric. */
export interface RunComparison {
  run: OfflineRun;
  control: string;
  alpha: number;
  items: number;
  variants: Array<{ key: string; results: number; items: number }>;
  metrics: Array<{
    name: string;
    kind: 'mean' | 'proportion';
    direction: 'increase' | 'decrease' | null;
    comparisons: RunVariantComparison[];
  }>;
  verdict: { summary: string; sentences: string[] };
  /** The items whose score changed most, with both outputs. */
  changed: Array<{
    itemId: string;
    metric: string;
    variant: string;
    difference: number;
    control: { mean: number; output: unknown };
    treatment: { mean: number; output: unknown };
  }>;
}

/** What runDataset's function returns in full: what is logged for the pair. */
export interface RunResult {
  metrics?: Record<string, number | boolean>;
  /** A JSON object (anything else is logged as `{value: …}`). */
  output?: JsonValue;
  /** Default: the item's input (a non-object as `{value: …}`). */
  input?: JsonValue;
}

/**
 * What runDataset's function returns: a RunResult, or (an object with neither `metrics` nor `output`)
 * the metrics themselves, e.g. `{ correct: true }`.
 */
export type RunOutcome = RunResult | Record<string, number | boolean>;

/** A (variant, item, trial) whose function threw on every attempt, or whose log was refused: not logged. */
export interface RunFailure {
  variant: string;
  itemId: string;
  trial: number;
  /** The last error's message. */
  error: string;
  /** Calls of the function made for the pair. */
  attempts: number;
}

export interface RunProgress {
  /** Pairs finished: logged or failed. */
  done: number;
  /** variants × items × trials. */
  total: number;
  failed: number;
}

export interface RunDatasetOptions extends OpenRunOptions, RunComparisonParams {
  /** Calls of the function at once (default 8). */
  concurrency?: number;
  /** More attempts after a throw (default 2: three in all). */
  retries?: number;
  /** The wait before attempt n+1 is backoffMs × n (default 200; 0 in tests). Also a failed log's. */
  backoffMs?: number;
  /** Retries of a log request after a network error, 5xx, 429 or 409 (default 5). */
  logRetries?: number;
  /**
   * Default true: lines on stderr at each ~10% and at the end (an updating line on a TTY); false: none;
   * a function: called with {done, total, failed} after every pair.
   */
  progress?: boolean | ((progress: RunProgress) => void);
}

/** runDataset's answer, once every pair is done and logged. */
export interface DatasetRun {
  run: OfflineRun;
  /** GET /runs/:id/comparison with `control` (default: the run's first variant). */
  comparison: RunComparison;
  failures: RunFailure[];
  /** Pairs logged (each stored once). */
  logged: number;
}
