// Traces in (issue 39): what `POST /v1/traces` ingests and what a run through it costs against a `log`.
// agentsplit as `npm start` runs it (fresh SQLite file, a TRACE_PRICES table) and the bare node:http baseline,
// started here. Each export is 50 runs of the fake agent of test/api-traces.test.ts (test/helpers/otlp-agent.ts:
// an invoke_agent root carrying the run's own assignment id, two chat spans with gen_ai.usage and the model,
// one execute_tool span), each run its own trace, serialized as the OTLP exporters do
// (@opentelemetry/otlp-transformer's ProtobufTraceSerializer / JsonTraceSerializer, gzip where named).
// Assignments are made and bodies built before anything is timed.
//   1. Throughput: a few clients send exports back to back for a fixed time (127.0.0.1); spans accepted and
//      runs joined a second, from the answers and the server's agentsplit_trace_spans_total.
//   2. Cost: server CPU (all threads, /proc, settled before and after: the commits a round caused count in
//      it) per run and per span through /v1/traces, against per `POST /experiment/:slug/log` carrying the
//      same metrics as one run (the feedback a traced run got, read back) and its own assignment id, in
//      alternating rounds of the same number of runs, sent by autocannon (as bench/path-cost.ts), each request
//      its own body; the bare baseline parses the same JSON bodies beside them.
// Afterwards every experiment's results are read back through the API: one result per run sent, each with its
// run's feedback, or the part says where not. `npm run bench -- --traces`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import autocannon from 'autocannon';
import { AGENT_CALLS, runAgent } from '../test/helpers/otlp-agent.js';
import { type Server, settle, startAgentsplit, startBaseline } from './servers.js';

const API_KEY = 'bench-key-0123456789abcdef';
const TARGET = 'agentsplit SQLite';
/** Runs an export carries, and spans a run has (test/helpers/otlp-agent.ts). */
const RUNS_PER_EXPORT = 50;
const SPANS_PER_RUN = 4;
/** Clients sending exports at once by default (the route reads 4 exports at a time; more wait unread). */
const CLIENTS = 4;
/** Connections sending logs at once in the cost rounds (as bench/path-cost.ts's log). */
const LOG_CONNECTIONS = 16;
/** The fake agent's models, priced as in test/api-traces.test.ts (US dollars per million tokens). */
const PRICES = {
  version: 1,
  currency: 'USD',
  models: {
    'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
    'gpt-4o-mini': { input: 0.15, output: 0.6 },
  },
};
const VARIANTS = [
  { key: 'A', payload: { prompt: 'You are a helpful assistant.', model: 'small' }, trafficPercent: 34 },
  { key: 'B', payload: { prompt: 'You are a concise assistant.', model: 'small' }, trafficPercent: 33 },
  { key: 'C', payload: { prompt: 'You are a friendly assistant.', model: 'large' }, trafficPercent: 33 },
];

interface Encoding {
  name: string;
  json: boolean;
  gzip: boolean;
}
const PROTOBUF: Encoding = { name: 'protobuf', json: false, gzip: false };
const ENCODINGS: Encoding[] = [
  PROTOBUF,
  { name: 'JSON', json: true, gzip: false },
  { name: 'protobuf + gzip', json: false, gzip: true },
  { name: 'JSON + gzip', json: true, gzip: true },
];
const slugOf = (phase: string, e: Encoding) =>
  `traces-${phase}-${e.name.replace(/[^a-z]+/gi, '-').toLowerCase()}`;

export interface TraceOptions {
  /** Seconds each throughput run sends for (after its warm-up). */
  seconds: number;
  /** The throughput runs: an encoding and the clients sending exports at once. The cost rounds run all four. */
  throughput: Array<{ encoding: string; clients: number }>;
  /** Alternating cost rounds, and runs a round (the log rounds send as many logs). */
  rounds: number;
  runsPerRound: number;
}

