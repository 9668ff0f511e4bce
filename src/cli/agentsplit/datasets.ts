// `agentsplit datasets list` and `agentsplit datasets push <name> --file items.jsonl` (issue 40): the
// datasets offline runs answer, and a file of items sent as one: created when new, else its items added or
// changed (a new version only when something changed, so pushing the same file twice changes nothing).
// Items without an id get one from the server each push: give ids to keep pushes idempotent.
import type { Command } from 'commander';
import { formatCount } from '../../answers/format.js';
import { CliError } from './api.js';
import { readText } from './experiments.js';
import { session } from './session.js';
import { table } from './table.js';

/** The server's limit of items a request (MAX_DATASET_ITEMS): larger files go in several requests. */
const ITEMS_A_REQUEST = 10_000;

interface Dataset {
  name: string;
  description: string;
  version: number;
  items: number;
  updatedAt: string;
}

export function registerDatasets(program: Command): void {
  const datasets = program
    .command('datasets')
    .description(
      'the datasets offline runs answer (list: a read key; push: an admin key for every experiment)',
    );

  datasets
    .command('list')
    .description('every dataset: name, current version, items, when it last changed')
    .action(async (_options: object, command: Command) => {
      const { api, json, out } = session(command);
      const listed: Dataset[] = [];
      let cursor: string | null = null;
      do {
        const path: string = `/datasets?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const { value } = await api.json<{ datasets: Dataset[]; nextCursor: string | null }>('GET', path);
        listed.push(...value.datasets);
        cursor = value.nextCursor;
      } while (cursor !== null);
      if (json) return out(`${JSON.stringify({ datasets: listed })}\n`);
      if (listed.length === 0)
        return out('no datasets yet: agentsplit datasets push <name> --file items.jsonl\n');
      const rows = listed.map((d) => [
        d.name,
        `v${d.version}`,
        formatCount(d.items),
        d.updatedAt,
        d.description,
      ]);
      out(table(['name', 'version', 'items', 'updated', 'description'], rows));
    });

  datasets
    .command('push')
    .description(
      'create a dataset from a file of items, or add and change its items (a new version when anything changed)',
    )
    .argument('<name>', "the dataset's name")
    .requiredOption(
      '--file <path>',
      "the items: JSON lines ({id?, input, expected?, metadata?} a line) or one JSON array ('-' reads stdin)",
    )
    .option('--description <text>', 'the description of a new dataset')
    .action(async (name: string, options: { file: string; description?: string }, command: Command) => {
      const { api, json, out } = session(command);
      const items = parseItems(await readText(options.file), options.file === '-' ? 'stdin' : options.file);
      const path = `/datasets/${encodeURIComponent(name)}`;
      const exists = (await api.any('GET', path)).status === 200;
      let answer: { value: Dataset; text: string } | undefined;
      for (let at = 0; at < items.length || answer === undefined; at += ITEMS_A_REQUEST) {
        const chunk = items.slice(at, at + ITEMS_A_REQUEST);
        answer =
          exists || answer !== undefined
            ? await api.json<Dataset>('POST', `${path}/items`, { items: chunk })
            : await api.json<Dataset>('POST', '/datasets', {
                name,
                ...(options.description === undefined ? {} : { description: options.description }),
                items: chunk,
              });
      }
      if (json) return out(`${answer.text}\n`);
      const d = answer.value;
      out(
        `${exists ? 'pushed to' : 'created'} ${d.name}: version ${d.version}, ${formatCount(d.items)} items\n`,
      );
    });
}

/** JSON lines, or one JSON array of items; a line that is not a JSON object is a CliError naming it. */
export function parseItems(text: string, source: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new CliError(`${source} holds no items`);
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed) as unknown[];
    } catch (err) {
      throw new CliError(`${source} is not a valid JSON array: ${(err as Error).message}`);
    }
  }
  return text.split('\n').flatMap((line, i) => {
    if (line.trim() === '') return [];
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch (err) {
      throw new CliError(`${source} line ${i + 1} is not JSON: ${(err as Error).message}`);
    }
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw new CliError(
        `${source} line ${i + 1} is not a JSON object (an item: {id?, input, expected?, metadata?})`,
      );
    return [item];
  });
}
