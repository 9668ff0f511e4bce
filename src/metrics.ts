// The operator's view (issue 14, section 4): the Prometheus metrics of one runtime, in a registry of its
// own (never prom-client's global one: the tests start many runtimes in one process), served as text by
// GET /metrics (src/http/metrics.ts).
//
// What the request path records costs a Map lookup and an array increment: no label object or string
// is built per request. prom-client's labelled children hash their labels on every call (about 0.7 µs
// for a counter and a histogram per request, measured on this machine), so requests and group commits
// are counted in the plain collectors below and put in prom-client's shape only when scraped.
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import { STATUSES, type Status } from './core/experiment.js';
import { SPAN_OUTCOMES, type SpanOutcome } from './core/trace-result.js';

/**
 * Upper bounds of the request latency and commit wait histograms, in seconds: 0.5 ms to 10 s. (Prometheus
 * calls each bound's series `_bucket`; that name is the exposition format's, not ours.)
 */
export const LATENCY_BOUNDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** Upper bounds of the histogram of results (or exposures) per committed transaction. */
export const BATCH_SIZE_BOUNDS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
/** The route label of a request that matched no declared route (an unknown path, a missing Host). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Where a database error was seen. */
export type DatabaseErrorSource = 'request' | 'exposure_write' | 'experiment_sync';
const DATABASE_ERROR_SOURCES: readonly DatabaseErrorSource[] = [
  'request',
  'exposure_write',
  'experiment_sync',
];
/** Why a request was refused with 429: its key's limit, or too many failed authentications from its address. */
export type RateLimitReason = 'key' | 'failed_auth';
const RATE_LIMIT_REASONS: readonly RateLimitReason[] = ['key', 'failed_auth'];
/** A webhook delivery attempt's outcome: delivered (2xx), retried later, or failed for good (410 too). */
export type WebhookOutcome = 'delivered' | 'retried' | 'failed';
const WEBHOOK_OUTCOMES: readonly WebhookOutcome[] = ['delivered', 'retried', 'failed'];

/** How a guardrail monitor round ended (services/monitor.ts): it ran, another instance leads, or it failed. */
export type MonitorOutcome = 'led' | 'follower' | 'failed';
const MONITOR_OUTCOMES: readonly MonitorOutcome[] = ['led', 'follower', 'failed'];
export type AnalysisOutcome = 'done' | 'cached' | 'busy' | 'budget' | 'failed';
const ANALYSIS_OUTCOMES: readonly AnalysisOutcome[] = ['done', 'cached', 'busy', 'budget', 'failed'];
/** Upper bounds of the monitor round duration histogram, in seconds. */
export const ROUND_BOUNDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** A committed group-commit transaction, as GroupCommit's onCommit reports it. */
export interface CommitInfo {
  results: number;
  exposures: number;
  /** When each request's results were handed in (performance.now()). */
  enqueuedAt: number[];
}

/** What the gauges read at scrape time. */
export interface MetricSources {
  /** Exposures waiting in memory to be written. */
  pendingExposures(): number;
  /** Experiments in this instance's cache, with their status. */
  experiments(): ReadonlyArray<{ experiment: { status: Status } }>;
  /** Exposures dropped so far because the buffer was full. */
  droppedExposures(): number;
  /** Statements sent to the database so far (PostgreSQL; absent on SQLite). */
  databaseStatements?(): number;
}

export interface Metrics {
  readonly registry: Registry;
  /** The content type of `scrape()`'s text (Prometheus text format 0.0.4). */
  readonly contentType: string;
  /** Every answered request, from both transports (through the request log). `route` is the pattern. */
  answered(route: string | undefined, method: string | undefined, status: number, ms: number): void;
  databaseError(source: DatabaseErrorSource): void;
  /** A request refused with 429. */
  rateLimited(reason: RateLimitReason): void;
  /** A webhook delivery attempt, by outcome. */
  webhookAttempt(outcome: WebhookOutcome): void;
  /** A guardrail monitor round: its outcome and how long it took (seconds). */
  monitorRound(outcome: MonitorOutcome, seconds: number): void;
  /** An analysis or time series request of the worker pool, by outcome. */
  analysis(outcome: AnalysisOutcome): void;
  /** Spans of OTLP trace exports, by what became of them (services/traces.ts). */
  traceSpans(outcome: SpanOutcome, n: number): void;
  /** GroupCommit's onCommit: batch sizes and each request's wait for its commit. */
  committed(info: CommitInfo): void;
  /** Connects the gauges read at scrape time (once the runtime's parts exist). */
  watch(sources: MetricSources): void;
  /** Every metric as Prometheus text. */
  scrape(): Promise<string>;
}

