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
  const { url, key, json } = command.optsWithGlobals<GlobalOptions>();
  if (!key) throw new CliError('no API key: pass --key or set AGENTSPLIT_API_KEY');
  return {
    api: new Api(url || DEFAULT_URL, key),
    json: json === true,
    out: (text) => process.stdout.write(text),
  };
}

/** `a,b, c` → ['a', 'b', 'c'] (for options that take a list). */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}
