// Analyses and time series run off the event loop (issue 34, ADR 0036): a bounded pool of worker threads
// (piscina) with a bounded queue, a time budget per request, and answers cached per experiment until its
// rollups change. Assign, log and /healthz never wait for them.
import { LRUCache } from 'lru-cache';
import { Piscina } from 'piscina';
import { AppError, NotFoundError, UnavailableError } from '../core/errors.js';
import type { SimulationOutcome, SimulationPlan } from '../core/rollout-simulation.js';
import type { WriteBatch } from '../core/writes.js';
import type { Analysis } from '../stats/index.js';
import type { DatabaseTarget } from '../store/index.js';
import type { AnalysedExperiment, AnalysisQuery } from './analysis.js';
import { type AnalysisTask, type ReadStore, type TaskOutcome, taskRunner } from './analysis-tasks.js';
import type { ExperimentCache } from './experiment-cache.js';
import type { TimeseriesQuery } from './timeseries.js';

export interface AnalysisPoolOptions {
  /** Worker threads at most (ANALYSIS_THREADS). */
  threads: number;
  /** Requests waiting for a worker at most (ANALYSIS_QUEUE); past it, 503 with Retry-After. */
  queue: number;
  /** How long one request may take, waiting and working (ANALYSIS_BUDGET_SECONDS, in ms); past it, 503. */
  budgetMs: number;
  /** Memory for cached answers (ANALYSIS_CACHE_MB, in bytes); 0: no cache. */
  cacheBytes: number;
  /**
   * Where other instances write too (PostgreSQL), the longest a cached answer is reused (ms): their writes
   * do not reach this instance's change counts. Absent: until this instance sees a change.
   */
  maxAgeMs?: number;
  /** Niceness levels below the event loop the workers run at (ADR 0008). */
  nice: number;
}

export interface AnalysisPoolDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  /** What the workers open: the same database, read-only. */
  database: DatabaseTarget;
  /** Used in this thread instead when the database cannot be shared with a worker (in-memory SQLite). */
  store: ReadStore;
  /** A task that failed or ran out of budget: for the metrics. */
  onOutcome?: (outcome: 'done' | 'cached' | 'busy' | 'budget' | 'failed') => void;
}

interface Runner {
  run(task: AnalysisTask, signal: AbortSignal): Promise<TaskOutcome>;
  close(): Promise<void>;
}

/** A worker pool; or, for an in-memory database no other thread can open, this thread (tests). */
function runnerFor(deps: AnalysisPoolDeps, options: AnalysisPoolOptions): Runner {
  const { database } = deps;
  if (database.kind === 'sqlite' && database.path === ':memory:') {
    const local = taskRunner(deps.store);
    return { run: (task) => local.run(task), close: async () => {} };
  }
  // Under tsx (tests, `npm run dev`) the workers inherit `--import tsx` and load the .ts entry; a build, the .js.
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const pool = new Piscina({
    filename: new URL(`./analysis-worker.${ext}`, import.meta.url).href,
    minThreads: 0,
    maxThreads: options.threads,
    // The queue's bound is AnalysisPool.execute's count of running and waiting tasks (one for both runners).
    // An idle worker gives its memory back after a minute; the monitor's rounds keep one warm while it runs.
    idleTimeout: 60_000,
    workerData: { database, nice: options.nice },
  });
  return {
    run: (task, signal) => pool.run(task, { signal }),
    close: () => pool.destroy(),
  };
}

/** The tasks answered as JSON text and cached: an analysis or a time series of one experiment. */
type ReadTask = Exclude<AnalysisTask, { kind: 'simulate' } | { kind: 'exposures' }>;

const TASK_WORDS: Record<AnalysisTask['kind'], string> = {
  analysis: 'analysis',
  timeseries: 'time series',
  simulate: 'dry run',
  exposures: 'count of exposures',
};

interface Cached {
  stamp: string;
  json: string;
}

export class AnalysisPool {
  private readonly runner: Runner;
  private readonly cache: LRUCache<string, Cached> | undefined;
  /** The same request at the same stamp, already running: later callers share its answer. */
  private readonly running = new Map<string, Promise<string>>();
  /** Per experiment id: how many of this instance's commits touched its rollups. */
  private readonly changes = new Map<number, number>();
  private waiting = 0;

  constructor(
    private readonly deps: AnalysisPoolDeps,
    private readonly options: AnalysisPoolOptions,
  ) {
    this.runner = runnerFor(deps, options);
    this.cache =
      options.cacheBytes > 0
        ? new LRUCache<string, Cached>({
            maxSize: options.cacheBytes,
            sizeCalculation: (c) => Math.max(1, c.json.length),
            ...(options.maxAgeMs ? { ttl: options.maxAgeMs } : {}),
          })
        : undefined;
  }

