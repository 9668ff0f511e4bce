// The content hash of everything `npm run build` compiles (src/, the tsconfigs, the lockfile): the build
// writes it to dist/.source-hash, and bin/agentsplit.mjs runs dist/ only when it still matches.
// Node built-ins only. Paths are hashed relative to `root`, so the hash does not depend on the cwd.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export function sourceHash(root = '.') {
  const hash = createHash('sha256');
  const files = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .concat(['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])
    .sort();
  for (const file of files) {
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(root, file)))
      .update('\0');
  }
  return hash.digest('hex');
}
