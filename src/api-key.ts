// The API key when none is configured: generated once, kept in the data directory with mode 0600.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

export interface ResolvedKey {
  key: string;
  /** Where a generated key lives; undefined when it came from API_KEY. */
  file?: string;
  /** True only on the start that created it. */
  generated: boolean;
}

/** The shortest key accepted, from API_KEY or from the key file. */
export const MIN_KEY_LENGTH = 16;

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
    const key = readFileSync(file, 'utf8').trim();
    // An empty or truncated file must never become an empty (or guessable) key.
    if (key.length < MIN_KEY_LENGTH) {
      throw new Error(
        `${file} holds no valid key (under ${MIN_KEY_LENGTH} characters): delete it to generate a new one`,
      );
    }
    return { key, file, generated: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64url');
  writeAtomically(file, `${key}\n`);
  return { key, file, generated: true };
}

/** Written to a temporary file, flushed, then renamed: the key file is complete or absent, never empty. */
function writeAtomically(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}
