// Locates the team's shared/ folder (vectors, spec) beside the repository, or where AGENTSPLIT_SHARED_DIR says.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function sharedPath(relative: string): string {
  const base = process.env.AGENTSPLIT_SHARED_DIR ?? join(repoRoot, '..', 'shared');
  const path = join(base, relative);
  if (!existsSync(path)) throw new Error(`shared file not found: ${path} (set AGENTSPLIT_SHARED_DIR)`);
  return path;
}
