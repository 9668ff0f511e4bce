// Runs `npm ci` when node_modules is missing or older than package-lock.json, so `npm start` and
// `npm test` work on a fresh clone. Uses only Node built-ins (it runs before anything is installed).
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  process.stderr.write(
    'agentsplit: installing dependencies (npm ci; the SQLite driver builds from source, ~1 min)\n',
  );
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
