// Runs the real server as a child process (node + tsx), for tests that must kill or restart it.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/** `entry` is src/main.ts under tsx by default, or a built file such as dist/main.js. */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 60_000,
  entry = 'src/main.ts',
): Promise<ServerProcess> {
  const args = entry.endsWith('.ts') ? ['--import', 'tsx', join(repoRoot, entry)] : [join(repoRoot, entry)];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d) => {
    log += d;
  });
  const exited = new Promise<number | string>((res) =>
    child.on('exit', (code, signal) => res(code ?? signal ?? -1)),
  );
  const baseUrl = await new Promise<string>((res, rej) => {
    const timer = setTimeout(
      () => rej(new Error(`server did not start in ${timeoutMs} ms:\n${log}`)),
      timeoutMs,
    );
    child.stderr!.on('data', (d) => {
      log += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`server exited with ${code} before listening:\n${log}`));
    });
  });
  return { child, baseUrl, output: () => log, exited };
}
