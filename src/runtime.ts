// Wires store → services → app, and takes them down in order. Used by main.ts and by the API tests.
// Its options are in runtime-options.ts.
import { type App, buildApp } from './app.js';
import { defaultThreads } from './config.js';
import type { SavedGroups } from './core/condition.js';
import { MONITOR_ACTOR } from './core/events.js';
import { isoNow, newId } from './core/ids.js';
import { DEFAULT_RETRY_SCHEDULE } from './core/webhooks.js';
import { GroupCommit } from './ingest/group-commit.js';
import { createMetrics, type Metrics } from './metrics.js';
import type { RuntimeOptions } from './runtime-options.js';
import { AnalysisPool } from './services/analysis-pool.js';
import { createAssign } from './services/assignments.js';
import { CompareService } from './services/compare.js';
import { DatasetService } from './services/datasets.js';
import { EventBus, EventService } from './services/events.js';
import { ExperimentCache } from './services/experiment-cache.js';
import { startExperimentSync } from './services/experiment-sync.js';
import { ExperimentService } from './services/experiments.js';
import { ExposureService } from './services/exposures.js';
import { FeedbackService } from './services/feedback.js';
import { groupUsage } from './services/group-usage.js';
import { GroupService } from './services/groups.js';
import { IdempotencyService } from './services/idempotency.js';
import { IssuedAssignments } from './services/issued-assignments.js';
import { DEFAULT_KEY_HASH_SECRET, KeyService } from './services/keys.js';
import { Monitor } from './services/monitor.js';
import { createOfrep } from './services/ofrep.js';
import { createPreview } from './services/preview.js';
import { RateLimits, rateLimitOptions } from './services/rate-limits.js';
import { ResultService } from './services/results.js';
import { RolloutSimulator } from './services/rollout-simulate.js';
import { RolloutService } from './services/rollouts.js';
import { RunService } from './services/runs.js';
import { TimeseriesService } from './services/timeseries.js';
import { TraceService } from './services/traces.js';
import { WebhookDelivery } from './services/webhook-delivery.js';
import { WebhookService } from './services/webhooks.js';
import { openStore } from './store/index.js';

export type { RuntimeOptions, WebhookOptions } from './runtime-options.js';

import type { SqlStore } from './store/sql-store.js';

/** Where other instances write too, the longest an analysis answer is reused without seeing their writes. */
const SHARED_CACHE_MAX_AGE_MS = 5000;

