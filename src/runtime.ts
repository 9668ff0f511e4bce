// Wires store → services → app, and takes them down in order. Used by main.ts and by the API tests.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { RandomSource } from './core/assignment.js';
import { isoNow, newId } from './core/ids.js';
import { GroupCommit } from './ingest/group-commit.js';
import { AnalysisService } from './services/analysis.js';
import { createAssign } from './services/assignments.js';
import { ExperimentCache } from './services/experiment-cache.js';
import { startExperimentSync } from './services/experiment-sync.js';
import { ExperimentService } from './services/experiments.js';
import { ResultService } from './services/results.js';
import { type DatabaseTarget, openStore } from './store/index.js';
import type { SqlStore } from './store/sql-store.js';

export interface RuntimeOptions {
  database: DatabaseTarget;
  apiKey: string;
  bodyLimit?: number;
  /** A request (headers and body) must arrive within this many ms, else 408. */
  bodyTimeoutMs?: number;
  /** Requests slower than this are logged at warn whatever the level. */
  slowRequestMs?: number;
  /** Default: silent. */
  logger?: Logger;
  random?: RandomSource;
  /** How often other instances' experiment changes are checked for, besides notifications (ms). */
  syncPollMs?: number;
}

export interface Runtime {
  app: FastifyInstance;
  store: SqlStore;
  /** Group commit: results and exposures on their way to the store. */
  ingest: GroupCommit;
  /** Stops taking requests, answers or flushes everything pending, closes the database. */
  close(): Promise<void>;
}

/** Wraps a warning so a flood of calls writes one line per second with the latest figures. */
function warnAtMostEverySecond(warn: (count: number, total: number) => void) {
  let last = 0;
  let pending = 0;
  return (count: number, total: number) => {
    pending += count;
    const now = Date.now();
    if (now - last < 1000) return;
    last = now;
    warn(pending, total);
    pending = 0;
  };
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const store = await openStore(options.database);
  const now = () => isoNow();
  const experimentCache = new ExperimentCache(store);
  const experiments = new ExperimentService(store, experimentCache, now);
  const loadedRevision = await store.experimentsRevision();
  await experimentCache.load();
  let app: FastifyInstance | undefined;
  // Only a shared database (PostgreSQL) can be changed by another instance.
  const sync = store.watchExperiments
    ? await startExperimentSync(experimentCache, store, {
        loadedRevision,
        pollMs: options.syncPollMs,
        onError: (err) => app?.log.warn({ err }, 'experiment sync check failed; retrying'),
      })
    : undefined;
  const ingest = new GroupCommit((batch) => store.appendBatch(batch), {
    onExposureError: (err, lost) => app?.log.error({ err, lost }, 'exposures could not be written'),
    onExposuresDropped: warnAtMostEverySecond((count, total) =>
      app?.log.warn(
        { dropped: count, total },
        'exposure buffer full: exposures dropped (is the database slow or down?)',
      ),
    ),
  });
  const assign = createAssign({
    experiments: experimentCache,
    ingest,
    random: options.random ?? Math.random,
    newId,
    now,
  });
  const results = new ResultService({ experiments: experimentCache, ingest, store, newId, now });
  const analysis = new AnalysisService({ experiments: experimentCache, store });
  app = await buildApp({
    apiKey: options.apiKey,
    experiments,
    assign,
    results,
    analysis,
    store,
    bodyLimit: options.bodyLimit,
    bodyTimeoutMs: options.bodyTimeoutMs,
    slowRequestMs: options.slowRequestMs,
    logger: options.logger,
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await app.close();
      await sync?.stop();
      await ingest.drain();
      if (ingest.pendingExposures > 0) {
        app.log.error({ lost: ingest.pendingExposures }, 'exposures could not be written before shutdown');
      }
      await store.close();
    })();
    return closing;
  };
  return { app, store, ingest, close };
}
