// "Second `npm start` (nothing changed) to a served /healthz": runs the real `npm start` in the repo
// root (prestart included: dependency check and the build, skipped when dist/ matches the sources) with
// a free PORT, a temporary DATA_DIR, an API_KEY and no LOG_LEVEL. One start first, unmeasured (it may
// install or build), then `starts` measured ones, each from spawn until GET /healthz answers 200.
// `node --import tsx bench/startup.ts [starts]` runs it on its own and prints one JSON line.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(repo, 'dist', '.source-hash');
const POLL_MS = 20;
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 15_000;

export interface StartupResult {
  /** Seconds from spawning `npm start` to the first 200 from /healthz, one per measured start. */
  seconds: number[];
  median: number;
  min: number;
  max: number;
  /** The unmeasured first start (it may have installed dependencies or built dist/). */
  firstSeconds: number;
  /** Measured starts thrown away and run again because the sources changed meanwhile (a rebuild). */
  discarded: number;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => res(port));
    });
  });
}

function healthz(port: number): Promise<number> {
  return new Promise((res) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 1000 }, (r) => {
      r.resume();
      r.on('end', () => res(r.statusCode ?? 0));
      r.on('error', () => res(0));
    });
    req.on('error', () => res(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const stamp = () => (existsSync(STAMP) ? readFileSync(STAMP, 'utf8') : '');

/**
 * One `npm start`, timed to its first served /healthz, then stopped: SIGTERM to its whole process
 * group (npm → sh → node; npm does not reliably forward signals) and a wait until every process of it
 * has closed its output (SIGKILL after 15 s).
 */
async function startOnce(dataDir: string): Promise<number> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: dataDir };
  env.API_KEY = 'bench-startup-key-0123456789';
  delete env.LOG_LEVEL;
  delete env.DATABASE_URL;
  const started = performance.now();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: repo,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  let exited: number | string | null | undefined;
  child.once('exit', (code) => {
    exited = code;
  });
  child.once('error', (err) => {
    exited = err.message;
  });
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`npm start exited (${exited}) before serving:\n${output}`);
      if (performance.now() - started > START_TIMEOUT_MS)
        throw new Error(`npm start did not serve /healthz in ${START_TIMEOUT_MS / 1000} s:\n${output}`);
      if ((await healthz(port)) === 200) return (performance.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    group('SIGTERM');
    const timer = setTimeout(() => group('SIGKILL'), STOP_TIMEOUT_MS);
    await closed;
    clearTimeout(timer);
  }
}

export async function measureStartup(starts = 3): Promise<StartupResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentsplit-startup-'));
  try {
    const firstSeconds = await startOnce(dataDir);
    const seconds: number[] = [];
    let discarded = 0;
    while (seconds.length < starts) {
      const before = stamp();
      const s = await startOnce(dataDir);
      // Others may edit src/ during the run: a start that rebuilt dist/ was not a second start.
      if (stamp() !== before && discarded < 3) {
        discarded++;
        continue;
      }
      seconds.push(s);
    }
    const sorted = [...seconds].sort((a, b) => a - b);
    const m = Math.floor(sorted.length / 2);
    return {
      seconds,
      median: sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2,
      min: sorted[0]!,
      max: sorted.at(-1)!,
      firstSeconds,
      discarded,
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await measureStartup(Number(process.argv[2] ?? 3));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
