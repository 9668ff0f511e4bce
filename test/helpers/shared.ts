// Locates the team's shared files (reference vectors): AGENTSPLIT_SHARED_DIR, else shared/ beside the
// repository, else the copy in test/fixtures (so a clone without shared/ beside it still tests; the
// copy is checked against shared/ whenever shared/ is there, see test/fixtures.test.ts).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const fixturesDir = join(repoRoot, 'test', 'fixtures');

/** shared/ beside the repository (or AGENTSPLIT_SHARED_DIR), when it exists. */
export function sharedDir(): string | undefined {
  const dir = process.env.AGENTSPLIT_SHARED_DIR ?? join(repoRoot, '..', 'shared');
  return existsSync(dir) ? dir : undefined;
}

export function sharedPath(relative: string): string {
  const base = sharedDir();
  const path = base ? join(base, relative) : join(fixturesDir, relative);
  if (!existsSync(path)) throw new Error(`shared file not found: ${path} (set AGENTSPLIT_SHARED_DIR)`);
  return path;
}
