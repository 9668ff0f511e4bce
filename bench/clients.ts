// `npm run bench -- --clients`: the client libraries' own benches, one after the other (each starts its
// own server process for the remote figures): local assign per call, remote assign round trip, and
// the caller's cost of 10,000 `log` calls with background delivery. Targets (issue 17): local assign
// under 1 µs median in Node and under 5 µs in Python.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const runs = [
  {
    title: 'TypeScript client (clients/js/bench.ts)',
    command: process.execPath,
    args: ['--import', 'tsx', 'clients/js/bench.ts'],
  },
  { title: 'Python client (clients/python/bench.py)', command: 'python3', args: ['clients/python/bench.py'] },
];

export function benchClients(): number {
  let failed = 0;
  for (const run of runs) {
    process.stdout.write(`\n== ${run.title}\n\n`);
    const result = spawnSync(run.command, run.args, { cwd: root, stdio: 'inherit' });
    if (result.status !== 0) {
      failed++;
      process.stderr.write(`${run.title} failed: ${result.error?.message ?? `exit ${result.status}`}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}
