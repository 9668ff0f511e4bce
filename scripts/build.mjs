// `npm run build` (and `npm start` first): TypeScript → dist/ (tsc), plus the SQL migrations the compiled
// store reads. Skipped when dist/ was built from exactly the current sources (a content hash, so a
// checkout or a touch that changes nothing does not rebuild): a second `npm start` starts in about a second.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { sourceHash } from './source-hash.mjs';

const STAMP = 'dist/.source-hash';

const wanted = sourceHash();
const force = process.argv.includes('--force');
if (!force && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === wanted) process.exit(0);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
process.stderr.write('agentsplit: building dist/ from the TypeScript sources (tsc, about 20-40 s)…\n');
const started = Date.now();
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
cpSync('src/store/migrations', 'dist/store/migrations', { recursive: true });
writeFileSync(STAMP, wanted);
process.stderr.write(`agentsplit: built in ${Math.round((Date.now() - started) / 1000)} s\n`);
