// Starts the servers under test as child processes; with --pinned (and taskset), on core 0.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const HAS_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Unpinned by default, as the targets were measured and as `npm start` runs: the server's
 * threads (event loop, SQLite writer, GC helper) and the load generator share both cores as the
 * scheduler decides. `--pinned` puts the servers on core 0 and the generator on core 1, for steadier
 * CPU-per-request comparisons (docs/performance.md).
 */
export const PINNED = HAS_TASKSET && process.argv.includes('--pinned');

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  /** CPU time used so far by all its threads (user + system), in ms. */
  cpuMs(): number;
  /** Bytes it has written to stdout so far: its log lines, which go to a file (as to a log collector). */
  stdoutBytes(): number;
  stop(): Promise<void>;
}

function pinned(args: string[], core: number): [string, string[]] {
  return PINNED ? ['taskset', ['-c', String(core), ...args]] : [args[0]!, args.slice(1)];
}

/** Pins this process (the load generator) to `core`. */
export function pinSelf(core: number): void {
  if (PINNED) execFileSync('taskset', ['-cp', String(core), String(process.pid)], { stdio: 'ignore' });
}

async function start(name: string, args: string[], env: Record<string, string>, cwd = repo): Promise<Server> {
  const [cmd, argv] = pinned([process.execPath, ...args], 0);
  // No LOG_LEVEL from the shell that runs the bench: agentsplit runs at its default level unless `env` sets one.
  const { LOG_LEVEL: _inherited, ...inherited } = process.env;
  // Its stdout (pino's log lines) goes to a file: written for real, as to a terminal or a collector,
  // without this process (on the load generator's core) reading it.
  const logDir = mkdtempSync(join(tmpdir(), 'agentsplit-bench-log-'));
  const logFile = join(logDir, 'stdout.log');
  const logFd = openSync(logFile, 'w');
  const child = spawn(cmd, argv, {
    cwd,
    env: { ...inherited, PORT: '0', ...env },
    stdio: ['ignore', logFd, 'pipe'],
  });
  closeSync(logFd);
  let err = '';
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${name} did not start:\n${err}`)), 60_000);
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    child.on('exit', (code) => rej(new Error(`${name} exited (${code}):\n${err}`)));
  });
  const exited = new Promise((r) => child.on('exit', r));
  return {
    name,
    url,
    child,
    peakRssMb: () => {
      const status = `/proc/${findNodePid(child)}/status`;
      if (!existsSync(status)) return Number.NaN;
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(status, 'utf8'));
      return m ? Number(m[1]) / 1024 : Number.NaN;
    },
    cpuMs: () => {
      const stat = `/proc/${findNodePid(child)}/stat`;
      if (!existsSync(stat)) return 0;
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const text = readFileSync(stat, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
    },
    stdoutBytes: () => (existsSync(logFile) ? statSync(logFile).size : 0),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

/** Linux's USER_HZ: /proc times are in these ticks. */
const CLOCK_TICKS = 100;

/**
 * Waits until every server is idle (under 5% of a core over 200 ms, at most 10 s). All servers share
 * core 0, and one still answering the requests a load run left in flight (a batch-log run leaves up
 * to a second of work) would take the core from the next run's server.
 */
export async function settle(servers: Server[]): Promise<void> {
  const deadline = performance.now() + 10_000;
  let before = servers.map((s) => s.cpuMs());
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    const now = servers.map((s) => s.cpuMs());
    const busy = now.some((t, i) => t - before[i]! > 10);
    before = now;
    if (!busy) return;
  }
}

/** taskset execs node in place, so the child's pid is node's. */
function findNodePid(child: ChildProcess): number {
  return child.pid!;
}

export function startBaseline(): Promise<Server> {
  return start('baseline', [join(repo, 'bench', 'baseline-server.mjs')], {});
}

/** Builds dist/ once, as `npm start` does, so the service is measured as it runs in production. */
let built = false;
/**
 * `root`: another checkout (a `--before` build, buildRevision); it runs with its own package.json's
 * start flags, its own dist/, from its own directory.
 */
export function startAgentsplit(name: string, env: Record<string, string>, root = repo): Promise<Server> {
  if (!built && root === repo) {
    execFileSync(process.execPath, [join(repo, 'scripts', 'build.mjs')], { cwd: repo, stdio: 'inherit' });
    built = true;
  }
  // Node flags and environment exactly as `npm start` has them, so the service runs as in production:
  // no LOG_LEVEL (the default, info) unless `env` sets one.
  const { flags, env: startEnv } = startCommand(root);
  return start(name, [...flags, join(root, 'dist', 'main.js')], { ...startEnv, ...env }, root);
}

/**
 * A build of git revision `rev` (`npm run bench -- --before=<rev>`): a detached worktree in a temporary
 * directory, this checkout's node_modules linked in, dist/ built by its own build script. `remove` takes
 * the worktree away again.
 */
export function buildRevision(rev: string): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'agentsplit-before-'));
  rmSync(root, { recursive: true, force: true });
  execFileSync('git', ['worktree', 'add', '--detach', root, rev], { cwd: repo, stdio: 'ignore' });
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  return {
    root,
    remove: () => {
      execFileSync('git', ['worktree', 'remove', '--force', root], { cwd: repo, stdio: 'ignore' });
    },
  };
}

/**
 * The environment assignments and Node flags of package.json's `start` script
 * (`VAR=value … [exec] node <flags> dist/main.js`): one source, so the bench cannot drift from production.
 */
export function startCommand(root = repo): { flags: string[]; env: Record<string, string> } {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[i]!); i++) {
    const [key, ...value] = words[i]!.split('=');
    env[key!] = value.join('=');
  }
  // `exec` hands npm's signals straight to the server (issue 26); the bench starts node itself.
  if (words[i] === 'exec') i++;
  const main = words.indexOf('dist/main.js');
  if (words[i] !== 'node' || main < i) {
    throw new Error(`package.json start is not "VAR=… node <flags> dist/main.js": ${pkg.scripts.start}`);
  }
  return { flags: words.slice(i + 1, main), env };
}
