// buildApp(deps): the route declarations compiled once into the one request pipeline (ADR 0022), the
// node:http server that hands it every request, inject() into the same pipeline, and Fastify for the
// API documentation and the dashboard's files only; no env, no port.
import type { FastifyInstance } from 'fastify';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import pino, { type Logger } from 'pino';
import { analysisRoutes } from './http/analysis.js';
import { assignRoutes } from './http/assign.js';
import { clientAddress, type TrustProxy } from './http/client-address.js';
import { compileRoute } from './http/compile.js';
import { createCors } from './http/cors.js';
import { datasetRoutes } from './http/datasets.js';
import { registerDocs } from './http/docs.js';
import { entryRoutes } from './http/entry.js';
import { eventRoutes } from './http/events.js';
import { experimentRoutes } from './http/experiments.js';
import { feedbackRoutes } from './http/feedback.js';
import { groupRoutes } from './http/groups.js';
import { healthRoutes } from './http/health.js';
import { createInject, type Inject } from './http/inject.js';
import { keyRoutes } from './http/keys.js';
import { localEvaluationRoutes } from './http/local-evaluation.js';
import { LOCAL_HOSTS, type McpOptions, mcpRoutes } from './http/mcp.js';
import { metricsRoutes } from './http/metrics.js';
import {
  createClientErrorHandler,
  createNodeServer,
  createRequestListener,
  type ServerTimeouts,
} from './http/node-adapter.js';
import { ofrepRoutes } from './http/ofrep.js';
import { createPipeline } from './http/pipeline.js';
import { createRequestLog } from './http/request-log.js';
import { resultRoutes } from './http/results.js';
import { rolloutSimulateRoutes } from './http/rollout-simulate.js';
import { rolloutRoutes } from './http/rollouts.js';
import { runRoutes } from './http/runs.js';
import { type PublicSettings, settingsRoutes } from './http/settings.js';
import { timeseriesRoutes } from './http/timeseries.js';
import { traceRoutes } from './http/traces.js';
import { createValidatorCompiler } from './http/validation.js';
import { webhookRoutes } from './http/webhooks.js';
import type { Metrics } from './metrics.js';
import type { AnalysisPool } from './services/analysis-pool.js';
import type { Assign } from './services/assignments.js';
import type { CompareService } from './services/compare.js';
import type { DatasetService } from './services/datasets.js';
import type { EventService } from './services/events.js';
import type { ExperimentCache } from './services/experiment-cache.js';
import type { ExperimentService } from './services/experiments.js';
import type { ExposureService } from './services/exposures.js';
import type { FeedbackService } from './services/feedback.js';
import type { GroupService } from './services/groups.js';
import type { IdempotencyService } from './services/idempotency.js';
import type { KeyService } from './services/keys.js';
import type { Ofrep } from './services/ofrep.js';
import type { Preview } from './services/preview.js';
import type { RateLimits } from './services/rate-limits.js';
import type { ResultService } from './services/results.js';
import type { RolloutSimulator } from './services/rollout-simulate.js';
import type { RolloutService } from './services/rollouts.js';
import type { RunService } from './services/runs.js';
import type { TimeseriesService } from './services/timeseries.js';
import type { TraceService } from './services/traces.js';
import type { WebhookService } from './services/webhooks.js';
import type { Store } from './store/store.js';

export interface AppDeps {
  /** Who presents an x-api-key: the root key (API_KEY) and managed keys. */
  keys: KeyService;
  idempotency: IdempotencyService;
  experiments: ExperimentService;
  assign: Assign;
  /** OpenFeature's remote evaluation (OFREP): one flag as assign, every flag without exposures. */
  ofrep: Ofrep;
  /** What clients that assign in-process read (the running experiments) and write (their exposures). */
  live: Pick<ExperimentCache, 'list' | 'serving' | 'revision' | 'groups'>;
  /** What assign would answer, and why (ADR 0038). */
  preview: Preview;
  exposures: ExposureService;
  results: ResultService;
  /** Two variants' results grouped by input. */
  compare: CompareService;
  feedback: FeedbackService;
  /** Analyses and time series, off the event loop. */
  analysis: Pick<AnalysisPool, 'analysisJson' | 'timeseriesJson'>;
  timeseries: Pick<TimeseriesService, 'versions'>;
  events: EventService;
  webhooks: WebhookService;
  /** Saved groups (ADR 0038). */
  groups: GroupService;
  /** Datasets (issue 40); absent: no dataset routes (unit tests of other routes). */
  datasets?: DatasetService;
  /** Offline runs (issue 40); absent: no run routes. */
  runs?: RunService;
  /** Rollouts (issue 38); absent: no rollout routes (unit tests of other routes). */
  rollouts?: RolloutService;
  /** Rollouts' dry run (issue 38). */
  simulator?: RolloutSimulator;
  store: Pick<Store, 'ping'>;
  /** OTLP trace ingest (issue 39) and its body limit; absent: no /v1/traces (unit tests of other routes). */
  traces?: { service: Pick<TraceService, 'ingest'>; bodyLimit: number };
  /** Bytes; bodies above it get 413. */
  bodyLimit?: number;
  /** A request (headers and body) must arrive within this many ms, else 408. */
  bodyTimeoutMs?: number;
  /** Requests slower than this are logged at warn. */
  slowRequestMs?: number;
  /** Origins browsers may call from (`*`: any); absent or empty: CORS off. */
  corsOrigins?: string[];
  /** Default: silent. */
  logger?: Logger;
  /** The root key (API_KEY): never written to a log, wherever a request carries it (ADR 0013). */
  rootKey?: string;
  /** This runtime's Prometheus metrics: every answer is counted, GET /metrics serves them. */
  metrics: Metrics;
  /** Per-key limits and failed-authentication throttling (ADR 0017); absent: none (unit tests). */
  rateLimits?: RateLimits;
  /** What GET /settings answers (the dashboard's help texts); absent: both 0 (unit tests). */
  settings?: PublicSettings;
  /** TRUST_PROXY: whose X-Forwarded-For names the client (issue 34); absent or 0: the socket's peer. */
  trustProxy?: TrustProxy;
  /** Who /mcp answers (DNS-rebinding protection); absent: local host names only, any local origin. */
  mcp?: McpOptions;
}

