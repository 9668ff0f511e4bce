// `npm run bench`: agentsplit as `npm start` runs it (its flags, and no LOG_LEVEL: the default level,
// info) against a bare node:http baseline measured in the same run, printed as ratios (absolute numbers
// drift ±20% on shared machines; ratios do not). Before any load: the second `npm start` (nothing
// changed) to a served /healthz. Then, interleaved: throughput at 64 and 256 connections (the issue's
// figures are wrk's at 64), the same SQLite service started with LOG_LEVEL=warn for assign and log
// (reported beside the default level), assign's p99 at half its maximum rate against the baseline's at
// that rate, analysis over 1M results, /healthz while four exports of them stream (bench/export-load.ts)
// and peak RSS; the targets table of issue 13 last, and JSON in
// bench/results/. `--full` for the long run (5 × 10 s), `--generator=autocannon` where wrk is missing;
// `--clients` runs the client libraries' benches instead (bench/clients.ts). Parts run alone: `--search`
// (issue 36), `--rollout-aa` (issue 38), `--traces` (issue 39: /v1/traces ingestion and its cost against log).

import { execFile, execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  createTestDatabase,
  PG_ADMIN_URL,
  postgresReachable,
  type TestDatabase,
} from '../test/helpers/postgres.js';
import { type AnalysisLoadSample, healthzDuringAnalyses } from './analysis-load.js';
import { type ExportLoadSample, healthzDuringExports } from './export-load.js';
import { loadResults } from './load.js';
import { type PathCost, pathCostLines, pathCosts } from './path-cost.js';
import { type PgLogRow, pgLog, pgLogLines } from './pg-log.js';
import { benchSearch, type SearchFigures, searchLines } from './results-search.js';
import { benchRolloutTrials, type RolloutTrialFigures, rolloutTrialLines } from './rollout-aa.js';
import {
  buildRevision,
  HAS_TASKSET,
  PINNED,
  pinSelf,
  type Server,
  settle,
  startAgentsplit,
  startBaseline,
} from './servers.js';
import { measureStartup, type StartupResult } from './startup.js';
import { rolloutCost, type TargetingCost, targetingCost } from './targeting-cost.js';
import { benchTraces, type TraceFigures, traceLines, tracesOk } from './traces.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

const FULL = process.argv.includes('--full');
/** `--before=<git rev>`: that revision built and measured beside this one (issue 37). */
const BEFORE = process.argv.find((a) => a.startsWith('--before='))?.slice('--before='.length);
/** The issue's figures were measured with wrk at 64 connections; 256 is the heavier second point. */
const ISSUE_CONNECTIONS = 64;
/** Measured `npm start`s after the first (unmeasured) one. */
const STARTUP_RUNS = 3;
/** Exports streaming at once in the /healthz-during-exports figure (as test/api-export-load.test.ts). */
const EXPORTS = 4;
/** Clients analysing a wide experiment at once in the /healthz-during-analyses figure (issue 34's campaign: 8). */
const ANALYSES = 8;
const CONFIG = FULL
  ? {
      duration: 10,
      reps: 5,
      connections: [ISSUE_CONNECTIONS, 256],
      analysisResults: 1_000_000,
      pgAnalysis: true,
      fixedRateReps: 5,
      fixedRateSeconds: 10,
      fixedRatePostgres: true,
      exportSeconds: 20,
    }
  : {
      duration: 2,
      reps: 2,
      connections: [ISSUE_CONNECTIONS, 256],
      analysisResults: 1_000_000,
      pgAnalysis: false,
      fixedRateReps: 3,
      fixedRateSeconds: 3,
      fixedRatePostgres: false,
      exportSeconds: 8,
    };
const API_KEY = 'bench-key-0123456789abcdef';
const headers = { 'content-type': 'application/json', 'x-api-key': API_KEY };

const ASSIGN_BODY = JSON.stringify({
  userId: 'user-[<id>]',
  context: { plan: 'pro', locale: 'en-US', channel: 'web', session: 'sess-[<id>]' },
});
/** An OFREP single evaluation of the same user and context as ASSIGN_BODY (targetingKey is the userId). */
const OFREP_BODY = JSON.stringify({
  context: {
    targetingKey: 'user-[<id>]',
    plan: 'pro',
    locale: 'en-US',
    channel: 'web',
    session: 'sess-[<id>]',
  },
});
const LOG_RESULT = {
  variantKey: 'B',
  userId: 'user-42',
  input: { question: 'Where is my order #12345? It was supposed to arrive yesterday.', lang: 'en' },
  output: {
    answer: 'Your order shipped this morning and should arrive tomorrow before noon.',
    tool: 'orders',
  },
  metrics: { latency_ms: 812, tokens: 153, cost_usd: 0.0021, rating: 5, resolved: true },
  context: { model: 'gpt-x', temperature: 0.2, session: 'abc-123' },
};
const LOG_BODY = JSON.stringify(LOG_RESULT);
const LOGS_BODY = JSON.stringify({ results: Array.from({ length: 100 }, () => LOG_RESULT) });

interface Scenario {
  name: string;
  path: string;
  body: string;
  /** Results per request (for logs). */
  perRequest?: number;
}

