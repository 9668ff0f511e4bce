// Runs `npm ci` when node_modules is missing or older than package-lock.json, so `npm start` and
// `npm test` work on a fresh clone. Uses only Node built-ins (it runs before anything is installed).
// The install is loud on purpose: it says what it is doing and how long it takes, and runs the install
// scripts in the foreground so the SQLite driver's compile (most of the wait) is visible as it goes.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  process.stderr.write(
    'agentsplit: installing dependencies (about 1-3 min: npm ci, then the SQLite driver compiles from source)…\n',
  );
  const started = Date.now();
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--foreground-scripts'], { stdio: 'inherit' });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (r.status !== 0) {
    process.stderr.write(`agentsplit: npm ci failed after ${seconds} s (see above)\n`);
    process.exit(r.status ?? 1);
  }
  process.stderr.write(`agentsplit: dependencies installed in ${seconds} s\n`);
}