type Labels = Record<string, string | number>;
interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** One histogram child's counts: plain numbers, observed without allocating. */
class HistogramCounts {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

/** One counter child. */
class Count {
  value = 0;
}

/**
 * A collector in prom-client's metric shape (name, help, type, get, reset) whose children are made once
 * per label set and updated as plain numbers; `get` builds the samples when scraped.
 */
abstract class PlainCollector<C> {
  readonly aggregator = 'sum';
  protected readonly children: Array<{ labels: Labels; child: C }> = [];
  abstract readonly type: 'counter' | 'histogram';
  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // prom-client's Registry takes any object of this shape; its type only names its own classes.
    registry.registerMetric(this as unknown as Metric);
  }
  protected abstract make(): C;
  protected abstract samples(labels: Labels, child: C, into: Sample[]): void;
  child(labels: Labels): C {
    const child = this.make();
    this.children.push({ labels, child });
    return child;
  }
  async get() {
    const values: Sample[] = [];
    for (const { labels, child } of this.children) this.samples(labels, child, values);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
  /** Zeroes every child in place (the request path holds them). */
  reset(): void {
    for (const { child } of this.children) this.zero(child);
  }
  protected abstract zero(child: C): void;
}

class PlainCounter extends PlainCollector<Count> {
  readonly type = 'counter';
  protected make(): Count {
    return new Count();
  }
  protected zero(child: Count): void {
    child.value = 0;
  }
  protected samples(labels: Labels, child: Count, into: Sample[]): void {
    into.push({ labels, value: child.value });
  }
}

class PlainHistogram extends PlainCollector<HistogramCounts> {
  readonly type = 'histogram';
  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    super(name, help, registry);
  }
  protected make(): HistogramCounts {
    return new HistogramCounts(this.bounds);
  }
  protected zero(child: HistogramCounts): void {
    child.counts.fill(0);
    child.sum = 0;
    child.count = 0;
  }
  protected samples(labels: Labels, child: HistogramCounts, into: Sample[]): void {
    const series = `${this.name}_bucket`;
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += child.counts[i]!;
      into.push({ metricName: series, labels: { ...labels, le: this.bounds[i]! }, value: cumulative });
    }
    into.push({ metricName: series, labels: { ...labels, le: '+Inf' }, value: child.count });
    into.push({ metricName: `${this.name}_sum`, labels, value: child.sum });
    into.push({ metricName: `${this.name}_count`, labels, value: child.count });
  }
}

/** The request counter and latency histogram children of one route and method. */
interface RouteChildren {
  latency: HistogramCounts;
  byStatus: Map<number, Count>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let sources: MetricSources | undefined;

  const requests = new PlainCounter(
    'agentsplit_http_requests_total',
    'Requests answered, by route pattern (unmatched: no route), method and status, from both transports',
    registry,
  );
  const latency = new PlainHistogram(
    'agentsplit_http_request_duration_seconds',
    'Time from a request being taken to its answer being handed to the socket, by route pattern and method',
    registry,
    LATENCY_BOUNDS,
  );
  const batchSize = new PlainHistogram(
    'agentsplit_group_commit_batch_size',
    'Rows per committed group-commit transaction, by kind (results, exposures; a kind absent from a transaction is not observed)',
    registry,
    BATCH_SIZE_BOUNDS,
  );
  const resultsPerCommit = batchSize.child({ kind: 'results' });
  const exposuresPerCommit = batchSize.child({ kind: 'exposures' });
  const commitWait = new PlainHistogram(
    'agentsplit_group_commit_wait_seconds',
    "Time from a request's results being handed to the group commit to their commit",
    registry,
    LATENCY_BOUNDS,
  ).child({});