export const TRACE_OPTIONS: TraceOptions = {
  seconds: 10,
  // One client beside four: whether exports sent at once overlap in the server.
  throughput: [
    { encoding: 'protobuf', clients: CLIENTS },
    { encoding: 'protobuf', clients: 1 },
    { encoding: 'JSON + gzip', clients: CLIENTS },
  ],
  rounds: 3,
  runsPerRound: 2000,
};

export interface ThroughputFigures {
  encoding: string;
  clients: number;
  seconds: number;
  /** Exports answered 200 with no partial success, and their bytes each (as sent). */
  exports: number;
  bodyBytes: number;
  spansPerSecond: number;
  runsPerSecond: number;
  /** From the server's agentsplit_trace_spans_total over the timed window. */
  accepted: number;
  joined: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU over the window, in cores (all threads), and per run. */
  serverCores: number;
  serverUsPerRun: number;
  /** Cores each kind of the server's threads used over the window (the main thread apart). */
  threadCores: string;
  /** The server's peak RSS so far, after the window. */
  peakRssMb: number;
  /** The pool of assigned runs ran out before the time did. */
  ranOut: boolean;
  failures: string[];
}

export interface CostFigures {
  path: string;
  connections: number;
  /** Runs a request carries (1 for log). */
  runsPerRequest: number;
  /** Median server CPU per run (µs) over the rounds, and each round's. */
  usPerRun: number;
  rounds: number[];
  /** The bare node:http server's CPU per request of the same body (JSON bodies only), per run. */
  bareUsPerRun?: number;
}

export interface CheckFigures {
  slug: string;
  runsSent: number;
  results: number;
  distinctAssignments: number;
  /** Results whose feedback is the run's (tokens, tools, latency, cost). */
  withRunFeedback: number;
  /** Runs of exports that did not answer a full success (they may still have been committed). */
  runsFailed: number;
  ok: boolean;
}

