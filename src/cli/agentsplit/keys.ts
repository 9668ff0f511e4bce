// `agentsplit keys create|list|revoke`: POST /keys, GET /keys, DELETE /keys/:id (an admin key).
import { type Command, InvalidArgumentError } from 'commander';
import { commaList, session } from './session.js';
import { details, table } from './table.js';

/** A key as GET /keys lists it (never its secret). */
interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  experiments: string[] | null;
  prefix: string;
  rateLimitPerSecond: number | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A page of GET /keys. */
interface KeyPage {
  keys: ApiKey[];
  nextCursor: string | null;
}

/** Keys asked for per page (the most GET /keys gives). */
const PAGE = 100;

/** POST /keys answers the key with its secret, once. */
interface CreatedKey extends ApiKey {
  key: string;
}

const SCOPES_HELP =
  "comma-separated scopes: 'assign' (POST assign), 'log' (POST log, logs), " +
  "'read' (every GET), 'admin' (everything, including experiments and keys)";

export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description('create, list and revoke API keys (needs an admin key, e.g. the root API_KEY)');

  keys
    .command('create')
    .description('create a key with scopes; prints its secret, which is shown only this once')
    .requiredOption('--name <name>', 'who holds it, e.g. the agent')
    .requiredOption('--scopes <list>', SCOPES_HELP, commaList)
    .option(
      '--experiments <slugs>',
      'limit the key to these experiments (default: every experiment)',
      commaList,
    )
    .option(
      '--rate-limit <n>',
      "requests per second for this key (default: the server's RATE_LIMIT_PER_SECOND)",
      positiveInteger,
    )
    .addHelpText(
      'after',
      '\nExample:\n  agentsplit keys create --name support-agent --scopes assign,log --experiments checkout-prompt\n',
    )
    .action(async (options: CreateOptions, command: Command) => {
      const { api, json, out } = session(command);
      const { value: key, text } = await api.json<CreatedKey>('POST', '/keys', {
        name: options.name,
        scopes: options.scopes,
        ...(options.experiments ? { experiments: options.experiments } : {}),
        ...(options.rateLimit !== undefined ? { rateLimitPerSecond: options.rateLimit } : {}),
      });
      if (json) return out(`${text}\n`);
      out(`${describe(key)}\n`);
      out('This secret is shown only once: store it now (clients send it as x-api-key).\n');
    });

  keys
    .command('list')
    .description(
      'list the keys that are not revoked, oldest first: every page (never their secrets; the root API_KEY is not one)',
    )
    .action(async (_options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const pages: { value: KeyPage; text: string }[] = [];
      const listed: ApiKey[] = [];
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ limit: String(PAGE) });
        if (cursor !== null) query.set('cursor', cursor);
        const page = await api.json<KeyPage>('GET', `/keys?${query}`);
        pages.push(page);
        listed.push(...page.value.keys);
        cursor = page.value.nextCursor;
      } while (cursor !== null);
      if (json) {
        // One page is the API's answer as is; several are joined into one answer of the same shape.
        if (pages.length === 1) return out(`${pages[0]!.text}\n`);
        return out(`${JSON.stringify({ keys: listed, nextCursor: null })}\n`);
      }
      if (listed.length === 0) return out('no keys (the root API_KEY is not listed)\n');
      out(
        table(
          ['id', 'name', 'scopes', 'experiments', 'prefix', 'last used'],
          listed.map((k) => [
            k.id,
            k.name,
            k.scopes.join(','),
            experiments(k),
            k.prefix,
            k.lastUsedAt ?? 'never',
          ]),
        ),
      );
    });

  keys
    .command('revoke')
    .description('revoke a key: every instance refuses it within a second (--json prints nothing)')
    .argument('<id>', 'the key id, as keys list shows it')
    .action(async (id: string, _options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      await api.request('DELETE', `/keys/${encodeURIComponent(id)}`);
      if (!json) out(`revoked key ${id}\n`);
    });
}

interface CreateOptions {
  name: string;
  scopes: string[];
  experiments?: string[];
  rateLimit?: number;
}

function describe(key: CreatedKey): string {
  return details([
    ['id', key.id],
    ['name', key.name],
    ['scopes', key.scopes.join(',')],
    ['experiments', experiments(key)],
    [
      'rate limit',
      key.rateLimitPerSecond === null ? "the server's default" : `${key.rateLimitPerSecond} per second`,
    ],
    ['prefix', key.prefix],
    ['created', key.createdAt],
    ['key', key.key],
  ]);
}

function experiments(key: ApiKey): string {
  return key.experiments === null ? 'all' : key.experiments.join(',');
}

function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(value.trim())) {
    throw new InvalidArgumentError('expected a whole number of requests per second, at least 1');
  }
  return Number(value);
}