  const databaseErrors = new Counter({
    name: 'agentsplit_database_errors_total',
    help: 'Database errors, by where they were seen: request (answered 503), exposure_write (exposures lost), experiment_sync (a check for other instances’ changes failed)',
    labelNames: ['source'],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'agentsplit_rate_limited_total',
    help: 'Requests answered 429, by reason: key (the key’s limit) or failed_auth (failed authentications from one address)',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every known label value is shown from the start, at 0, so a rate or an alert has a series to read.
  for (const source of DATABASE_ERROR_SOURCES) databaseErrors.labels(source).inc(0);
  for (const reason of RATE_LIMIT_REASONS) rateLimited.labels(reason).inc(0);
  const webhookAttempts = new Counter({
    name: 'agentsplit_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome: delivered (2xx), retried (to be sent again), failed (no more attempts, or 410)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of WEBHOOK_OUTCOMES) webhookAttempts.labels(outcome).inc(0);
  const monitorRounds = new Counter({
    name: 'agentsplit_monitor_rounds_total',
    help: 'Guardrail monitor rounds, by outcome: led (this instance judged the running experiments), follower (another instance leads), failed',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of MONITOR_OUTCOMES) monitorRounds.labels(outcome).inc(0);
  const analyses = new Counter({
    name: 'agentsplit_analyses_total',
    help: 'Analyses and time series, by outcome: done (a worker computed it), cached, busy (503: the workers and their queue were full), budget (503: stopped at ANALYSIS_BUDGET_SECONDS), failed (an error, e.g. 4xx)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ANALYSIS_OUTCOMES) analyses.labels(outcome).inc(0);
  const traceSpans = new Counter({
    name: 'agentsplit_trace_spans_total',
    help: 'Spans received on /v1/traces, by outcome: accepted (kept, new), repeated (kept before: a retry), joined (became part of a run that is a result), ignored (left the trace window without joining a run), rejected (malformed)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of SPAN_OUTCOMES) traceSpans.labels(outcome).inc(0);
  const monitorDuration = new Histogram({
    name: 'agentsplit_monitor_round_duration_seconds',
    help: 'How long a guardrail monitor round took, by outcome',
    labelNames: ['outcome'],
    buckets: ROUND_BOUNDS,
    registers: [registry],
  });

  new Gauge({
    name: 'agentsplit_exposure_queue_depth',
    help: 'Exposures waiting in memory to be written',
    registers: [registry],
    collect() {
      this.set(sources?.pendingExposures() ?? 0);
    },
  });
  let droppedSeen = 0;
  new Counter({
    name: 'agentsplit_exposures_dropped_total',
    help: 'Exposures dropped because the in-memory buffer was full (the database slow or down)',
    registers: [registry],
    collect() {
      const total = sources?.droppedExposures() ?? 0;
      if (total > droppedSeen) this.inc(total - droppedSeen);
      droppedSeen = Math.max(droppedSeen, total);
    },
  });
  let statementsSeen = 0;
  new Counter({
    name: 'agentsplit_database_statements_total',
    help: 'Statements this instance sent to PostgreSQL (BEGIN and COMMIT included; not kept on SQLite)',
    registers: [registry],
    collect() {
      const total = sources?.databaseStatements?.() ?? 0;
      if (total > statementsSeen) this.inc(total - statementsSeen);
      statementsSeen = Math.max(statementsSeen, total);
    },
  });
  new Gauge({
    name: 'agentsplit_experiments_loaded',
    help: "Experiments in this instance's in-memory table, by status",
    labelNames: ['status'],
    registers: [registry],
    collect() {
      const counts = new Map<string, number>(STATUSES.map((s) => [s, 0]));
      for (const { experiment } of sources?.experiments() ?? []) {
        counts.set(experiment.status, (counts.get(experiment.status) ?? 0) + 1);
      }
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });

  const routes = new Map<string, Map<string, RouteChildren>>();

  return {
    registry,
    contentType: registry.contentType,
    answered(route, method, status, ms) {
      const r = route ?? UNMATCHED_ROUTE;
      const m = method ?? 'UNKNOWN';
      let byMethod = routes.get(r);
      if (byMethod === undefined) {
        byMethod = new Map();
        routes.set(r, byMethod);
      }
      let children = byMethod.get(m);
      if (children === undefined) {
        children = { latency: latency.child({ route: r, method: m }), byStatus: new Map() };
        byMethod.set(m, children);
      }
      let count = children.byStatus.get(status);
      if (count === undefined) {
        count = requests.child({ route: r, method: m, status });
        children.byStatus.set(status, count);
      }
      count.value++;
      children.latency.observe(ms / 1000);
    },
    databaseError(source) {
      databaseErrors.labels(source).inc();
    },
    rateLimited(reason) {
      rateLimited.labels(reason).inc();
    },
    webhookAttempt(outcome) {
      webhookAttempts.labels(outcome).inc();
    },
    analysis(outcome) {
      analyses.labels(outcome).inc();
    },
    traceSpans(outcome, n) {
      traceSpans.labels(outcome).inc(n);
    },
    monitorRound(outcome, seconds) {
      monitorRounds.labels(outcome).inc();
      monitorDuration.labels(outcome).observe(seconds);
    },
    committed(info) {
      if (info.results > 0) resultsPerCommit.observe(info.results);
      if (info.exposures > 0) exposuresPerCommit.observe(info.exposures);
      const now = performance.now();
      for (const at of info.enqueuedAt) commitWait.observe((now - at) / 1000);
    },
    watch(s) {
      sources = s;
    },
    scrape: () => registry.metrics(),
  };
}