const BASELINE: Scenario[] = [
  { name: 'baseline (assign-sized body)', path: '/', body: ASSIGN_BODY },
  { name: 'baseline (log-sized body)', path: '/', body: LOG_BODY },
];
const AGENTSPLIT: Scenario[] = [
  { name: 'assign (random)', path: '/experiment/bench-random/assign', body: ASSIGN_BODY },
  { name: 'assign (sticky)', path: '/experiment/bench-sticky/assign', body: ASSIGN_BODY },
  { name: 'OFREP single (sticky)', path: '/ofrep/v1/evaluate/flags/bench-sticky', body: OFREP_BODY },
  { name: 'log', path: '/experiment/bench-random/log', body: LOG_BODY },
  { name: 'logs (100 per request)', path: '/experiment/bench-random/logs', body: LOGS_BODY, perRequest: 100 },
];
/** What the LOG_LEVEL=warn target runs: the two figures compared with the default level. */
const WARN_SCENARIOS = AGENTSPLIT.filter((s) => s.name === 'assign (random)' || s.name === 'log');

const SQLITE = 'agentsplit SQLite';
const SQLITE_WARN = 'agentsplit SQLite LOG_LEVEL=warn';
const POSTGRES = 'agentsplit PostgreSQL';
const SQLITE_BEFORE = 'agentsplit SQLite (before)';
const POSTGRES_BEFORE = 'agentsplit PostgreSQL (before)';
/** What the `--before` targets run in the throughput table: the paths issue 37 measures. */
const BEFORE_SCENARIOS = AGENTSPLIT.filter((s) => s.name !== 'OFREP single (sticky)');
/** The paths whose server CPU per request issue 37 reports. */
const COST_PATHS = [
  {
    name: 'assign, random, with context',
    path: '/experiment/bench-random/assign',
    body: ASSIGN_BODY,
    connections: 64,
  },
  {
    name: 'assign, no context',
    path: '/experiment/bench-random/assign',
    body: '{"userId":"user-[<id>]"}',
    connections: 64,
  },
  {
    name: 'assign, sticky, all new users',
    path: '/experiment/bench-sticky/assign',
    body: ASSIGN_BODY,
    connections: 64,
  },
  { name: 'log, 16 connections', path: '/experiment/bench-random/log', body: LOG_BODY, connections: 16 },
];

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/**
 * wrk (C, event-driven) where installed: it saturates the baseline where autocannon (Node) cannot.
 * `--generator=autocannon` forces autocannon.
 */