export interface Runtime {
  app: App;
  store: SqlStore;
  /** Group commit: results and exposures on their way to the store. */
  ingest: GroupCommit;
  /** This runtime's Prometheus metrics (GET /metrics). */
  metrics: Metrics;
  /** The events of changes this process committed, published after each commit (webhooks, the monitor). */
  bus: EventBus;
  /** The guardrail monitor: its rounds run every MONITOR_INTERVAL_SECONDS; tests may run one with `round()`. */
  monitor: Monitor;
  /** OTLP trace ingest: tests sweep with `sweep()`. */
  traces: TraceService;
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
  // PostgreSQL: this instance is alive to the others while it holds its lock (Idempotency-Key claims).
  await store.startInstance();
  const now = options.now ?? (() => isoNow());
  const metrics = createMetrics();
  const experimentCache = new ExperimentCache(store);
  let app: App | undefined;
  const bus = new EventBus((err) => app?.log.warn({ err }, 'a listener of committed events failed'));
  const experiments = new ExperimentService(store, experimentCache, {
    now,
    bus,
    newId,
    knownGroup: (key) => experimentCache.groups.has(key),
  });
  const keys = new KeyService({
    store,
    rootKey: options.apiKey,
    hashSecret: options.keyHashSecret ?? DEFAULT_KEY_HASH_SECRET,
    newId,
    now,
    onError: (err) => app?.log.warn({ err }, 'recording when keys were last used failed'),
    bus,
  });
  const rollouts = new RolloutService({ store, cache: experimentCache, bus, now, newId });
  const groups = new GroupService({
    store,
    cache: experimentCache,
    usedBy: groupUsage(experimentCache),
    newId,
    now,
    bus,
  });
  const events = new EventService(store, (slug) => experimentCache.lookup(slug) !== undefined);
  const hookOptions = options.webhooks ?? {};
  const denyPrivate = hookOptions.denyPrivate ?? false;
  const webhooks = new WebhookService({ store: store.webhooks, newId, now, bus, denyPrivate });
  const delivery = new WebhookDelivery({
    store: store.webhooks,
    schedule: hookOptions.retrySchedule ?? DEFAULT_RETRY_SCHEDULE,
    timeoutMs: hookOptions.timeoutMs ?? 15_000,
    denyPrivate,
    pollMs: hookOptions.pollMs ?? 1000,
    token: newId(),
    onAttempt: (outcome) => metrics.webhookAttempt(outcome),
    onError: (err) => app?.log.warn({ err }, 'webhook deliveries: a round failed; retrying'),
  });
  // A committed change of this instance starts a round at once; other instances' events wait for the poll.
  bus.onCommitted(() => delivery.kick());
  const idempotency = new IdempotencyService({
    store,
    singleProcess: store.singleProcess,
    claimTimeoutMs: options.idempotencyClaimTimeoutMs ?? 60_000,
    onError: (err) => app?.log.warn({ err }, 'Idempotency-Key bookkeeping failed'),
  });
  const loadedRevision = await store.experimentsRevision();
  await experimentCache.load();
  await keys.load();
  // Only a shared database (PostgreSQL) can be changed by another instance.
  const sync = store.watchExperiments
    ? await startExperimentSync(
        // The revision counts changes to experiments and to keys: both are reloaded.
        {
          load: async () => {
            await experimentCache.load();
            await keys.load();
          },
        },
        store,
        {
          loadedRevision,
          pollMs: options.syncPollMs,
          onError: (err) => {
            metrics.databaseError('experiment_sync');
            app?.log.warn({ err }, 'experiment sync check failed; retrying');
          },
        },
      )
    : undefined;
  let analysis: AnalysisPool | undefined;
  const ingest = new GroupCommit(
    async (batch) => {
      const decisions = await store.appendBatch(batch);
      analysis?.committed(batch);
      return decisions;
    },
    {
      maxBufferedExposures: options.exposureBuffer,
      concurrency: store.writeConcurrency,
      onExposureError: (err, lost) => {
        metrics.databaseError('exposure_write');
        app?.log.error({ err, lost }, 'exposures could not be written');
      },
      onCommit: (info) => metrics.committed(info),
      onExposuresDropped: warnAtMostEverySecond((count, total) =>
        app?.log.warn(
          { dropped: count, total },
          'exposure buffer full: exposures dropped (is the database slow or down?)',
        ),
      ),
    },
  );
  metrics.watch({
    pendingExposures: () => ingest.pendingExposures,
    droppedExposures: () => ingest.droppedExposures,
    experiments: () => experimentCache.list(),
    databaseStatements: store.statementsSent?.bind(store),
  });
  const savedGroups = (): SavedGroups => experimentCache.groups;
  const assignmentDeps = {
    experiments: experimentCache,
    ingest,
    random: options.random ?? Math.random,
    newId,
    now,
    groups: savedGroups,
  };
  const preview = createPreview({
    experiments: experimentCache,
    groups: savedGroups,
    random: assignmentDeps.random,
  });
  const assign = createAssign(assignmentDeps);
  const ofrep = createOfrep(assignmentDeps);
  const assignments = new IssuedAssignments(store);
  const runs = new RunService({
    store: store.runs,
    experiments: experimentCache,
    datasets: {
      find: (name) => store.datasets.findDataset(name),
      itemIds: async (id, version) => new Set((await store.datasets.itemsAt(id, version)).keys()),
    },
    newId,
    now,
  });
  const results = new ResultService({
    experiments: experimentCache,
    assignments,
    ingest,
    store,
    traces: store.traces,
    runs,
    newId,
    now,
  });
  const compare = new CompareService({ experiments: experimentCache, store });
  const feedback = new FeedbackService({
    experiments: experimentCache,
    assignments,
    ingest,
    store,
    newId,
    now,
  });
  const exposures = new ExposureService({ experiments: experimentCache, assignments, ingest, now });
  const traceOptions = options.traces ?? {};
  const windowSeconds = traceOptions.windowSeconds ?? 3600;
  const traces = new TraceService(
    {
      store: store.traces,
      findResult: (experimentId, logId) => store.findResult(experimentId, logId),
      experiments: experimentCache,
      assignments,
      results,
      feedback,
      now,
      counted: (outcome, n) => metrics.traceSpans(outcome, n),
      warn: (err, message) => app?.log.warn({ err }, message),
    },
    { prices: traceOptions.prices ?? {}, messageCap: traceOptions.messageBytes ?? 16 * 1024, windowSeconds },
  );
  traces.start(traceOptions.sweepMs ?? Math.min(60_000, Math.max(1000, windowSeconds * 100)));
  const poolOptions = options.analysis ?? {};
  analysis = new AnalysisPool(
    {
      experiments: experimentCache,
      database: options.database,
      store,
      onOutcome: (o) => metrics.analysis(o),
    },
    {
      threads: poolOptions.threads ?? defaultThreads(),
      queue: poolOptions.queue ?? 16,
      budgetMs: poolOptions.budgetMs ?? 20_000,
      cacheBytes: poolOptions.cacheBytes ?? 32 * 1024 * 1024,
      nice: poolOptions.nice ?? 15,
      ...(store.watchExperiments ? { maxAgeMs: SHARED_CACHE_MAX_AGE_MS } : {}),
    },
  );
  const timeseries = new TimeseriesService({ experiments: experimentCache, store });
  const rateLimits = await RateLimits.start(rateLimitOptions(options.rateLimits), {
    warn: (fields, message) => (options.logger ?? app?.log)?.warn(fields, message),
    info: (fields, message) => (options.logger ?? app?.log)?.info(fields, message),
    rateLimited: (reason) => metrics.rateLimited(reason),
  });
  app = await buildApp({
    keys,
    idempotency,
    experiments,
    assign,
    ofrep,
    preview,
    live: experimentCache,
    exposures,
    results,
    compare,
    feedback,
    analysis,
    timeseries,
    events,
    webhooks,
    groups,
    datasets: new DatasetService({ store: store.datasets, newId, now, bus }),
    runs,
    rollouts,
    simulator: new RolloutSimulator({
      cache: experimentCache,
      analysis,
      store,
      monitorIntervalSeconds: options.monitorIntervalSeconds ?? 0,
      now,
    }),
    store,
    traces: { service: traces, bodyLimit: traceOptions.bodyLimit ?? 8 * 1024 * 1024 },
    bodyLimit: options.bodyLimit,
    bodyTimeoutMs: options.bodyTimeoutMs,
    slowRequestMs: options.slowRequestMs,
    corsOrigins: options.corsOrigins,
    logger: options.logger,
    rootKey: options.apiKey,
    metrics,
    rateLimits,
    trustProxy: options.trustProxy,
    mcp: options.mcp,
    settings: {
      monitorIntervalSeconds: options.monitorIntervalSeconds ?? 0,
      rateLimitPerSecond: rateLimitOptions(options.rateLimits).perSecond,
    },
  });
  delivery.start();
  const monitor = new Monitor({
    store,
    experiments: experimentCache,
    analysis,
    pause: (slug, reason, findings) => experiments.pause(slug, MONITOR_ACTOR, reason, findings),
    rollouts,
    now,
    newId,
    onRound: (outcome, seconds) => metrics.monitorRound(outcome, seconds),
    onError: (err, slug) => app?.log.warn({ err, experiment: slug }, 'the guardrail monitor failed'),
  });
  if ((options.monitorIntervalSeconds ?? 0) > 0) monitor.start(options.monitorIntervalSeconds! * 1000);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await monitor.stop();
      await traces.stop();
      await app.close();
      await delivery.stop();
      await sync?.stop();
      await ingest.drain();
      idempotency.close();
      await rateLimits.close();
      await keys.close();
      await analysis.close();
      if (ingest.pendingExposures > 0) {
        app.log.error({ lost: ingest.pendingExposures }, 'exposures could not be written before shutdown');
      }
      await store.close();
    })();
    return closing;
  };
  return { app, store, ingest, metrics, bus, monitor, traces, close };
}
