#!/usr/bin/env node
// `agentsplit` / `npx agentsplit` from a checkout: runs the compiled dist/cli/agentsplit.js when dist/ was
// built from exactly the current sources (the hash `npm run build` keeps in dist/.source-hash), otherwise
// the TypeScript source through tsx, so that it works right after `npm ci` and never runs stale code.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sourceHash } from '../scripts/source-hash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'agentsplit.js');
const stamp = join(root, 'dist', '.source-hash');

if (existsSync(built) && existsSync(stamp) && readFileSync(stamp, 'utf8') === sourceHash(root)) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'agentsplit.ts')).href);
}
