// The `agentsplit` command as users run it (`node bin/agentsplit.mjs`, a child process), for the CLI tests.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'),
  'bin',
  'agentsplit.mjs',
);

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI with no AGENTSPLIT_* variables inherited; `input` is its stdin. */
export function cli(args: string[], input = ''): Promise<Run> {
  const env = { ...process.env };
  delete env.AGENTSPLIT_URL;
  delete env.AGENTSPLIT_API_KEY;
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: tmpdir(), env });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Exit code 1, nothing on stdout, and exactly one line on stderr matching `line`. */
export function assertFailsWith(run: Run, line: RegExp | string): void {
  assert.equal(run.code, 1, `exit code (stdout: ${run.stdout})`);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.split('\n').length, 2, `one line on stderr, got: ${JSON.stringify(run.stderr)}`);
  if (typeof line === 'string') assert.equal(run.stderr, `${line}\n`);
  else assert.match(run.stderr, line);
}

export function assertOk(run: Run): string {
  assert.equal(run.code, 0, `exit code (stderr: ${run.stderr})`);
  assert.equal(run.stderr, '');
  return run.stdout;
}
