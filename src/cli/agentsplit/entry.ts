// Who enters (ADR 0038): `agentsplit target <slug>` (PATCH /experiment/:slug with only the rules given),
// `agentsplit preview <slug> <userId>` (POST …/preview) and `agentsplit layers show <key>` (GET /layers/:key).
// Saved groups are in groups.ts. Every mistake the CLI can see (bad JSON, a bad --layer) is refused before
// any request; what only the server can judge (a variant, a group, an overlap) comes back as its message.
import type { Command } from 'commander';
import type { EntryRules, Override } from '../../core/entry.js';
import type { JsonObject } from '../../core/json.js';
import { CliError, oneLine } from './api.js';
import { type Experiment, experimentPath, readText } from './experiments.js';
import { registerGroups } from './groups.js';
import { session } from './session.js';
import { table } from './table.js';
import { rangeText, whoEnters } from './who-enters.js';

interface TargetOptions {
  /** The JSON text, `@file` or `-`; false for --no-targeting. */
  targeting?: string | false;
  coverage?: string;
  /** `key:start-end`; false for --no-layer. */
  layer?: string | false;
  /** A key; false for --no-default-variant. */
  defaultVariant?: string | false;
  override?: string[];
  /** false for --no-overrides (commander's default for a --no- option alone is true). */
  overrides?: boolean;
}

interface PreviewAnswer {
  variant: string;
  payload: Record<string, unknown>;
  inExperiment: boolean;
  reason: string | null;
  explanation: string;
  status: string;
}

interface LayerAnswer {
  key: string;
  experiments: { experiment: string; status: string; range: number[] }[];
  free: number[][];
}

const TARGET_HELP = `
Only the rules given are sent (one PATCH); the others stay as they are. Targeting, coverage and the layer
make a new version (the population changed); overrides and the default variant do not.

Examples:
  agentsplit target checkout-prompt --targeting '{"plan": {"$in": ["pro", "team"]}}' --coverage 20
  agentsplit target checkout-prompt --targeting @rule.json     (--targeting - reads stdin)
  agentsplit target checkout-prompt --layer prompts:0-0.5      (the layer's range [0, 0.5))
  agentsplit target checkout-prompt --override B=qa-1,qa-2 --override 'B={"team": "qa"}' --default-variant A
  agentsplit target checkout-prompt --no-targeting --no-layer --no-overrides --coverage 100
`;

