// biome-ignore-all lint/suspicious/noExplicitAny: JSON read back from the server
// Runs the real agentsplit server as a child process for the client's tests: a temporary SQLite file, a
// free port (kept across restarts), killed and its directory removed in teardown.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const ROOT_KEY = 'root-key-js-client-0123456789';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export interface TestServer {
  baseUrl: string;
  port: number;
  dir: string;
  /** SIGKILL, and wait until it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same database file. */
  restart(): Promise<void>;
  /** Kills it (if running) and removes its directory. */
  stop(): Promise<void>;
  /** A JSON call with the root key (or `key`). */
  api<T = any>(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
  ): Promise<{ status: number; body: T }>;
  output(): string;
}

export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-js-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let log = '';
  let port = 0;

  const spawnOnce = async (): Promise<void> => {
    const c = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src', 'main.ts')], {
      cwd: repoRoot,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        API_KEY: ROOT_KEY,
        DATABASE_URL: `sqlite:${join(dir, 'x.db')}`,
        DATA_DIR: dir,
        RATE_LIMIT_PER_SECOND: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    live.add(c);
    exited = new Promise<void>((res) =>
      c.on('exit', () => {
        live.delete(c);
        res();
      }),
    );
    c.stdout!.on('data', (d) => {
      log += d;
    });
    await new Promise<void>((res, rej) => {
      let seen = '';
      const timer = setTimeout(() => rej(new Error(`server did not start in 60 s:\n${log}`)), 60_000);
      c.stderr!.on('data', (d) => {
        log += d;
        seen += d;
        const m = /listening on http:\/\/[^:\s]+:(\d+)/.exec(seen);
        if (m) {
          clearTimeout(timer);
          port = Number(m[1]);
          res();
        }
      });
      c.on('exit', (code) => {
        clearTimeout(timer);
        rej(new Error(`server exited with ${code} before listening:\n${log}`));
      });
    });
  };

  await spawnOnce();
  const server: TestServer = {
    get baseUrl() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    dir,
    async kill() {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    async restart() {
      await server.kill();
      await spawnOnce();
    },
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
    async api(method, path, body, key = ROOT_KEY) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: {
          'x-api-key': key,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    output: () => log,
  };
  return server;
}

/** Creates a running experiment (two variants by default) and returns its slug. */
export async function createExperiment(
  server: TestServer,
  slug: string,
  options: {
    assignment?: 'sticky' | 'random';
    variants?: Array<{ key: string; trafficPercent: number; payload: object }>;
  } = {},
): Promise<string> {
  const variants = options.variants ?? [
    { key: 'A', trafficPercent: 50, payload: { prompt: 'a' } },
    { key: 'B', trafficPercent: 50, payload: { prompt: 'b' } },
  ];
  const res = await server.api('POST', '/experiments', {
    slug,
    status: 'running',
    assignment: options.assignment ?? 'sticky',
    variants,
  });
  if (res.status !== 201) throw new Error(`create ${slug}: ${res.status} ${JSON.stringify(res.body)}`);
  if (res.body.status !== 'running') {
    const p = await server.api('PATCH', `/experiment/${slug}`, { status: 'running' });
    if (p.status !== 200) throw new Error(`start ${slug}: ${p.status} ${JSON.stringify(p.body)}`);
  }
  return slug;
}

/** Every stored result of an experiment (all pages). */
export async function allResults(server: TestServer, slug: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await server.api('GET', `/experiment/${slug}/results?limit=1000${q}`);
    if (res.status !== 200) throw new Error(`results ${slug}: ${res.status}`);
    out.push(...res.body.results);
    cursor = res.body.nextCursor;
  } while (cursor);
  return out;
}

/** A logger that keeps what it is told. */
export function memoryLogger(): {
  warn(m: string): void;
  error(m: string): void;
  warns: string[];
  errors: string[];
} {
  const warns: string[] = [];
  const errors: string[] = [];
  return {
    warns,
    errors,
    warn: (m: string) => warns.push(m),
    error: (m: string) => errors.push(m),
  };
}