const MAX_PARAM_LENGTH = 1000;

/**
 * The app: Fastify's instance (listen, close, log, the server), whose `inject` enters the pipeline as a
 * socket's request does (not Fastify's router, which holds the documentation only).
 */
export type App = Omit<FastifyInstance, 'inject'> & { inject: Inject };

export async function buildApp(deps: AppDeps): Promise<App> {
  const bodyLimit = deps.bodyLimit ?? 1024 * 1024;
  const bodyTimeoutMs = deps.bodyTimeoutMs ?? 30_000;
  const logger = deps.logger ?? pino({ level: 'silent' });
  const log = createRequestLog(logger, {
    slowMs: deps.slowRequestMs ?? 1000,
    metrics: deps.metrics,
    secrets: deps.rootKey === undefined ? [] : [deps.rootKey],
  });
  const validatorCompiler = createValidatorCompiler();
  const routes = [
    ...healthRoutes(deps.store),
    ...settingsRoutes(deps.settings ?? { monitorIntervalSeconds: 0, rateLimitPerSecond: 0 }),
    ...experimentRoutes(deps.experiments, (p) => deps.keys.actorOf(p)),
    ...eventRoutes(deps.events),
    ...assignRoutes(deps.assign),
    ...entryRoutes(deps.preview, (key) => deps.experiments.layer(key)),
    ...ofrepRoutes(deps.ofrep),
    ...resultRoutes(deps.results, deps.feedback, deps.compare),
    ...feedbackRoutes(deps.feedback),
    ...localEvaluationRoutes(deps.live, deps.exposures),
    ...analysisRoutes(deps.analysis),
    ...timeseriesRoutes(deps.timeseries, deps.analysis),
    ...keyRoutes(deps.keys),
    ...webhookRoutes(deps.webhooks, (p) => deps.keys.actorOf(p)),
    ...groupRoutes(deps.groups, (p) => deps.keys.actorOf(p)),
    ...(deps.datasets ? datasetRoutes(deps.datasets, (p) => deps.keys.actorOf(p)) : []),
    ...(deps.runs ? runRoutes(deps.runs, (p) => deps.keys.actorOf(p)) : []),
    ...(deps.rollouts ? rolloutRoutes(deps.rollouts, (p) => deps.keys.actorOf(p)) : []),
    ...(deps.simulator ? rolloutSimulateRoutes(deps.simulator) : []),
    ...(deps.traces ? traceRoutes(deps.traces.service, deps.traces.bodyLimit) : []),
    ...metricsRoutes(deps.metrics),
    ...mcpRoutes(() => inject, deps.mcp ?? { allowedHosts: LOCAL_HOSTS, allowedOrigins: [] }),
  ].map((r) => compileRoute(r, validatorCompiler));

  // Unset until Fastify is ready (it routes the documentation), set when closing (answers 503).
  let closing = false;
  let docs: ((req: Parameters<typeof listener>[0], res: Parameters<typeof listener>[1]) => void) | undefined;
  const pipeline = createPipeline({
    routes,
    authenticate: (presented) => deps.keys.authenticate(presented),
    livePrefixOf: (presented) => deps.keys.livePrefixOf(presented),
    clientAddress: clientAddress(deps.trustProxy ?? 0),
    bodyLimit,
    maxParamLength: MAX_PARAM_LENGTH,
    log,
    idempotency: deps.idempotency,
    rateLimits: deps.rateLimits,
    cors:
      deps.corsOrigins !== undefined && deps.corsOrigins.length > 0
        ? createCors(deps.corsOrigins)
        : undefined,
    onWriteError: (err) => logger.error({ err }, 'writing an answer failed'),
    closing: () => closing,
    fallback: (req, res) => docs!(req, res),
  });
  // Routes taking bytes (OTLP) limit chunked bodies by their own limit, checked before routing.
  const ownLimits = new Map(
    routes.flatMap((r) => (r.route.bytes === undefined ? [] : [[r.route.url, r.route.bytes.limit] as const])),
  );
  const listener = createRequestListener(pipeline, bodyLimit, ownLimits);
  // MCP's tools call the API through it (http/mcp.ts).
  const inject = createInject(listener);

  const app = Fastify({
    serverFactory: (handler, serverOptions) => {
      docs = handler;
      return createNodeServer(() => listener, serverOptions as unknown as ServerTimeouts, {
        bodyTimeoutMs,
        log,
      });
    },
    loggerInstance: logger as FastifyBaseLogger,
    // The pipeline answers 503 with Retry-After while closing.
    return503OnClosing: false,
    // Request lines are written by the request log (ADR 0013).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    requestTimeout: bodyTimeoutMs,
    requestIdHeader: false,
    genReqId: log.id,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    clientErrorHandler: createClientErrorHandler(bodyTimeoutMs, bodyLimit),
  });
  await registerDocs(app, routes, log, bodyLimit);
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const injectable = app as unknown as App;
  injectable.inject = inject;
  return injectable;
}