export function registerEntry(program: Command): void {
  program
    .command('target')
    .description('set who enters an experiment: targeting, coverage, layer, overrides, default (admin key)')
    .argument('<slug>', "the experiment's slug")
    .option('--targeting <condition>', "a condition as JSON, '@file' to read one, or '-' for stdin")
    .option('--no-targeting', 'everyone enters (remove the targeting condition)')
    .option('--coverage <percent>', 'the share of targeted units that enter, 0-100')
    .option('--layer <key:start-end>', "take the range [start, end) of a layer's units, e.g. prompts:0-0.5")
    .option('--no-layer', 'leave the layer')
    .option('--default-variant <key>', 'the variant served to units that do not enter')
    .option('--no-default-variant', 'serve the first variant to units that do not enter')
    .option(
      '--override <variant=ids>',
      'serve a variant to these ids (\'B=u1,u2\') or to a condition (\'B={"team":"qa"}\'); repeat, in order',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--no-overrides', 'remove every override')
    .addHelpText('after', TARGET_HELP)
    .action(async (slug: string, options: TargetOptions, command: Command) => {
      const changes = await targetChanges(options);
      const { api, json, out } = session(command);
      const { value, text } = await api.json<Experiment>('PATCH', experimentPath(slug), changes);
      if (json) return out(`${text}\n`);
      out(`experiment ${value.slug} (version ${value.version}, ${value.status})\n`);
      out(`who enters: ${whoEnters(value)}\n`);
    });

  program
    .command('preview')
    .description('what assign would serve a user, and why (records nothing; any status; read key)')
    .argument('<slug>', "the experiment's slug")
    .argument('<userId>', 'the unit id, as assign takes it')
    .option('--context <json>', 'the attributes assign would be sent, as a JSON object')
    .action(async (slug: string, userId: string, options: { context?: string }, command: Command) => {
      const body: { userId: string; context?: Record<string, unknown> } = { userId };
      if (options.context !== undefined) body.context = jsonObject(options.context, '--context');
      const { api, json, out } = session(command);
      const { value, text } = await api.json<PreviewAnswer>('POST', `${experimentPath(slug)}/preview`, body);
      if (json) return out(`${text}\n`);
      const entered = value.inExperiment
        ? 'in the experiment'
        : `not in the experiment${value.reason ? ` (${value.reason})` : ''}`;
      out(`variant ${oneLine(value.variant)} · ${entered}\n${oneLine(value.explanation)}\n`);
    });

  const layers = program.command('layers').description("a layer's experiments and free ranges (read key)");
  layers
    .command('show')
    .description('the experiments using a layer, their ranges, and the ranges still free')
    .argument('<key>', "the layer's key")
    .action(async (key: string, _options: unknown, command: Command) => {
      const { api, json, out } = session(command);
      const { value, text } = await api.json<LayerAnswer>('GET', `/layers/${encodeURIComponent(key)}`);
      if (json) return out(`${text}\n`);
      if (value.experiments.length === 0) out(`no experiments use layer ${oneLine(value.key)}\n`);
      else
        out(
          table(
            ['experiment', 'status', 'range'],
            value.experiments.map((e) => [e.experiment, e.status, rangeText(e.range)]),
          ),
        );
      const free = value.free.map(rangeText).join(', ');
      out(`free: ${free || 'none'}\n`);
    });

  registerGroups(program);
}

/** The PATCH body: only the rules given; any mistake is a CliError before a request is made. */
async function targetChanges(options: TargetOptions): Promise<Partial<EntryRules>> {
  const changes: Partial<EntryRules> = {};
  if (options.targeting === false) changes.targeting = null;
  else if (options.targeting !== undefined) changes.targeting = await targetingValue(options.targeting);
  if (options.coverage !== undefined) changes.coverage = coverageValue(options.coverage);
  if (options.layer === false) changes.layer = null;
  else if (options.layer !== undefined) changes.layer = layerValue(options.layer);
  if (options.defaultVariant === false) changes.defaultVariant = null;
  else if (options.defaultVariant !== undefined) changes.defaultVariant = options.defaultVariant;
  if (options.override !== undefined && options.overrides === false) {
    throw new CliError('--override and --no-overrides together: give one');
  }
  if (options.overrides === false) changes.overrides = [];
  else if (options.override !== undefined) changes.overrides = options.override.map(overrideValue);
  if (Object.keys(changes).length === 0) {
    throw new CliError(
      'nothing to change: give --targeting, --coverage, --layer, --override, --default-variant or a --no- option',
    );
  }
  return changes;
}

/** `{...}`, `@file` or `-` (stdin): a condition object, or null (everyone). */
async function targetingValue(spec: string): Promise<JsonObject | null> {
  let text = spec;
  let name = '--targeting';
  if (spec === '-' || spec.startsWith('@')) {
    const file = spec === '-' ? '-' : spec.slice(1);
    name = file === '-' ? 'stdin' : file;
    text = await readText(file);
  }
  if (text.trim() === 'null') return null;
  return jsonObject(text, name);
}

/** The text as a JSON object; bad JSON or another kind of value is a one-line CliError naming `what`. */
function jsonObject(text: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = text.trim() === '' ? 'it is empty' : (err as Error).message;
    throw new CliError(`${what} is not valid JSON: ${detail}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(`${what} must be a JSON object, e.g. {"plan": "pro"}`);
  }
  return value as JsonObject;
}

function coverageValue(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 100) {
    throw new CliError(`invalid --coverage '${oneLine(text)}': expected a percentage from 0 to 100`);
  }
  return value;
}

const NUMBER = '(\\d+(?:\\.\\d+)?|\\.\\d+)';
const LAYER_SPEC = new RegExp(`^(.+):${NUMBER}-${NUMBER}$`);

/** `prompts:0-0.5` → {key: 'prompts', range: [0, 0.5]}; the key may hold ':' (the last one splits). */
function layerValue(spec: string): { key: string; range: [number, number] } {
  const m = LAYER_SPEC.exec(spec.trim());
  const start = Number(m?.[2]);
  const end = Number(m?.[3]);
  if (!m || !(start < end) || end > 1) {
    throw new CliError(
      `invalid --layer '${oneLine(spec)}': expected key:start-end with 0 <= start < end <= 1, e.g. prompts:0-0.5`,
    );
  }
  return { key: m[1]!, range: [start, end] };
}

/** `B=u1,u2` (ids) or `B={"team":"qa"}` (a condition). */
function overrideValue(spec: string): Override {
  const at = spec.indexOf('=');
  const variant = at < 0 ? '' : spec.slice(0, at).trim();
  const rest = at < 0 ? '' : spec.slice(at + 1).trim();
  if (variant === '' || rest === '') {
    throw new CliError(
      `invalid --override '${oneLine(spec)}': expected variant=id,id,... or variant={condition}`,
    );
  }
  if (rest.startsWith('{')) return { variant, condition: jsonObject(rest, `--override ${variant}`) };
  const userIds = rest
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  return { variant, userIds };
}
