// `agentsplit experiments list|show|create` (GET /experiments, GET /experiment/:slug, POST /experiments)
// and the status changes `agentsplit start|pause|complete|archive <slug>` (PATCH /experiment/:slug).
import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { formatCount, formatPercent, truncate } from '../../answers/format.js';
import { describeDecision } from '../../core/decision.js';
import type { EntryRules } from '../../core/entry.js';
import type { Experiment as CoreExperiment } from '../../core/experiment.js';
import type { MetricDefinition } from '../../core/metric-definitions.js';
import { CliError, oneLine } from './api.js';
import { session } from './session.js';
import { details, table } from './table.js';
import { whoEnters } from './who-enters.js';

/**
 * An experiment as the API answers it (core's shape, which the API serializes as it is). Metrics may be
 * absent from an older server's answer; results per variant are shown when a server sends them.
 */
export interface Experiment
  extends Omit<CoreExperiment, 'metrics' | 'decision' | keyof EntryRules>,
    Partial<EntryRules> {
  metrics?: MetricDefinition[];
  decision?: CoreExperiment['decision'];
  results?: number | Record<string, number>;
}

interface ExperimentPage {
  experiments: Experiment[];
  nextCursor: string | null;
}

const STATUSES = ['draft', 'running', 'paused', 'completed', 'released', 'archived'];
/** The API's largest page. */
const PAGE = 100;

const FILE_EXAMPLE = `
The file holds one experiment as POST /experiments takes it, for example:
  {
    "slug": "checkout-prompt", "status": "running",
    "variants": [
      {"key": "A", "payload": {"prompt": "You are a helpful assistant."}, "trafficPercent": 50},
      {"key": "B", "payload": {"prompt": "You are a concise assistant."}, "trafficPercent": 50}],
    "metrics": [{"name": "success", "direction": "increase", "role": "primary"},
      {"name": "cost_per_success", "direction": "decrease", "numerator": "cost_usd", "denominator": "success"},
      {"name": "cost_usd", "direction": "decrease", "cap": {"percentile": 99}},
      {"name": "latency_ms", "direction": "decrease", "covariate": "input_tokens"}]
  }
A metric is a ratio (numerator / denominator over each unit), capped ({"value": N} or {"percentile": P})
against heavy tails, or adjusted on a covariate the treatment cannot change (CUPED): one of them at most.

Examples:
  agentsplit experiments create --file checkout-prompt.json
  cat checkout-prompt.json | agentsplit experiments create --file -
`;

export function registerExperiments(program: Command): void {
  const experiments = program
    .command('experiments')
    .description('list, show and create experiments (list and show need a read key, create an admin key)');

  experiments
    .command('list')
    .description('list experiments, oldest first: every page, unless --limit')
    .addOption(new Option('--status <status>', 'only the experiments with this status').choices(STATUSES))
    .option('--limit <n>', 'list at most n experiments', positiveInteger)
    .action(async (options: { status?: string; limit?: number }, command: Command) => {
      const { api, json, out } = session(command);
      const pages: { value: ExperimentPage; text: string }[] = [];
      const listed: Experiment[] = [];
      let cursor: string | null = null;
      do {
        const wanted: number =
          options.limit === undefined ? PAGE : Math.min(PAGE, options.limit - listed.length);
        const query = new URLSearchParams({ limit: String(wanted) });
        if (options.status) query.set('status', options.status);
        if (cursor !== null) query.set('cursor', cursor);
        const page = await api.json<ExperimentPage>('GET', `/experiments?${query}`);
        pages.push(page);
        listed.push(...page.value.experiments);
        cursor = page.value.nextCursor;
      } while (cursor !== null && (options.limit === undefined || listed.length < options.limit));

      if (json) {
        // One page is the API's answer as is; several are joined into one answer of the same shape.
        if (pages.length === 1) return out(`${pages[0]!.text}\n`);
        return out(`${JSON.stringify({ experiments: listed, nextCursor: cursor })}\n`);
      }
      if (listed.length === 0) {
        return out(options.status ? `no ${options.status} experiments\n` : 'no experiments\n');
      }
      const withResults = listed.some((e) => e.results !== undefined);
      out(
        table(
          ['slug', 'status', 'assignment', 'variants', 'version', ...(withResults ? ['results'] : [])],
          listed.map((e) => [
            e.slug,
            e.status,
            e.assignment,
            e.variants.map((v) => `${v.key} ${formatPercent(v.trafficPercent)}`).join(', '),
            String(e.version),
            ...(withResults ? [totalResults(e.results)] : []),
          ]),
        ),
      );
      if (cursor !== null) out(`… and more: the first ${listed.length} shown (--limit ${options.limit})\n`);
    });

  experiments
    .command('show')
    .description('show one experiment: its settings, declared metrics and variants')
    .argument('<slug>', "the experiment's slug")
    .action(async (slug: string, _options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const { value, text } = await api.json<Experiment>('GET', experimentPath(slug));
      if (json) return out(`${text}\n`);
      out(describe(value));
    });

  experiments
    .command('create')
    .description('create an experiment from a JSON file (needs an admin key); prints it')
    .requiredOption('--file <path>', "the experiment as JSON ('-' reads it from stdin)")
    .addHelpText('after', FILE_EXAMPLE)
    .action(async (options: { file: string }, command: Command) => {
      const { api, json, out } = session(command);
      const body = await readJsonObject(options.file);
      const { value, text } = await api.json<Experiment>('POST', '/experiments', body);
      if (json) return out(`${text}\n`);
      out(`created experiment ${value.slug}\n\n`);
      out(describe(value));
    });

  for (const [name, status, what] of [
    ['start', 'running', 'assign variants, from draft or paused'],
    ['pause', 'paused', 'stop assigning until started again'],
    ['archive', 'archived', 'put it away, from any status'],
  ] as const) {
    program
      .command(name)
      .description(`status ${status}: ${what}; needs an admin key`)
      .argument('<slug>', "the experiment's slug")
      .action(async (slug: string, _options: unknown, command: Command) => {
        await changeStatus(command, slug, { status });
      });
  }

  program
    .command('complete')
    .description(
      'status completed: end it, from running or paused, saying what shipped; needs an admin key ' +
        '(on a completed experiment, --ship corrects the decision)',
    )
    .argument('<slug>', "the experiment's slug")
    .option('--ship <variant>', "the variant that shipped, or 'none' (no change shipped)")
    .option('--note <text>', 'why, kept with the decision (at most 2000 characters); needs --ship')
    .action(async (slug: string, options: { ship?: string; note?: string }, command: Command) => {
      if (options.note !== undefined && options.ship === undefined) {
        throw new CliError('--note goes with --ship <variant|none>: say what shipped, then why');
      }
      const body: Record<string, unknown> = { status: 'completed' };
      if (options.ship !== undefined) {
        body.decision = {
          variant: options.ship,
          ...(options.note === undefined ? {} : { note: options.note }),
        };
      }
      await changeStatus(command, slug, body);
    });
}