export interface TraceFigures {
  options: TraceOptions;
  exportBytes: Record<string, number>;
  logMetrics: Record<string, unknown>;
  throughput: ThroughputFigures[];
  costs: CostFigures[];
  checks: CheckFigures[];
  /** The server's peak RSS after the throughput runs and cost rounds, and after the results were read back. */
  peakRssLoadMb: number;
  peakRssMb: number;
  /** Load average (1/5/15 min) at the part's start and end, and the machine's cores. */
  load: { start: number[]; end: number[]; cores: number };
  seconds: number;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

function post(
  server: Server,
  path: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; body: Buffer }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent: keepAlive,
        headers: { ...headers, 'x-api-key': API_KEY, 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function api(server: Server, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.headers.get('content-type')?.includes('json') ? res.json() : res.text();
}

interface Assigned {
  assignmentId: string;
  variant: string;
  userId: string;
}

let users = 0;

/** `n` assignments of `slug`, each a new user, 32 at a time. */
async function assignMany(server: Server, slug: string, n: number): Promise<Assigned[]> {
  const out: Assigned[] = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const userId = `trace-user-${users++}`;
      const res = await post(
        server,
        `/experiment/${slug}/assign`,
        Buffer.from(JSON.stringify({ userId, context: { plan: 'pro', channel: 'web' } })),
        { 'content-type': 'application/json' },
      );
      if (res.status !== 200) throw new Error(`assign ${slug}: ${res.status} ${res.body}`);
      const a = JSON.parse(res.body.toString('utf8')) as { assignmentId: string; variant: string };
      out[i] = { assignmentId: a.assignmentId, variant: a.variant, userId };
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return out;
}

/** The spans of RUNS_PER_EXPORT runs a body, each run its own trace and assignment. */
function exportSpans(runs: Assigned[]): ReadableSpan[][] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'fake-agent', 'service.version': '1.4.2' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const at = Date.now() - 60_000;
  const out: ReadableSpan[][] = [];
  for (let i = 0; i < runs.length; i += RUNS_PER_EXPORT) {
    for (const run of runs.slice(i, i + RUNS_PER_EXPORT)) runAgent(provider, run.assignmentId, at);
    out.push(memory.getFinishedSpans().slice());
    memory.reset();
  }
  return out;
}

function encode(spans: ReadableSpan[], e: Encoding): Buffer {
  const bytes = (e.json ? JsonTraceSerializer : ProtobufTraceSerializer).serializeRequest(spans);
  if (bytes === undefined) throw new Error(`${e.name}: the serializer answered nothing`);
  return e.gzip ? gzipSync(bytes) : Buffer.from(bytes);
}

function exportHeaders(e: Encoding): Record<string, string> {
  return {
    'content-type': e.json ? 'application/json' : 'application/x-protobuf',
    ...(e.gzip ? { 'content-encoding': 'gzip' } : {}),
  };
}

/** The bodies of `runs` in encoding `e`: RUNS_PER_EXPORT runs each. */
function exportBodies(runs: Assigned[], e: Encoding): Buffer[] {
  return exportSpans(runs).map((spans) => encode(spans, e));
}

interface SendResult {
  /** Bodies answered with a full success. */
  ok: number;
  /** Bodies sent (answered, whatever the answer). */
  sent: number;
  latencies: number[];
  failures: string[];
  seconds: number;
}

/** Sends `bodies` from `clients` loops until they run out or `deadline` (performance.now()) passes. */
async function send(
  server: Server,
  path: string,
  bodies: Buffer[],
  headers: Record<string, string>,
  clients: number,
  success: (status: number, body: Buffer) => string | null,
  deadline = Number.POSITIVE_INFINITY,
): Promise<SendResult> {
  const r: SendResult = { ok: 0, sent: 0, latencies: [], failures: [], seconds: 0 };
  let next = 0;
  const started = performance.now();
  const client = async () => {
    while (next < bodies.length && performance.now() < deadline) {
      const body = bodies[next++]!;
      const t = performance.now();
      let failure: string | null;
      try {
        const res = await post(server, path, body, headers);
        failure = success(res.status, res.body);
      } catch (err) {
        failure = (err as Error).message;
      }
      r.latencies.push(performance.now() - t);
      r.sent++;
      if (failure === null) r.ok++;
      else r.failures.push(failure);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  r.seconds = (performance.now() - started) / 1000;
  return r;
}

/** A full success of /v1/traces: 200 with an empty answer (protobuf) or {} (JSON). */
function traceSuccess(status: number, body: Buffer): string | null {
  const text = body.toString('utf8');
  if (status === 200 && (body.length === 0 || text === '{}')) return null;
  // Protobuf's partialSuccess holds its errorMessage as text: printable enough to say why.
  return `${status} ${text
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, 300)}`;
}

const logSuccess = (status: number, body: Buffer) =>
  status === 200 ? null : `${status} ${body.toString('utf8').slice(0, 300)}`;

/** agentsplit_trace_spans_total by outcome. */
async function spanCounts(server: Server): Promise<Record<string, number>> {
  const text = (await api(server, 'GET', '/metrics')) as string;
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^agentsplit_trace_spans_total\{outcome="(\w+)"\} (\d+)$/gm)) {
    counts[m[1]!] = Number(m[2]);
  }
  return counts;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? Number.NaN;
};

/** CPU ms so far of each of the server's threads (/proc/<pid>/task), by "name tid"; the main thread as "main". */
function threadsMs(server: Server): Map<string, number> {
  const pid = server.child.pid!;
  const out = new Map<string, number>();
  const dir = `/proc/${pid}/task`;
  if (!existsSync(dir)) return out;
  for (const tid of readdirSync(dir)) {
    try {
      const text = readFileSync(`${dir}/${tid}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      const name =
        Number(tid) === pid ? 'main' : `${text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'))} ${tid}`;
      out.set(name, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/**
 * Cores the main thread and the other threads (all named "node": the SQLite writer's worker, V8's helper,
 * libuv's pool) used between two readings over `seconds`: "main 0.49, others 0.50".
 */
function busiest(before: Map<string, number>, after: Map<string, number>, seconds: number): string {
  let main = 0;
  let others = 0;
  for (const [k, v] of after) {
    const used = (v - (before.get(k) ?? 0)) / 1000 / seconds;
    if (k === 'main') main += used;
    else others += used;
  }
  return `main ${main.toFixed(2)}, others ${others.toFixed(2)}`;
}

/** Runs sent per experiment, and runs of bodies that did not answer a full success. */
const sentTo = new Map<string, { runs: number; failed: number }>();
function count(slug: string, runs: number, failed: number): void {
  const c = sentTo.get(slug) ?? { runs: 0, failed: 0 };
  c.runs += runs;
  c.failed += failed;
  sentTo.set(slug, c);
}

async function throughput(
  server: Server,
  e: Encoding,
  seconds: number,
  clients: number,
): Promise<ThroughputFigures> {
  const slug = slugOf('rate', e);
  const path = '/v1/traces';
  const headers = exportHeaders(e);
  // Warm-up: 20 exports, which also tells how many runs the timed part needs.
  const warm = await assignMany(server, slug, 20 * RUNS_PER_EXPORT);
  const warmRun = await send(server, path, exportBodies(warm, e), headers, clients, traceSuccess);
  count(slug, warm.length, (warmRun.sent - warmRun.ok) * RUNS_PER_EXPORT);
  const rate = (warmRun.ok * RUNS_PER_EXPORT) / warmRun.seconds;
  // Twice the warm-up's rate and at least 40 exports: the time, not the pool, should end the run.
  const exports = Math.max(40, Math.ceil((rate * seconds * 2) / RUNS_PER_EXPORT));
  process.stderr.write(
    `traces ${e.name}: warm-up ${rate.toFixed(0)} runs/s; assigning ${exports * RUNS_PER_EXPORT} runs for ${seconds} s\n`,
  );
  const pool = await assignMany(server, slug, exports * RUNS_PER_EXPORT);
  const bodies = exportBodies(pool, e);
  await settle([server]);
  const before = await spanCounts(server);
  const cpu = server.cpuMs();
  const threads = threadsMs(server);
  const r = await send(
    server,
    path,
    bodies,
    headers,
    clients,
    traceSuccess,
    performance.now() + seconds * 1000,
  );
  const cpuMs = server.cpuMs() - cpu;
  const threadCores = busiest(threads, threadsMs(server), r.seconds);
  const after = await spanCounts(server);
  count(slug, r.sent * RUNS_PER_EXPORT, (r.sent - r.ok) * RUNS_PER_EXPORT);
  const diff = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
  const runs = r.ok * RUNS_PER_EXPORT;
  return {
    encoding: e.name,
    clients,
    seconds: r.seconds,
    exports: r.ok,
    bodyBytes: Math.round(bodies.reduce((a, b) => a + b.length, 0) / bodies.length),
    spansPerSecond: (runs * SPANS_PER_RUN) / r.seconds,
    runsPerSecond: runs / r.seconds,
    accepted: diff('accepted'),
    joined: diff('joined'),
    p50Ms: quantile(r.latencies, 0.5),
    p99Ms: quantile(r.latencies, 0.99),
    serverCores: cpuMs / 1000 / r.seconds,
    serverUsPerRun: (cpuMs * 1000) / Math.max(1, runs),
    threadCores,
    peakRssMb: Math.round(server.peakRssMb()),
    ranOut: r.sent === bodies.length,
    failures: [...new Set(r.failures)].slice(0, 3),
  };
}

/**
 * Sends `bodies`, each once, with autocannon from `connections` connections (as bench/path-cost.ts measures
 * its paths); answers the bodies answered with a full success, and the first failure.
 */
async function cannon(
  server: Server,
  path: string,
  bodies: Buffer[],
  headers: Record<string, string>,
  connections: number,
  success: (status: number, body: Buffer) => string | null,
): Promise<{ ok: number; failure: string | null }> {
  let next = 0;
  let ok = 0;
  let failure: string | null = null;
  const options = {
    url: server.url + path,
    method: 'POST',
    connections,
    amount: bodies.length,
    headers: { ...headers, 'x-api-key': API_KEY },
    requests: [
      {
        // Each request its own body (its own runs and assignment ids), in order.
        setupRequest: (req: Record<string, unknown>) => ({ ...req, body: bodies[next++ % bodies.length] }),
        onResponse: (status: number, body: string) => {
          const f = success(status, Buffer.from(body));
          if (f === null) ok++;
          else failure ??= f;
        },
      },
    ],
  };
  const r = await autocannon(options);
  if (r.errors > 0 || r.timeouts > 0) failure ??= `${r.errors} errors, ${r.timeouts} timeouts`;
  return { ok, failure };
}

/** Server CPU of one round (ms): settled before and after, so what the round left to commit counts. */
async function cpuRound(
  server: Server,
  path: string,
  bodies: Buffer[],
  headers: Record<string, string>,
  connections: number,
  success: (status: number, body: Buffer) => string | null,
): Promise<{ ms: number; ok: number }> {
  await settle([server]);
  const before = server.cpuMs();
  const r = await cannon(server, path, bodies, headers, connections, success);
  await settle([server]);
  const ms = server.cpuMs() - before;
  if (r.failure !== null || r.ok !== bodies.length) {
    throw new Error(
      `${server.name} ${path}: ${bodies.length - r.ok} of ${bodies.length} failed: ${r.failure}`,
    );
  }
  return { ms, ok: r.ok };
}

interface CostPath {
  name: string;
  slug: string;
  connections: number;
  runsPerRequest: number;
  /** The bodies of each round (the first warms up and is not counted). */
  rounds: Buffer[][];
  path: string;
  headers: Record<string, string>;
  success: (status: number, body: Buffer) => string | null;
  /** The bare baseline's body of the same size, when the baseline can read it (JSON). */
  bare?: Buffer;
}

function logBody(run: Assigned, metrics: Record<string, unknown>): Buffer {
  return Buffer.from(
    JSON.stringify({
      variantKey: run.variant,
      userId: run.userId,
      assignmentId: run.assignmentId,
      metrics,
    }),
  );
}

async function costs(
  server: Server,
  baseline: Server,
  options: TraceOptions,
  logMetrics: Record<string, unknown>,
): Promise<CostFigures[]> {
  // The first round warms every path up (JIT, SQLite's cache) and is not counted.
  const rounds = options.rounds + 1;
  const paths: CostPath[] = [];
  process.stderr.write(
    `traces cost: assigning ${(ENCODINGS.length + 1) * rounds * options.runsPerRound} runs\n`,
  );
  const logSlug = 'traces-cost-log';
  const logRounds: Buffer[][] = [];
  for (let i = 0; i < rounds; i++) {
    logRounds.push(
      (await assignMany(server, logSlug, options.runsPerRound)).map((r) => logBody(r, logMetrics)),
    );
  }
  paths.push({
    name: `log (${Object.keys(logMetrics).length} metrics, its own assignmentId)`,
    slug: logSlug,
    connections: LOG_CONNECTIONS,
    runsPerRequest: 1,
    rounds: logRounds,
    path: `/experiment/${logSlug}/log`,
    headers: { 'content-type': 'application/json' },
    success: logSuccess,
    bare: logRounds[1]![0],
  });
  for (const e of ENCODINGS) {
    const slug = slugOf('cost', e);
    const bodies: Buffer[][] = [];
    for (let i = 0; i < rounds; i++)
      bodies.push(exportBodies(await assignMany(server, slug, options.runsPerRound), e));
    paths.push({
      name: `/v1/traces ${e.name}`,
      slug,
      connections: CLIENTS,
      runsPerRequest: RUNS_PER_EXPORT,
      rounds: bodies,
      path: '/v1/traces',
      headers: exportHeaders(e),
      success: traceSuccess,
      ...(e.json && !e.gzip ? { bare: bodies[1]![0] } : {}),
    });
  }
  const samples = new Map<string, number[]>(paths.map((p) => [p.name, []]));
  const bare = new Map<string, number[]>(paths.filter((p) => p.bare).map((p) => [p.name, []]));
  // The bare server warms up too: its first thousands of requests cost it several times the later ones.
  for (const p of paths.filter((x) => x.bare)) {
    const warm = Array.from({ length: p.runsPerRequest > 1 ? 200 : 10_000 }, () => p.bare!);
    await cannon(baseline, '/', warm, { 'content-type': 'application/json' }, p.connections, logSuccess);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? paths : [...paths].reverse();
    for (const p of order) {
      const bodies = p.rounds[round]!;
      const runs = bodies.length * p.runsPerRequest;
      // Counted before it is sent: a round that fails stops the part, and what it committed is not checked.
      count(p.slug, runs, 0);
      const { ms } = await cpuRound(server, p.path, bodies, p.headers, p.connections, p.success);
      if (round > 0) samples.get(p.name)!.push((ms * 1000) / runs);
      if (p.bare) {
        // The bare server reads and parses the same body, as many times (it answers every path at `/`).
        const same = bodies.map(() => p.bare!);
        const b = await cpuRound(
          baseline,
          '/',
          same,
          { 'content-type': 'application/json' },
          p.connections,
          logSuccess,
        );
        if (round > 0) bare.get(p.name)!.push((b.ms * 1000) / runs);
      }
      if (round > 0) {
        process.stderr.write(
          `traces cost round ${round}: ${p.name} ${((ms * 1000) / runs).toFixed(1)} µs a run\n`,
        );
      }
    }
  }
  return paths.map((p) => {
    const us = samples.get(p.name)!;
    const b = bare.get(p.name);
    return {
      path: p.name,
      connections: p.connections,
      runsPerRequest: p.runsPerRequest,
      usPerRun: median(us),
      rounds: us,
      ...(b ? { bareUsPerRun: median(b) } : {}),
    };
  });
}

interface ListedResult {
  assignmentId: string | null;
  feedback: Record<string, unknown>;
}

/** Every result of `slug` read back through the API, checked against the runs sent there. */
async function check(server: Server, slug: string, expected: Record<string, unknown>): Promise<CheckFigures> {
  const sent = sentTo.get(slug) ?? { runs: 0, failed: 0 };
  let results = 0;
  let withRunFeedback = 0;
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = (await api(server, 'GET', `/experiment/${slug}/results?limit=1000${after}`)) as {
      results: ListedResult[];
      nextCursor: string | null;
    };
    for (const r of page.results) {
      results++;
      if (r.assignmentId !== null) ids.add(r.assignmentId);
      if (Object.entries(expected).every(([k, v]) => r.feedback[k] === v)) withRunFeedback++;
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  const traced = !slug.endsWith('-log');
  return {
    slug,
    runsSent: sent.runs,
    results,
    distinctAssignments: ids.size,
    withRunFeedback: traced ? withRunFeedback : results,
    runsFailed: sent.failed,
    ok:
      results === sent.runs &&
      ids.size === sent.runs &&
      (!traced || withRunFeedback === results) &&
      sent.failed === 0,
  };
}

export async function benchTraces(options: TraceOptions = TRACE_OPTIONS): Promise<TraceFigures> {
  const started = performance.now();
  const loadStart = loadavg();
  sentTo.clear();
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-bench-traces-'));
  const prices = join(dir, 'prices.json');
  writeFileSync(prices, JSON.stringify(PRICES));
  const servers: Server[] = [];
  try {
    const baseline = await startBaseline();
    servers.push(baseline);
    const server = await startAgentsplit(TARGET, {
      API_KEY,
      DATABASE_URL: `sqlite:${join(dir, 'traces.db')}`,
      DATA_DIR: dir,
      TRACE_PRICES: prices,
    });
    servers.push(server);
    const slugs = [
      ...ENCODINGS.flatMap((e) => [slugOf('rate', e), slugOf('cost', e)]),
      'traces-cost-log',
      'traces-probe',
    ];
    for (const slug of slugs) {
      await api(server, 'POST', '/experiments', { slug, status: 'running', variants: VARIANTS });
    }
    // One run, read back: the metrics a traced run writes, which the log bodies then carry.
    const [probe] = await assignMany(server, 'traces-probe', 1);
    const probeBody = encode(exportSpans([probe!])[0]!, PROTOBUF);
    const answer = await post(server, '/v1/traces', probeBody, exportHeaders(PROTOBUF));
    const failed = traceSuccess(answer.status, answer.body);
    if (failed !== null) throw new Error(`the probe export failed: ${failed}`);
    count('traces-probe', 1, 0);
    const probeResult = (
      (await api(server, 'GET', '/experiment/traces-probe/results?limit=10')) as { results: ListedResult[] }
    ).results[0];
    if (probeResult === undefined) throw new Error('the probe run made no result');
    const logMetrics = probeResult.feedback;
    const [a, b] = AGENT_CALLS;
    const expected = {
      input_tokens: a!.input + b!.input,
      output_tokens: a!.output + b!.output,
      tool_calls: 1,
      tool_errors: 1,
      error: 0,
      latency_ms: 800,
      cost_usd: logMetrics.cost_usd,
    };
    for (const [k, v] of Object.entries(expected)) {
      if (logMetrics[k] !== v || v === undefined) {
        throw new Error(`the probe run's ${k} is ${JSON.stringify(logMetrics[k])}, not ${v}`);
      }
    }
    const runs = exportSpans(await assignMany(server, 'traces-probe', RUNS_PER_EXPORT));
    const exportBytes = Object.fromEntries(ENCODINGS.map((e) => [e.name, encode(runs[0]!, e).length]));

    const rates: ThroughputFigures[] = [];
    for (const { encoding, clients } of options.throughput) {
      const e = ENCODINGS.find((x) => x.name === encoding);
      if (e === undefined) throw new Error(`no encoding '${encoding}'`);
      const t = await throughput(server, e, options.seconds, clients);
      process.stderr.write(
        `traces ${e.name}, ${clients} client(s): ${t.spansPerSecond.toFixed(0)} spans/s, ${t.runsPerSecond.toFixed(0)} runs/s over ${t.seconds.toFixed(1)} s` +
          `${t.failures.length ? ` (failures: ${t.failures.join('; ')})` : ''}\n`,
      );
      rates.push(t);
    }
    const costFigures = await costs(server, baseline, options, logMetrics);
    const peakRssLoadMb = Math.round(server.peakRssMb());
    await settle([server]);
    process.stderr.write('traces: reading every result back through the API\n');
    const checks: CheckFigures[] = [];
    for (const slug of slugs) {
      if (!sentTo.has(slug)) continue;
      checks.push(await check(server, slug, slug === 'traces-cost-log' ? {} : expected));
    }
    return {
      options,
      exportBytes,
      logMetrics,
      throughput: rates,
      costs: costFigures,
      checks,
      peakRssLoadMb,
      peakRssMb: Math.round(server.peakRssMb()),
      load: { start: loadStart, end: loadavg(), cores: availableParallelism() },
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    keepAlive.destroy();
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether every experiment's results matched the runs sent, with no failed export. */
export function tracesOk(f: TraceFigures): boolean {
  return f.checks.every((c) => c.ok) && f.throughput.every((t) => t.failures.length === 0);
}

export function traceLines(f: TraceFigures): string[] {
  const n = (x: number, digits = 0) =>
    x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const lines = [
    '',
    `traces in (issue 39): POST /v1/traces, exports of ${RUNS_PER_EXPORT} runs × ${SPANS_PER_RUN} spans (invoke_agent with ` +
      `the run's assignment id, 2 chat with gen_ai.usage, 1 execute_tool), each run its own trace; bodies ` +
      `${Object.entries(f.exportBytes)
        .map(([k, v]) => `${k} ${n(v / 1024, 1)} KB`)
        .join(', ')}; agentsplit as \`npm start\` runs it, SQLite`,
    '',
    '| encoding | clients | s | exports/s | spans/s accepted | runs/s joined | server counted (accepted / joined) | p50 ms | p99 ms | server cores | server µs a run | failed |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const t of f.throughput) {
    const spans = t.exports * RUNS_PER_EXPORT * SPANS_PER_RUN;
    const counted = `${t.accepted} / ${t.joined}${t.accepted === spans && t.joined === spans ? '' : ` (answered: ${spans})`}`;
    lines.push(
      `| ${t.encoding} | ${t.clients} | ${t.seconds.toFixed(1)} | ${(t.exports / t.seconds).toFixed(1)} | ` +
        `${n(t.spansPerSecond)} | ${n(t.runsPerSecond)} | ${counted} | ${t.p50Ms.toFixed(0)} | ${t.p99Ms.toFixed(0)} | ` +
        `${t.serverCores.toFixed(2)} | ${t.serverUsPerRun.toFixed(0)} | ${t.failures.length ? t.failures.join('; ') : '0'}` +
        `${t.ranOut ? ' (the assigned runs ran out before the time)' : ''} |`,
    );
  }
  lines.push('');
  for (const t of f.throughput) {
    lines.push(
      `${t.encoding}, ${t.clients} client${t.clients === 1 ? '' : 's'}: server threads (cores) ${t.threadCores}; peak RSS so far ${t.peakRssMb} MB`,
    );
  }
  const log = f.costs.find((c) => c.runsPerRequest === 1)!;
  lines.push(
    '',
    `server CPU (all threads, /proc), median of ${f.options.rounds} alternating rounds of ${n(f.options.runsPerRound)} runs ` +
      `[each round], µs; log carries the run's metrics (${Object.keys(f.logMetrics).join(', ')}):`,
    '',
    '| path | conns | µs a run [rounds] | a run × one log | µs a span | a span × one log | bare node:http, same body, µs a run |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const c of f.costs) {
    const traced = c.runsPerRequest > 1;
    lines.push(
      `| ${c.path} | ${c.connections} | ${c.usPerRun.toFixed(1)} [${c.rounds.map((r) => r.toFixed(1)).join(', ')}] | ` +
        `${(c.usPerRun / log.usPerRun).toFixed(2)}× | ${traced ? (c.usPerRun / SPANS_PER_RUN).toFixed(1) : ''} | ` +
        `${traced ? `${(c.usPerRun / SPANS_PER_RUN / log.usPerRun).toFixed(2)}×` : ''} | ` +
        `${c.bareUsPerRun === undefined ? '' : c.bareUsPerRun.toFixed(1)} |`,
    );
  }
  const proto = f.costs.find((c) => c.path === '/v1/traces protobuf')!;
  lines.push(
    '',
    `one run via /v1/traces (protobuf) costs ${(proto.usPerRun / log.usPerRun).toFixed(2)}× one log ` +
      `(${proto.usPerRun.toFixed(1)} vs ${log.usPerRun.toFixed(1)} µs); per span ${(proto.usPerRun / SPANS_PER_RUN / log.usPerRun).toFixed(2)}× one log ` +
      `(${(proto.usPerRun / SPANS_PER_RUN).toFixed(1)} µs)`,
    '',
    'results read back through the API (GET /experiment/:slug/results), per experiment:',
    '',
    "| experiment | runs sent | results | distinct assignment ids | with the run's feedback | runs of failed exports | |",
    '|---|---:|---:|---:|---:|---:|:---:|',
  );
  for (const c of f.checks) {
    lines.push(
      `| ${c.slug} | ${c.runsSent} | ${c.results} | ${c.distinctAssignments} | ${c.withRunFeedback} | ${c.runsFailed} | ${c.ok ? 'ok' : 'MISMATCH'} |`,
    );
  }
  lines.push(
    '',
    `peak RSS of the agentsplit server ${f.peakRssLoadMb} MB under the exports and logs, ${f.peakRssMb} MB after ` +
      `the results were read back (pages of 1,000); the traces part took ${f.seconds.toFixed(0)} s on ` +
      `${f.load.cores} cores, load average (1/5/15 min) at its start ${f.load.start.map((x) => x.toFixed(2)).join('/')}, ` +
      `at its end ${f.load.end.map((x) => x.toFixed(2)).join('/')} (the part itself adds up to about 2)`,
  );
  return lines;
}