const HAS_WRK =
  !process.argv.includes('--generator=autocannon') &&
  (() => {
    try {
      execFileSync('wrk', ['--version'], { stdio: 'ignore' });
      return true;
    } catch (err) {
      // wrk prints its version and exits 1; only a missing binary is a missing wrk.
      return (err as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  })();
const GENERATOR = HAS_WRK ? 'wrk' : 'autocannon';

function onCore1(cmd: string, args: string[]): [string, string[]] {
  return PINNED ? ['taskset', ['-c', '1', cmd, ...args]] : [cmd, args];
}

/** Runs a bench/ script (TypeScript) with `options` in a fresh process on core 1; its last line is JSON. */
async function runOnCore1<T>(script: string, options: object): Promise<T> {
  const [cmd, argv] = onCore1(process.execPath, [
    '--import',
    'tsx',
    join(here, script),
    JSON.stringify(options),
  ]);
  const { stdout } = await run(cmd, argv, { cwd: join(here, '..'), maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as T;
}

/** Runs the load generator in a fresh process on core 1 (the servers run on core 0). */
async function drive(
  server: Server,
  s: Scenario,
  connections: number,
  duration = CONFIG.duration,
): Promise<Sample> {
  if (HAS_WRK) {
    const [cmd, argv] = onCore1('wrk', [
      '-t1',
      `-c${connections}`,
      `-d${duration}s`,
      '--timeout',
      '10s',
      '-s',
      join(here, 'wrk.lua'),
      server.url + s.path,
    ]);
    const { stdout } = await run(cmd, argv, {
      env: { ...process.env, BENCH_BODY: s.body, BENCH_KEY: API_KEY },
      maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Sample;
  }
  const options = {
    url: server.url + s.path,
    method: 'POST',
    headers,
    body: s.body,
    connections,
    duration,
    idReplacement: true,
  };
  return runOnCore1<Sample>('load-generator.ts', options);
}

interface FixedRateSample {
  rate: number;
  count: number;
  failures: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** The p99 of the requests whose time in flight touched none of the generator's own stalls. */
  clean: { count: number; p99: number };
  /** Turns of the generator's loop that came over 1 ms late: its own pauses, not the server's. */
  stalls: { count: number; totalMs: number; maxMs: number };
  /** Time the hypervisor ran something else on each core during the run (ms), where /proc/stat says. */
  stealMs?: number[];
}

interface FixedRateRow {
  rate: number;
  samples: FixedRateSample[];
  baseline: FixedRateSample[];
}

/**
 * Steal time of cores 0 and 1 so far (ms): time a virtual machine's core was ready but the host ran
 * something else. Null where /proc/stat does not exist.
 */
function stealMs(): number[] | null {
  if (!existsSync('/proc/stat')) return null;
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  return ['cpu0', 'cpu1'].map((cpu) => {
    const fields = lines
      .find((l) => l.startsWith(`${cpu} `))
      ?.trim()
      .split(/\s+/);
    // user nice system idle iowait irq softirq steal: steal is the 8th number, in USER_HZ (100/s).
    return fields && fields.length > 8 ? Number(fields[8]) * 10 : Number.NaN;
  });
}

/** A latency in ms, or n/a when a run recorded none (a machine too loaded to send at the rate). */
function ms(v: number | null | undefined): string {
  return typeof v === 'number' ? v.toFixed(2) : 'n/a';
}

function describeFixed(x: FixedRateSample): string {
  const steal = x.stealMs ? `, steal ${x.stealMs.map((t) => t.toFixed(0)).join('/')} ms` : '';
  return (
    `p99 ${ms(x.p99)} ms (clean ${ms(x.clean?.p99)}; generator stalled ${x.stalls.count}× ` +
    `${x.stalls.totalMs.toFixed(0)} ms${steal})`
  );
}

/** Seconds each fixed-rate run sends before it starts recording. */
const FIXED_RATE_WARMUP_SECONDS = 2;

/** Open-loop fixed rate (bench/constant-rate.ts) in a fresh process on core 1. */
async function atFixedRate(server: Server, s: Scenario, rate: number): Promise<FixedRateSample> {
  const options = {
    url: server.url + s.path,
    body: s.body.replaceAll('[<id>]', '1'),
    headers,
    rate,
    seconds: CONFIG.fixedRateSeconds,
    warmupSeconds: FIXED_RATE_WARMUP_SECONDS,
    connections: ISSUE_CONNECTIONS,
  };
  const before = stealMs();
  const sample = await runOnCore1<FixedRateSample>('constant-rate.ts', options);
  const after = stealMs();
  return before && after ? { ...sample, stealMs: after.map((t, i) => t - before[i]!) } : sample;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function api(server: Server, method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const BENCH_VARIANTS = [
  { key: 'A', payload: { prompt: 'You are a helpful assistant.', model: 'small' }, trafficPercent: 34 },
  { key: 'B', payload: { prompt: 'You are a concise assistant.', model: 'small' }, trafficPercent: 33 },
  { key: 'C', payload: { prompt: 'You are a friendly assistant.', model: 'large' }, trafficPercent: 33 },
];

async function createExperiments(server: Server): Promise<void> {
  const variants = BENCH_VARIANTS;
  await api(server, 'POST', '/experiments', { slug: 'bench-random', status: 'running', variants });
  await api(server, 'POST', '/experiments', {
    slug: 'bench-sticky',
    status: 'running',
    assignment: 'sticky',
    variants,
  });
}

/**
 * The analysis of the 1M-result experiment: computed (50 distinct questions, alphas the cache has not seen)
 * and cached (the same question again; ADR 0036).
 */
async function timeAnalysis(server: Server, slug: string): Promise<AnalysisTimes> {
  await api(server, 'GET', `/experiment/${slug}/analysis`); // warm: a worker started
  const timed = async (path: (i: number) => string) => {
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await api(server, 'GET', path(i));
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { median: median(times), p99: times[Math.ceil(0.99 * times.length) - 1]!, n: times.length };
  };
  const method = (i: number) => ['frequentist', 'bayesian', 'sequential'][i % 3];
  return {
    ...(await timed(
      (i) => `/experiment/${slug}/analysis?method=${method(i)}&alpha=${(0.04 + i / 10_000).toFixed(4)}`,
    )),
    cached: await timed(() => `/experiment/${slug}/analysis`),
  };
}

interface AnalysisTimes {
  median: number;
  p99: number;
  n: number;
  cached: { median: number; p99: number; n: number };
}

interface Row {
  target: string;
  scenario: string;
  connections: number;
  samples: Sample[];
  perRequest?: number;
}

async function main(): Promise<void> {
  const started = performance.now();
  const extra: Record<string, unknown> = { loadAverageAtStart: loadavg() };
  // Before any load, and before this process pins itself (its children would inherit core 1 only):
  // `npm start` as a user runs it, on the whole machine.
  process.stderr.write(`startup: 1 + ${STARTUP_RUNS} × npm start to a served /healthz\n`);
  const startup = await measureStartup(STARTUP_RUNS);
  extra.startup = startup;
  process.stderr.write(
    `startup: first ${startup.firstSeconds.toFixed(2)} s, then ${startup.seconds.map((s) => s.toFixed(2)).join(', ')} s` +
      `${startup.discarded ? ` (${startup.discarded} discarded: the sources changed and dist/ was rebuilt)` : ''}\n`,
  );

  pinSelf(1);
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-bench-'));
  const rows: Row[] = [];
  const servers: Server[] = [];
  let pgDatabase: TestDatabase | undefined;
  let pgBeforeDatabase: TestDatabase | undefined;
  let beforeBuild: { root: string; remove(): void } | undefined;
  try {
    // 1M results for the analysis figure, written through the store before the server owns the file.
    const sqlitePath = join(dir, 'bench.db');
    const load = await loadResults({ kind: 'sqlite', path: sqlitePath }, CONFIG.analysisResults);
    extra.sqliteLoad = load;
    process.stderr.write(
      `loaded ${CONFIG.analysisResults} results into SQLite in ${load.seconds.toFixed(1)} s\n`,
    );
    // The LOG_LEVEL=warn server gets a copy, so it differs from the default-level one in its level alone.
    const warnDir = join(dir, 'warn');
    mkdirSync(warnDir);
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(sqlitePath + suffix))
        copyFileSync(sqlitePath + suffix, join(warnDir, `bench.db${suffix}`));

    const baseline = await startBaseline();
    // No LOG_LEVEL: the default level, as `npm start` runs.
    const sqlite = await startAgentsplit(SQLITE, {
      API_KEY,
      DATABASE_URL: `sqlite:${sqlitePath}`,
      DATA_DIR: dir,
    });
    servers.push(baseline, sqlite);
    await createExperiments(sqlite);
    // Default-level targets first (they are reported first), the LOG_LEVEL=warn one last.
    const targets: Array<[Server, Scenario[]]> = [
      [baseline, BASELINE],
      [sqlite, AGENTSPLIT],
    ];
    let pg: Server | undefined;
    if (await postgresReachable()) {
      pgDatabase = await createTestDatabase('bench');
      if (CONFIG.pgAnalysis) {
        extra.postgresLoad = await loadResults(
          { kind: 'postgres', url: pgDatabase.url },
          CONFIG.analysisResults,
        );
      }
      pg = await startAgentsplit(POSTGRES, {
        API_KEY,
        DATABASE_URL: pgDatabase.url,
        DATA_DIR: dir,
      });
      servers.push(pg);
      await createExperiments(pg);
      targets.push([pg, AGENTSPLIT]);
    }
    const sqliteWarn = await startAgentsplit(SQLITE_WARN, {
      API_KEY,
      DATABASE_URL: `sqlite:${join(warnDir, 'bench.db')}`,
      DATA_DIR: warnDir,
      LOG_LEVEL: 'warn',
    });
    servers.push(sqliteWarn);
    await createExperiments(sqliteWarn);
    targets.push([sqliteWarn, WARN_SCENARIOS]);
    let sqliteBefore: Server | undefined;
    let pgBefore: Server | undefined;
    if (BEFORE !== undefined) {
      process.stderr.write(`building ${BEFORE} for the before targets\n`);
      beforeBuild = buildRevision(BEFORE);
      const beforeDir = join(dir, 'before');
      mkdirSync(beforeDir);
      sqliteBefore = await startAgentsplit(
        SQLITE_BEFORE,
        { API_KEY, DATABASE_URL: `sqlite:${join(beforeDir, 'before.db')}`, DATA_DIR: beforeDir },
        beforeBuild.root,
      );
      servers.push(sqliteBefore);
      await createExperiments(sqliteBefore);
      targets.push([sqliteBefore, BEFORE_SCENARIOS]);
      if (pg) {
        pgBeforeDatabase = await createTestDatabase('benchbefore');
        pgBefore = await startAgentsplit(
          POSTGRES_BEFORE,
          { API_KEY, DATABASE_URL: pgBeforeDatabase.url, DATA_DIR: beforeDir },
          beforeBuild.root,
        );
        servers.push(pgBefore);
        await createExperiments(pgBefore);
        targets.push([pgBefore, BEFORE_SCENARIOS.filter((s) => s.name.startsWith('log'))]);
      }
    }

    // Warm up every target, then interleave: each repetition runs every scenario once.
    for (const [server, scenarios] of targets) {
      for (const s of scenarios) await drive(server, s, ISSUE_CONNECTIONS, 1).catch(() => undefined);
    }
    for (let rep = 0; rep < CONFIG.reps; rep++) {
      for (const connections of CONFIG.connections) {
        for (const [server, scenarios] of targets) {
          for (const s of scenarios) {
            await settle(servers);
            const sample = await drive(server, s, connections);
            let row = rows.find(
              (r) => r.target === server.name && r.scenario === s.name && r.connections === connections,
            );
            if (!row) {
              row = {
                target: server.name,
                scenario: s.name,
                connections,
                samples: [],
                perRequest: s.perRequest,
              };
              rows.push(row);
            }
            row.samples.push(sample);
            process.stderr.write(
              `rep ${rep + 1} ${server.name} ${s.name} c=${connections}: ${sample.rps.toFixed(0)} req/s p99 ${sample.p99} ms` +
                ` (peak RSS so far ${server.peakRssMb().toFixed(0)} MB)` +
                `${sample.non2xx || sample.errors ? ` (non-2xx ${sample.non2xx}, errors ${sample.errors})` : ''}\n`,
            );
          }
        }
      }
    }

    // p99 of assign at a fixed rate of half the measured maximum (64 connections), open loop, repeated
    // and interleaved with the baseline at the same rate (the floor this generator and machine show).
    const fixed: Record<string, FixedRateRow> = {};
    for (const server of [sqlite, ...(CONFIG.fixedRatePostgres && pg ? [pg] : [])]) {
      const max = median(
        rows
          .find(
            (r) =>
              r.target === server.name &&
              r.scenario === 'assign (random)' &&
              r.connections === ISSUE_CONNECTIONS,
          )!
          .samples.map((s) => s.rps),
      );
      const rate = Math.round(max / 2);
      const row: FixedRateRow = { rate, samples: [], baseline: [] };
      for (let rep = 0; rep < CONFIG.fixedRateReps; rep++) {
        await settle(servers);
        row.samples.push(await atFixedRate(server, AGENTSPLIT[0]!, rate));
        await settle(servers);
        row.baseline.push(await atFixedRate(baseline, BASELINE[0]!, rate));
        process.stderr.write(
          `fixed rate ${rate} req/s rep ${rep + 1}: ${server.name} ${describeFixed(row.samples.at(-1)!)}; ` +
            `baseline ${describeFixed(row.baseline.at(-1)!)}\n`,
        );
      }
      fixed[server.name] = row;
    }
    extra.assignAtHalfMax = fixed;
    process.stderr.write('targeting: server CPU per assign, with a 5-clause condition and without\n');
    extra.targetingCost = await targetingCost(sqlite, API_KEY, 'bench-sticky', BENCH_VARIANTS, ASSIGN_BODY);
    process.stderr.write('rollout: server CPU per assign, under a running rollout and without\n');
    extra.rolloutCost = await rolloutCost(sqlite, API_KEY, 'bench-sticky', BENCH_VARIANTS, ASSIGN_BODY);
    process.stderr.write('server CPU per request of each hot path (issue 37)\n');
    extra.pathCosts = await pathCosts(
      [
        { server: baseline, bare: true },
        { server: sqlite },
        ...(sqliteBefore ? [{ server: sqliteBefore }] : []),
      ],
      COST_PATHS,
      API_KEY,
      FULL ? 6 : 3,
      FULL ? 40_000 : 15_000,
    );
    if (pg) {
      process.stderr.write('PostgreSQL log and logs at 16 and 64 connections (issue 37)\n');
      extra.pgLog = await pgLog(
        [
          { server: pg, database: pgDatabase!.name },
          ...(pgBefore ? [{ server: pgBefore, database: pgBeforeDatabase!.name }] : []),
        ],
        API_KEY,
        PG_ADMIN_URL,
        ['log', 'logs (100 per request)'],
        [16, 64],
        CONFIG.reps + 1,
        async (server, scenario, c) =>
          (await drive(server, AGENTSPLIT.find((s) => s.name === scenario)!, c)).rps,
      );
    }
    extra.analysis = { [sqlite.name]: await timeAnalysis(sqlite, 'analysis-1m') };
    if (CONFIG.pgAnalysis && pg)
      (extra.analysis as Record<string, unknown>)[pg.name] = await timeAnalysis(pg, 'analysis-1m');
    process.stderr.write(`exports: /healthz while ${EXPORTS} exports of analysis-1m stream\n`);
    extra.exportLoad = await healthzDuringExports(sqlite.url, API_KEY, 'analysis-1m', {
      exports: EXPORTS,
      seconds: CONFIG.exportSeconds,
    });
    extra.peakRssMb = Object.fromEntries(servers.map((s) => [s.name, Math.round(s.peakRssMb())]));
    // Last, and its peak apart: wide analyses hold their answers (~7 MB each) in a worker's heap.
    process.stderr.write(`analyses: /healthz while ${ANALYSES} clients analyse a wide experiment\n`);
    extra.analysisLoad = await healthzDuringAnalyses(sqlite.url, API_KEY, {
      clients: ANALYSES,
      seconds: CONFIG.exportSeconds,
    });
    extra.peakRssWithAnalysesMb = Math.round(sqlite.peakRssMb());
    extra.stdoutBytes = Object.fromEntries(servers.map((s) => [s.name, s.stdoutBytes()]));
    extra.loadAverageAtEnd = loadavg();
  } finally {
    for (const s of servers) await s.stop();
    await pgDatabase?.drop();
    await pgBeforeDatabase?.drop();
    beforeBuild?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
  // After the servers stopped: its own databases, straight through the store (issue 36).
  process.stderr.write('search over 100,000 results (SQLite, PostgreSQL)\n');
  extra.resultsSearch = await benchSearch();
  extra.rolloutTrials = await benchRolloutTrials();
  // Its own servers (agentsplit on a fresh SQLite file, the bare baseline), started and stopped there.
  extra.traces = await benchTraces();
  report(rows, extra, (performance.now() - started) / 1000);
}

interface Target {
  figure: string;
  measured: string;
  target: string;
  met: boolean;
}

function report(rows: Row[], extra: Record<string, unknown>, seconds: number): void {
  const base = (connections: number, scenario: string) => {
    const name = scenario.startsWith('log') ? 'baseline (log-sized body)' : 'baseline (assign-sized body)';
    return median(
      rows
        .find((r) => r.target === 'baseline' && r.scenario === name && r.connections === connections)!
        .samples.map((s) => s.rps),
    );
  };
  const lines = [
    `agentsplit benchmark ${FULL ? '(full)' : '(short; --full for the long run)'}: ${CONFIG.reps} repetitions × ${CONFIG.duration} s, interleaved; ` +
      `load generator ${GENERATOR}; ${PINNED ? 'servers on core 0, load generator on core 1 (--pinned)' : `unpinned: servers and generator share both cores${HAS_TASKSET ? ' (--pinned to pin them)' : ''}`}`,
    'agentsplit as `npm start` runs it: its Node flags and environment, no LOG_LEVEL (the default, info)',
    '',
    '| target | scenario | conns | req/s median [min–max] | results/s | p50 ms | p99 ms | × baseline |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  const summary: Array<Row & { medianRps: number; ratio: number; failures: number; noise: number }> = [];
  for (const r of rows) {
    const rps = r.samples.map((s) => s.rps);
    const m = median(rps);
    summary.push({
      ...r,
      medianRps: m,
      ratio: r.target === 'baseline' ? 1 : m / base(r.connections, r.scenario),
      failures: r.samples.reduce((a, s) => a + s.non2xx + s.errors, 0),
      // The run's noise for this row: the spread of its repetitions, relative to their median.
      noise: (Math.max(...rps) - Math.min(...rps)) / m,
    });
  }
  const rpsSpread = (r: Row) => {
    const rps = r.samples.map((s) => s.rps);
    return `${median(rps).toFixed(0)} [${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}]`;
  };
  // The default level first: the warn target is reported beside it below.
  for (const r of summary.filter((s) => s.target !== SQLITE_WARN)) {
    lines.push(
      `| ${r.target} | ${r.scenario} | ${r.connections} | ${rpsSpread(r)} | ` +
        `${r.perRequest ? (r.medianRps * r.perRequest).toFixed(0) : ''} | ${median(r.samples.map((s) => s.p50)).toFixed(2)} | ${median(r.samples.map((s) => s.p99)).toFixed(1)} | ` +
        `${r.ratio.toFixed(2)}×${r.failures ? ` (${r.failures} failed)` : ''} |`,
    );
  }
  const find = (target: string, scenario: string, connections: number) =>
    summary.find((s) => s.target === target && s.scenario === scenario && s.connections === connections);
  // LOG_LEVEL=warn beside the default level, same run: warn/default, and the noise it is judged against.
  const warnVsDefault: Array<{
    scenario: string;
    connections: number;
    ratio: number;
    noise: number;
    warnRatio: number;
    defaultRatio: number;
  }> = [];
  lines.push(
    '',
    `${SQLITE_WARN} beside the default level (same run; noise: the larger spread [max−min]/median of the two rows' repetitions):`,
    '',
    '| scenario | conns | default req/s [min–max] | warn req/s [min–max] | default × baseline | warn × baseline | warn/default | noise |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const s of WARN_SCENARIOS) {
    for (const c of CONFIG.connections) {
      const d = find(SQLITE, s.name, c);
      const w = find(SQLITE_WARN, s.name, c);
      if (!d || !w) continue;
      const row = {
        scenario: s.name,
        connections: c,
        ratio: w.medianRps / d.medianRps,
        noise: Math.max(d.noise, w.noise),
        warnRatio: w.ratio,
        defaultRatio: d.ratio,
      };
      warnVsDefault.push(row);
      lines.push(
        `| ${s.name} | ${c} | ${rpsSpread(d)} | ${rpsSpread(w)} | ${d.ratio.toFixed(2)}× | ${w.ratio.toFixed(2)}× | ` +
          `${row.ratio.toFixed(2)}×${w.failures ? ` (${w.failures} failed)` : ''} | ±${(row.noise * 100).toFixed(0)}% |`,
      );
    }
  }
  // The issue's throughput targets were measured at 64 connections: judged there; 256 is shown beside.
  const JUDGED_AT = 64;
  const sqliteRatio = (scenario: string) => find(SQLITE, scenario, JUDGED_AT)?.ratio ?? Number.NaN;
  const others = (scenario: string) =>
    CONFIG.connections
      .filter((c) => c !== JUDGED_AT)
      .map((c) => `${(find(SQLITE, scenario, c)?.ratio ?? Number.NaN).toFixed(2)}× at ${c}`)
      .join(', ');
  // A server cannot outrun the bare baseline on the same core: if one does, the load generator was the
  // limit (autocannon saturates its own core near 25-30k req/s), and the ratios measure it, not us.
  const generatorBound = summary.some((s) => s.target !== 'baseline' && s.ratio >= 1);
  const throughput = (scenario: string, target: number): [string, boolean] => {
    const ratio = sqliteRatio(scenario);
    return generatorBound
      ? [`${ratio.toFixed(2)}× baseline (generator-bound, not measured)`, false]
      : [`${ratio.toFixed(2)}× baseline (${others(scenario)})`, ratio >= target];
  };
  const conns = `${JUDGED_AT}`;
  const assignFigure = throughput('assign (random)', 0.8);
  const logFigure = throughput('log', 0.5);
  const ofrepFigure = throughput('OFREP single (sticky)', 0.6);
  const fixed = (extra.assignAtHalfMax as Record<string, FixedRateRow>)[SQLITE]!;
  // Runs that recorded no latency (n/a above) are left out of the medians.
  const recorded = (vs: Array<number | null | undefined>) =>
    vs.filter((v): v is number => typeof v === 'number');
  const p99s = (xs: FixedRateSample[]) => recorded(xs.map((x) => x.p99));
  const cleanP99s = (xs: FixedRateSample[]) => recorded(xs.map((x) => x.clean?.p99));
  const spread = (xs: number[]) =>
    `${median(xs).toFixed(2)} ms [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
  const p99Ratio = median(p99s(fixed.samples)) / median(p99s(fixed.baseline));
  const cleanRatio = median(cleanP99s(fixed.samples)) / median(cleanP99s(fixed.baseline));
  const startup = extra.startup as StartupResult;
  // No regression: warn/default at least 1 − the run's noise, for each scenario and connection count.
  const worstWarn = (scenario: string) =>
    warnVsDefault
      .filter((w) => w.scenario === scenario)
      .reduce((a, b) => (b.ratio - (1 - b.noise) < a.ratio - (1 - a.noise) ? b : a));
  const warnAssign = worstWarn('assign (random)');
  const warnLog = worstWarn('log');
  const warnMet =
    !generatorBound && warnVsDefault.length > 0 && warnVsDefault.every((w) => w.ratio >= 1 - w.noise);
  const warnPart = (label: string, w: (typeof warnVsDefault)[number]) =>
    `${label} ${w.ratio.toFixed(2)}× (c=${w.connections}, noise ±${(w.noise * 100).toFixed(0)}%; ` +
    `${w.warnRatio.toFixed(2)}× vs ${w.defaultRatio.toFixed(2)}× baseline)`;
  const analysis = (extra.analysis as Record<string, AnalysisTimes>)[SQLITE]!;
  const analysisLoad = extra.analysisLoad as AnalysisLoadSample;
  const rss = Math.max(...Object.values(extra.peakRssMb as Record<string, number>));
  const exportLoad = extra.exportLoad as ExportLoadSample;
  const cost = extra.targetingCost as TargetingCost;
  const rollout = extra.rolloutCost as TargetingCost;
  const targets: Target[] = [
    {
      figure: `assign throughput (random, exposures on) vs bare baseline, same run, at ${conns} connections`,
      measured: assignFigure[0],
      target: '≥ 0.80×',
      met: assignFigure[1],
    },
    {
      figure: `OFREP single evaluation (sticky, exposures on) vs bare baseline, at ${conns} connections (issue 28)`,
      measured: ofrepFigure[0],
      target: '≥ 0.60×',
      met: ofrepFigure[1],
    },
    {
      figure: `log (200 after commit, SQLite FULL) vs bare baseline, at ${conns} connections`,
      measured: logFigure[0],
      target: '≥ 0.50×',
      met: logFigure[1],
    },
    {
      figure:
        `assign p99 at half the max rate (${fixed.rate} req/s, open loop, ${ISSUE_CONNECTIONS} conns, ` +
        `median of ${fixed.samples.length}) vs the baseline's p99 at that rate`,
      measured:
        `${p99Ratio.toFixed(2)}× baseline: ${spread(p99s(fixed.samples))} vs baseline ${spread(p99s(fixed.baseline))}; ` +
        `outside the generator's own stalls ${cleanRatio.toFixed(2)}×: ${spread(cleanP99s(fixed.samples))} vs baseline ${spread(cleanP99s(fixed.baseline))}`,
      target: '≤ 1.5× baseline',
      met: p99Ratio <= 1.5,
    },
    {
      figure: `second \`npm start\` (nothing changed) to a served /healthz, median of ${startup.seconds.length}`,
      measured:
        `${startup.median.toFixed(2)} s [${startup.min.toFixed(2)}–${startup.max.toFixed(2)}]` +
        ` (first start ${startup.firstSeconds.toFixed(2)} s)`,
      target: '≤ 3 s',
      met: startup.median <= 3,
    },
    {
      figure: `LOG_LEVEL=warn vs the default level (warn/default req/s, same run; worst of ${CONFIG.connections.join('/')} conns)`,
      measured:
        warnVsDefault.length > 0
          ? `${warnPart('assign', warnAssign)}; ${warnPart('log', warnLog)}${generatorBound ? ' (generator-bound, not measured)' : ''}`
          : 'not measured',
      target: 'no regression (≥ 1 − noise)',
      met: warnMet,
    },
    {
      figure:
        'analysis with 1M results (median of 50 distinct questions, computed in a worker; cached beside it)',
      measured: `${analysis.median.toFixed(1)} ms (p99 ${analysis.p99.toFixed(1)}); cached ${analysis.cached.median.toFixed(1)} ms (p99 ${analysis.cached.p99.toFixed(1)})`,
      target: '< 50 ms',
      met: analysis.median < 50,
    },
    {
      figure: `/healthz p99 while ${ANALYSES} clients analyse a 50-variant × 200-metric experiment (polled every 20 ms; issue 34)`,
      measured: `${analysisLoad.during.p99.toFixed(1)} ms (median ${analysisLoad.during.median.toFixed(1)}, max ${analysisLoad.during.max.toFixed(1)}, n ${analysisLoad.during.n}; idle p99 ${analysisLoad.idle.p99.toFixed(1)} ms); ${analysisLoad.answered} analyses answered (median ${analysisLoad.analysis.median.toFixed(0)} ms), ${analysisLoad.refused} refused 503, in ${analysisLoad.seconds.toFixed(1)} s`,
      target: '≤ 50 ms',
      met: analysisLoad.during.p99 <= 50,
    },
    {
      figure: `/healthz p99 while ${EXPORTS} NDJSON exports of 1M results stream (polled every 20 ms)`,
      measured: `${exportLoad.during.p99.toFixed(1)} ms (median ${exportLoad.during.median.toFixed(1)}, max ${exportLoad.during.max.toFixed(1)}, n ${exportLoad.during.n}; idle p99 ${exportLoad.idle.p99.toFixed(1)} ms); ${exportLoad.lines} lines in ${exportLoad.seconds.toFixed(1)} s`,
      target: '≤ 50 ms',
      met: exportLoad.during.p99 <= 50,
    },
    {
      figure: `assign (sticky) with a 5-clause targeting condition vs without: server CPU per request, median of ${cost.rounds} alternating rounds of ${cost.requests} (issue 35)`,
      measured: `${cost.ratio.toFixed(3)}× (${cost.targetedUs.toFixed(1)} µs vs ${cost.plainUs.toFixed(1)} µs; rounds ${cost.ratios.map((r) => r.toFixed(3)).join(', ')})`,
      target: '≤ 1.05×',
      met: cost.ratio <= 1.05,
    },
    {
      figure: `assign (sticky) under a running rollout at 50% vs without: server CPU per request, median of ${rollout.rounds} alternating rounds of ${rollout.requests} (issue 38)`,
      measured: `${rollout.ratio.toFixed(3)}× (${rollout.targetedUs.toFixed(1)} µs vs ${rollout.plainUs.toFixed(1)} µs; rounds ${rollout.ratios.map((r) => r.toFixed(3)).join(', ')})`,
      target: '≤ 1.05×',
      met: rollout.ratio <= 1.05,
    },
    {
      figure: 'peak RSS under load (any agentsplit server)',
      measured: `${rss} MB (then ${extra.peakRssWithAnalysesMb} MB with the wide analyses after it)`,
      target: '≤ 200 MB',
      met: rss <= 200,
    },
  ];
  lines.push(...searchLines(extra.resultsSearch as SearchFigures[]));
  lines.push(...rolloutTrialLines(extra.rolloutTrials as RolloutTrialFigures[]));
  lines.push(...traceLines(extra.traces as TraceFigures));
  const costs = extra.pathCosts as PathCost[];
  lines.push(...pathCostLines(costs, 'baseline', SQLITE, BEFORE === undefined ? undefined : SQLITE_BEFORE));
  const pgRows = extra.pgLog as PgLogRow[] | undefined;
  if (pgRows) lines.push(...pgLogLines(pgRows, POSTGRES, BEFORE === undefined ? undefined : POSTGRES_BEFORE));
  const costOf = (path: string) =>
    costs.find((c) => c.target === SQLITE && c.path === path)?.us ?? Number.NaN;
  const stickyRatio = costOf('assign, sticky, all new users') / costOf('assign, random, with context');
  targets.push({
    figure: 'assign, sticky, all new users vs assign, random (same body): server CPU per request (issue 37)',
    measured: `${stickyRatio.toFixed(2)}× (${costOf('assign, sticky, all new users').toFixed(1)} µs vs ${costOf('assign, random, with context').toFixed(1)} µs)`,
    target: '≤ 1.10×',
    met: stickyRatio <= 1.1,
  });
  if (pgRows && BEFORE !== undefined) {
    for (const c of [16, 64]) {
      const rps = (target: string) =>
        median(
          pgRows.find((r) => r.target === target && r.scenario === 'log' && r.connections === c)?.rps ?? [
            Number.NaN,
          ],
        );
      const ratio = rps(POSTGRES) / rps(POSTGRES_BEFORE);
      targets.push({
        figure: `PostgreSQL log at ${c} connections vs ${BEFORE} in the same run (issue 37)`,
        measured: `${ratio.toFixed(2)}× (${rps(POSTGRES).toFixed(0)} vs ${rps(POSTGRES_BEFORE).toFixed(0)} req/s)`,
        target: '≥ 2×',
        met: ratio >= 2,
      });
    }
  }
  lines.push(
    '',
    'targets (issue 13), `npm start` with no LOG_LEVEL set (SQLite):',
    '',
    '| figure | measured | target | met |',
    '|---|---:|---:|:---:|',
  );
  for (const t of targets)
    lines.push(`| ${t.figure} | ${t.measured} | ${t.target} | ${t.met ? 'yes' : 'NO'} |`);
  if (generatorBound)
    lines.push(
      '',
      HAS_WRK
        ? 'warning: an agentsplit server outran the bare baseline on the same core, so something other than the ' +
            'servers (other processes on this machine, see the load average below) limited throughput and the ' +
            'ratios above do not measure the servers; run again on a quiet machine'
        : `warning: an agentsplit server outran the bare baseline, so ${GENERATOR} (not the servers) limited ` +
            'throughput and the ratios above do not measure the servers; install wrk (apt install wrk) and run again',
    );
  const all = [...fixed.samples, ...fixed.baseline];
  const steal = all.every((x) => x.stealMs)
    ? `; the host took (steal) a median of ${median(all.map((x) => x.stealMs![0]!)).toFixed(0)} ms of core 0 and ` +
      `${median(all.map((x) => x.stealMs![1]!)).toFixed(0)} ms of core 1 per run`
    : '';
  lines.push(
    '',
    `fixed-rate runs (${CONFIG.fixedRateSeconds} s measured after ${FIXED_RATE_WARMUP_SECONDS} s of warm-up): the generator's loop stalled over 1 ms a median of ` +
      `${median(all.map((x) => x.stalls.count))} times (${median(all.map((x) => x.stalls.totalMs)).toFixed(0)} ms) per ` +
      `measured window${steal}. "Outside the generator's own stalls" leaves out requests in flight during one.`,
  );
  lines.push(
    '',
    `startup: ${startup.seconds.map((s) => s.toFixed(2)).join(', ')} s after a first start of ${startup.firstSeconds.toFixed(2)} s` +
      `${startup.discarded ? ` (${startup.discarded} more discarded: the sources changed meanwhile and dist/ was rebuilt)` : ''}`,
    `peak RSS by server: ${JSON.stringify(extra.peakRssMb)}; stdout (log) bytes by server: ${JSON.stringify(extra.stdoutBytes)}`,
    `load average (1/5/15 min) at start ${(extra.loadAverageAtStart as number[]).map((x) => x.toFixed(2)).join('/')}, ` +
      `at end ${(extra.loadAverageAtEnd as number[]).map((x) => x.toFixed(2)).join('/')} (this run itself adds up to about 2); total ${seconds.toFixed(0)} s`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  const out = join(here, 'results');
  mkdirSync(out, { recursive: true });
  const file = join(out, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        full: FULL,
        generator: GENERATOR,
        generatorBound,
        logLevel: 'default (no LOG_LEVEL set: info)',
        config: CONFIG,
        rows: summary,
        ...extra,
        warnVsDefault,
        targets,
        seconds,
      },
      null,
      2,
    ),
  );
  process.stdout.write(`results written to ${file}\n`);
}

if (process.argv.includes('--search')) {
  // Only the search section (issue 36): `npm run bench -- --search`.
  process.stdout.write(`${searchLines(await benchSearch()).join('\n')}\n`);
  process.exit(0);
}

if (process.argv.includes('--rollout-aa')) {
  // Only the rollouts' error rates (issue 38): `npm run bench -- --rollout-aa`.
  process.stdout.write(`${rolloutTrialLines(await benchRolloutTrials()).join('\n')}\n`);
  process.exit(0);
}

if (process.argv.includes('--traces')) {
  // Only traces in (issue 39): `npm run bench -- --traces`; exits 1 when the results read back do not match.
  pinSelf(1);
  const figures = await benchTraces();
  process.stdout.write(`${traceLines(figures).join('\n')}\n`);
  process.exit(tracesOk(figures) ? 0 : 1);
}

if (process.argv.includes('--clients')) {
  const { benchClients } = await import('./clients.js');
  process.exit(benchClients());
}

main().catch((err) => {
  process.stderr.write(`benchmark failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