async function changeStatus(command: Command, slug: string, body: Record<string, unknown>): Promise<void> {
  const { api, json, out } = session(command);
  const { value, text } = await api.json<Experiment>('PATCH', experimentPath(slug), body);
  if (json) return out(`${text}\n`);
  const decided =
    body.decision !== undefined && value.decision ? `: ${describeDecision(value.decision)}` : '';
  out(`experiment ${value.slug} is now ${value.status}${decided}\n`);
}

/** `/experiment/<slug>`, the slug encoded (it may hold only URL-safe characters, but a typo may not). */
export function experimentPath(slug: string): string {
  return `/experiment/${encodeURIComponent(slug)}`;
}

function describe(e: Experiment): string {
  const pairs: [string, string][] = [
    ['slug', e.slug],
    ['name', e.name],
  ];
  if (e.description) pairs.push(['description', truncate(e.description, 200)]);
  pairs.push(
    ['status', e.active ? `${e.status} (assigning)` : e.status],
    ['assignment', e.assignment === 'sticky' ? `sticky (seed ${e.seed})` : e.assignment],
    ['version', String(e.version)],
    ['metrics', metricsText(e.metrics ?? [])],
    ['who enters', whoEnters(e)],
  );
  if (e.decision) pairs.push(['decision', `${describeDecision(e.decision)} (${e.decision.decidedAt})`]);
  if (e.results !== undefined) pairs.push(['results', totalResults(e.results)]);
  pairs.push(['created', e.createdAt], ['updated', e.updatedAt]);
  return `${details(pairs)}\n${table(
    ['variant', 'traffic', 'payload'],
    e.variants.map((v) => [v.key, formatPercent(v.trafficPercent), payloadSummary(v.payload)]),
  )}`;
}

/**
 * `success ↑ primary (MDE 10%), cost_usd ↓ guardrail (capped at p99)`; which way is better, the role, and
 * what a definition derives (a ratio, a cap, a covariate).
 */
function metricsText(metrics: MetricDefinition[]): string {
  if (metrics.length === 0) return 'none declared (every logged metric is analysed, without a direction)';
  return metrics
    .map((m) => {
      const arrow = m.direction === 'increase' ? '↑' : '↓';
      const mde =
        m.minimumDetectableEffect === undefined
          ? ''
          : ` (MDE ${formatPercent(m.minimumDetectableEffect * 100)})`;
      return `${m.name} ${arrow} ${m.role ?? 'secondary'}${mde}${derivedText(m)}`;
    })
    .join(', ');
}

/** ' (cost_usd / success)', ' (capped at p99)', ' (capped at 0.05)', ' (adjusted on input_tokens)' or ''. */
function derivedText(m: MetricDefinition): string {
  if (m.numerator !== undefined) return ` (${m.numerator} / ${m.denominator})`;
  if (m.cap) return ` (capped at ${'percentile' in m.cap ? `p${m.cap.percentile}` : m.cap.value})`;
  if (m.covariate !== undefined) return ` (adjusted on ${m.covariate})`;
  return '';
}

/** The payload as compact JSON on one line, cut to fit a terminal. */
function payloadSummary(payload: Record<string, unknown>): string {
  return truncate(oneLine(JSON.stringify(payload)), 80);
}

function totalResults(results: Experiment['results']): string {
  if (results === undefined) return '—';
  if (typeof results === 'number') return formatCount(results);
  return formatCount(Object.values(results).reduce((a, b) => a + b, 0));
}

/** The file's (or stdin's) JSON object; a missing file, bad JSON or a non-object is a one-line CliError. */
async function readJsonObject(file: string): Promise<Record<string, unknown>> {
  const name = file === '-' ? 'stdin' : file;
  const text = await readText(file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = text.trim() === '' ? 'it is empty' : (err as Error).message;
    throw new CliError(`${name} is not valid JSON: ${detail}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(`${name} must hold one JSON object (the experiment), not ${kindOf(value)}`);
  }
  return value as Record<string, unknown>;
}

/** The file's text, or stdin's for '-'; a file that cannot be read is a one-line CliError saying why. */
export async function readText(file: string): Promise<string> {
  try {
    return file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file === '-' ? 'stdin' : file}: ${fileReason(err)}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function fileReason(err: unknown): string {
  const code = (err as { code?: string })?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (err as Error)?.message ?? String(err);
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}

export function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(value.trim()))
    throw new InvalidArgumentError('expected a whole number, at least 1');
  return Number(value);
}
