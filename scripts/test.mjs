// `npm test`: every test file on SQLite, then the API suites (and the crash test) again on PostgreSQL.
// Extra arguments go to both runs as node options, e.g. `npm test -- --test-name-pattern=cursor`.
// Node built-ins only. Exits non-zero when either run fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `find <roots> -name '*.test.ts' | sort`, as paths relative to the repository. */
function testFiles(roots) {
  const found = [];
  for (const root of roots.filter((r) => existsSync(r))) {
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.test.ts')) {
        found.push(join(entry.parentPath, entry.name));
      }
    }
  }
  return found.sort();
}

// clients/js has its own package; its suites run against a real server process like the rest.
const all = testFiles(['src', 'test', 'clients/js/test']);
/** The second run: test/api-*.test.ts plus the crash test. */
const onPostgres = all.filter((f) => /^test\/api-[^/]*\.test\.ts$/.test(f) || f === 'test/crash.test.ts');

const runs = [
  { title: `All test files on SQLite (${all.length} files)`, backend: 'sqlite', files: all },
  { title: `API suites on PostgreSQL (${onPostgres.length} files)`, backend: 'postgres', files: onPostgres },
];

const failed = [];
for (const run of runs) {
  process.stdout.write(`\n== ${run.title}\n\n`);
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-force-exit',
      '--test-timeout=600000',
      '--test-concurrency=1',
      ...process.argv.slice(2),
      ...run.files,
    ],
    { stdio: 'inherit', env: { ...process.env, AGENTSPLIT_TEST_BACKEND: run.backend } },
  );
  if (result.error) process.stderr.write(`could not start node: ${result.error.message}\n`);
  if (result.status !== 0) failed.push(`${run.title}: ${result.signal ?? `exit ${result.status}`}`);
}

process.stdout.write(
  failed.length ? `\n== FAILED\n${failed.map((f) => `   ${f}\n`).join('')}` : '\n== All runs passed\n',
);
process.exit(failed.length ? 1 : 0);
