// A private PostgreSQL server for tests that must stop and start it (outages). Built with the
// machine's initdb/pg_ctl in a temp directory, on its own port; as root it runs as user postgres.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((d) => existsSync(join(d, 'pg_ctl')));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface PrivatePostgres {
  url: string;
  start(): void;
  stop(): void;
  destroy(): void;
}

export function privatePostgresAvailable(): boolean {
  return binDir() !== undefined;
}

export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (!bin) throw new Error('initdb/pg_ctl not found under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'agentsplit-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) => {
    const cmd = join(bin, tool);
    const opts = { stdio: 'pipe' as const, timeout: 60_000 };
    if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], opts);
    else execFileSync(cmd, args, opts);
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  // authentication_timeout: PostgreSQL before 17 waits, when it shuts down, for every "dead-end"
  // backend (a connection that arrived during shutdown) until it has read a startup packet or the
  // timeout passed: one half-open connection from a client retrying under load held `pg_ctl stop`
  // for exactly 60 s (the default) on a busy machine. 5 s bounds a stop; PostgreSQL 17 ends them itself.
  const options = `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=on -c max_connections=50 -c authentication_timeout=5s`;
  const server: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', 'start']),
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    destroy: () => {
      try {
        server.stop();
      } catch {
        // already stopped
      }
      if (process.env.AGENTSPLIT_KEEP_PG) console.error(`private PostgreSQL kept in ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
  server.start();
  return server;
}
