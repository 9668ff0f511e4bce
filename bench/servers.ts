// Starts the servers under test as child processes, pinned to core 0 where taskset exists.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

function pinned(args: string[], core: number): [string, string[]] {
  return HAS_TASKSET ? ['taskset', ['-c', String(core), ...args]] : [args[0]!, args.slice(1)];
}

/** Pins this process (the load generator) to `core`. */
export function pinSelf(core: number): void {
  if (HAS_TASKSET) execFileSync('taskset', ['-cp', String(core), String(process.pid)], { stdio: 'ignore' });
}

async function start(name: string, args: string[], env: Record<string, string>): Promise<Server> {
  const [cmd, argv] = pinned([process.execPath, ...args], 0);
  const child = spawn(cmd, argv, {
    cwd: repo,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
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
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
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
export function startAgentsplit(name: string, env: Record<string, string>): Promise<Server> {
  if (!built) {
    execFileSync(process.execPath, [join(repo, 'scripts', 'build.mjs')], { cwd: repo, stdio: 'inherit' });
    built = true;
  }
  // The memory settings of `npm start` (package.json), so peak RSS is what production would see.
  return start(name, ['--max-semi-space-size=2', join(repo, 'dist', 'main.js')], {
    LOG_LEVEL: 'warn',
    MALLOC_ARENA_MAX: '2',
    ...env,
  });
}