  /** The analysis as JSON text (the route's schema), from the cache or a worker. */
  async analysisJson(slug: string, query: AnalysisQuery): Promise<string> {
    const experiment = await this.find(slug);
    return this.answer({ kind: 'analysis', experiment, query, as: 'json' });
  }

  /** The time series as JSON text. */
  async timeseriesJson(slug: string, query: TimeseriesQuery): Promise<string> {
    const experiment = await this.find(slug);
    return this.answer({ kind: 'timeseries', experiment, query, as: 'json' });
  }

  /** The analysis as an object (the guardrail monitor), from a worker. */
  async analyze(slug: string, query: AnalysisQuery): Promise<Analysis> {
    const experiment = await this.find(slug);
    const outcome = await this.execute({ kind: 'analysis', experiment, query, as: 'value' });
    return (outcome as { value: Analysis }).value;
  }

  /** A rollout's dry run (core/rollout-simulation.ts), in a worker: it can take seconds. */
  async simulate(plan: SimulationPlan): Promise<SimulationOutcome> {
    const outcome = await this.execute({ kind: 'simulate', plan });
    return (outcome as { simulation: SimulationOutcome }).simulation;
  }

  /** Exposures (assign calls) per variant of one version: a rollout's traffic checks. */
  async exposures(slug: string, version: number): Promise<Record<string, number>> {
    const experiment = await this.find(slug);
    const outcome = await this.execute({ kind: 'exposures', experiment, version });
    return (outcome as { exposures: Record<string, number> }).exposures;
  }

  /** After a batch committed: the experiments it touched have new rollups. */
  committed(batch: WriteBatch): void {
    let last = -1;
    const touch = (id: number) => {
      if (id === last) return;
      last = id;
      this.changes.set(id, (this.changes.get(id) ?? 0) + 1);
    };
    for (const r of batch.results) touch(r.experimentId);
    for (const e of batch.exposures) touch(e.experimentId);
    for (const f of batch.feedback ?? []) touch(f.experimentId);
    for (const e of batch.clientExposures ?? []) touch(e.experimentId);
  }

  close(): Promise<void> {
    return this.runner.close();
  }

  private async find(slug: string): Promise<AnalysedExperiment> {
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return { id: live.id, experiment: live.experiment };
  }

  private async answer(task: ReadTask): Promise<string> {
    const { id, experiment } = task.experiment;
    const key = `${task.kind}\u0000${id}\u0000${stableJson(task.query)}`;
    // The definition (PATCH rebuilds rollups and moves updatedAt) and this instance's commits since.
    const stamp = `${experiment.updatedAt}\u0000${this.changes.get(id) ?? 0}`;
    const cached = this.cache?.get(key);
    if (cached?.stamp === stamp) {
      this.deps.onOutcome?.('cached');
      return cached.json;
    }
    const runKey = `${key}\u0000${stamp}`;
    const shared = this.running.get(runKey);
    if (shared) return shared;
    const work = this.execute(task).then((outcome) => (outcome as { json: string }).json);
    this.running.set(runKey, work);
    try {
      const json = await work;
      this.cache?.set(key, { stamp, json });
      return json;
    } finally {
      this.running.delete(runKey);
    }
  }

  private async execute(task: AnalysisTask): Promise<TaskOutcome & { ok: true }> {
    const { threads, queue, budgetMs } = this.options;
    if (this.waiting >= threads + queue) {
      this.deps.onOutcome?.('busy');
      throw new UnavailableError(
        `the analysis workers are busy (${threads} running, ${queue} waiting, ANALYSIS_THREADS and ANALYSIS_QUEUE): try again shortly`,
        2,
      );
    }
    this.waiting++;
    let outcome: TaskOutcome;
    try {
      outcome = await this.runner.run(task, AbortSignal.timeout(budgetMs));
    } catch (err) {
      this.deps.onOutcome?.(isAbort(err) ? 'budget' : 'failed');
      if (isAbort(err)) {
        throw new UnavailableError(
          `the ${TASK_WORDS[task.kind]} did not finish within its budget of ${budgetMs / 1000} s (ANALYSIS_BUDGET_SECONDS), waiting for a worker included, and was stopped: ${task.kind === 'simulate' ? 'ask for fewer runs' : 'narrow it (metrics=, segmentValues=, interval=day)'} or try again when the server is less busy`,
          5,
          { cause: err },
        );
      }
      throw err;
    } finally {
      this.waiting--;
    }
    if (!outcome.ok) {
      this.deps.onOutcome?.('failed');
      throw outcome.status === 503
        ? new UnavailableError(outcome.message, outcome.retryAfterSeconds)
        : new AppError(outcome.message, outcome.status);
    }
    this.deps.onOutcome?.('done');
    return outcome;
  }
}

function isAbort(err: unknown): boolean {
  return (err as { name?: unknown })?.name === 'AbortError';
}

/** JSON with object keys sorted, so the same query spelled in another order finds the same answer. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
