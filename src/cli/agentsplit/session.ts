// What every command needs from the global options: the API client (--url, --key) and the output mode.
import type { Command } from 'commander';
import { Api, CliError, DEFAULT_URL } from './api.js';

export interface Session {
  api: Api;
  /** --json: print the API's JSON as is, for scripts; otherwise tables for people. */
  json: boolean;
  out: (text: string) => void;
}

interface GlobalOptions {
  url?: string;
  key?: string;
  json?: boolean;
}

export function session(command: Command): Session {
  const { url, key, json } = globalOptions(command);
  if (!key) throw new CliError('no API key: pass --key or set AGENTSPLIT_API_KEY');
  return {
    api: new Api(url || DEFAULT_URL, key),
    json: json === true,
    out: (text) => process.stdout.write(text),
  };
}

/**
 * --url, --key and --json as given nearest the command (`keys list --json` or `--json keys list`); the
 * program's carry the AGENTSPLIT_* variables and the default, so a flag anywhere wins over its variable.
 */
function globalOptions(command: Command): GlobalOptions {
  const found: GlobalOptions = {};
  for (let at: Command | null = command; at !== null; at = at.parent) {
    const own = at.opts<GlobalOptions>();
    found.url ??= own.url;
    found.key ??= own.key;
    found.json ??= own.json;
  }
  return found;
}

/** `a,b, c` → ['a', 'b', 'c'] (for options that take a list). */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}
