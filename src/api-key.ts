// The API key when none is configured: generated once, kept in the data directory with mode 0600.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ResolvedKey {
  key: string;
  /** Where a generated key lives; undefined when it came from API_KEY. */
  file?: string;
  /** True only on the start that created it. */
  generated: boolean;
}

export function resolveApiKey(
  configured: string | undefined,
  dataDir: string,
  production: boolean,
): ResolvedKey {
  if (configured !== undefined) return { key: configured, generated: false };
  if (production) {
    throw new Error('API_KEY is not set: with NODE_ENV=production agentsplit will not start without one');
  }
  const file = join(dataDir, 'api-key');
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    return { key: readFileSync(file, 'utf8').trim(), file, generated: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return { key, file, generated: true };
}
