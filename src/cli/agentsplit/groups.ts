// `agentsplit groups list|show|put|delete` (ADR 0038): saved groups, named id lists that conditions use
// with $inGroup. GET needs a read key, PUT and DELETE an admin key; deleting a group in use is the server's 409.
import type { Command } from 'commander';
import { formatCount } from '../../answers/format.js';
import { CliError, oneLine } from './api.js';
import { readText } from './experiments.js';
import { commaList, session } from './session.js';
import { details, table } from './table.js';

interface GroupSummary {
  key: string;
  description?: string;
  size: number;
  usedBy: string[];
  createdAt: string;
  updatedAt: string;
}

interface Group extends GroupSummary {
  values: (string | number)[];
}

/** Values `groups show` prints for people; --json has them all. */
const SHOWN_VALUES = 50;

const PUT_HELP = `
--file holds one id per line (blank lines skipped), or a JSON array of strings and numbers; '-' is stdin.
Putting a group replaces its values; the experiments using it see them at once.

Examples:
  agentsplit groups put beta-testers --values u1,u2,u3 --description 'opted in to betas'
  agentsplit groups put beta-testers --file beta-testers.txt
  agentsplit target checkout-prompt --targeting '{"id": {"$inGroup": "beta-testers"}}'
`;

export function registerGroups(program: Command): void {
  const groups = program
    .command('groups')
    .description('saved groups of ids for $inGroup (list and show need a read key, put and delete admin)');

  groups
    .command('list')
    .description('list the saved groups: size and the experiments using each')
    .action(async (_options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const { value, text } = await api.json<{ groups: GroupSummary[] }>('GET', '/groups');
      if (json) return out(`${text}\n`);
      if (value.groups.length === 0) return out('no saved groups\n');
      out(
        table(
          ['key', 'size', 'used by', 'updated', 'description'],
          value.groups.map((g) => [
            g.key,
            formatCount(g.size),
            usedByText(g.usedBy),
            g.updatedAt,
            g.description ?? '',
          ]),
        ),
      );
    });

  groups
    .command('show')
    .description('show one saved group: who uses it and its values')
    .argument('<key>', "the group's key")
    .action(async (key: string, _options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const { value, text } = await api.json<Group>('GET', groupPath(key));
      if (json) return out(`${text}\n`);
      out(describeGroup(value));
    });

  groups
    .command('put')
    .description('create or replace a saved group (admin key)')
    .argument('<key>', "the group's key")
    .option('--values <ids>', 'the ids, comma-separated')
    .option('--file <path>', "the ids: one per line or a JSON array ('-' reads stdin)")
    .option('--description <text>', 'what the group is for')
    .addHelpText('after', PUT_HELP)
    .action(
      async (
        key: string,
        options: { values?: string; file?: string; description?: string },
        command: Command,
      ) => {
        if ((options.values === undefined) === (options.file === undefined)) {
          throw new CliError('give the ids with --values a,b,c or --file <path> (one of them)');
        }
        const values =
          options.values !== undefined ? commaList(options.values) : await valuesFromFile(options.file!);
        const body: { values: (string | number)[]; description?: string } = { values };
        if (options.description !== undefined) body.description = options.description;
        const { api, json, out } = session(command);
        const { value, text } = await api.json<Group>('PUT', groupPath(key), body);
        if (json) return out(`${text}\n`);
        out(`saved group ${oneLine(value.key)}: ${formatCount(value.size ?? value.values.length)} values\n`);
        if ((value.usedBy?.length ?? 0) > 0) out(`used by ${usedByText(value.usedBy)}\n`);
      },
    );

  groups
    .command('delete')
    .description('delete a saved group; refused while an experiment uses it (admin key)')
    .argument('<key>', "the group's key")
    .action(async (key: string, _options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const { text } = await api.request('DELETE', groupPath(key));
      if (json) return out(text === '' ? `${JSON.stringify({ deleted: key })}\n` : `${text}\n`);
      out(`deleted group ${oneLine(key)}\n`);
    });
}

function groupPath(key: string): string {
  return `/groups/${encodeURIComponent(key)}`;
}

function describeGroup(g: Group): string {
  const pairs: [string, string][] = [['key', g.key]];
  if (g.description) pairs.push(['description', g.description]);
  pairs.push(
    ['size', formatCount(g.size ?? g.values.length)],
    ['used by', usedByText(g.usedBy)],
    ['created', g.createdAt],
    ['updated', g.updatedAt],
  );
  const shown = g.values.slice(0, SHOWN_VALUES).map(String).join(', ');
  const more = g.values.length - SHOWN_VALUES;
  pairs.push(['values', `${shown}${more > 0 ? ` … and ${formatCount(more)} more (--json)` : ''}`]);
  return details(pairs);
}

function usedByText(usedBy: string[] | undefined): string {
  return usedBy && usedBy.length > 0 ? usedBy.join(', ') : 'no experiment';
}

/** One id per line, or a JSON array of strings and numbers; a CliError for anything else. */
async function valuesFromFile(file: string): Promise<(string | number)[]> {
  const name = file === '-' ? 'stdin' : file;
  const text = await readText(file);
  if (!text.trimStart().startsWith('[')) {
    return text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${name} is not a valid JSON array: ${(err as Error).message}`);
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    throw new CliError(`${name} must hold a JSON array of strings and numbers (or one id per line)`);
  }
  return value;
}
