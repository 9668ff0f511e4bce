// The MCP tools (ADR 0030): each one is one call to the agentsplit HTTP API through `call`, so its scope,
// validation and error messages are the API's own. The HTTP server's `call` enters the request pipeline
// in-process with the caller's key; `agentsplit mcp`'s is fetch. An API refusal is a tool error (isError)
// carrying the API's message, never a protocol failure.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { analysisText } from './analysis-text.js';
import { type Previewed, previewOf } from './preview.js';
import { apiError, type Call, ok, run, Slug, send, slugPart, ToolError } from './tool-kit.js';

export type { ApiAnswer, Call } from './tool-kit.js';

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

const Status = z.enum(['draft', 'running', 'paused', 'completed', 'released', 'archived']);
const JsonObject = z.record(z.string(), z.unknown());
const Variant = z.object({
  key: z.string().describe('A-Z a-z 0-9 . _ -, 1-64 characters, unique in the experiment'),
  trafficPercent: z.number().describe('Share of traffic in [0, 100]; all variants sum to 100'),
  payload: JsonObject.optional().describe(
    'What the agent runs for this variant (a prompt, a model): JSON object',
  ),
});
const Metric = JsonObject.describe(
  "A metric definition: {name, direction: 'increase'|'decrease', role?: 'primary'|'secondary'|'guardrail', " +
    "kind?: 'mean'|'proportion', minimumDetectableEffect?, threshold?, statistic?, and at most one of: " +
    'numerator + denominator (a ratio metric, Σ numerator / Σ denominator over each unit; name is not logged), ' +
    'cap ({value} or {percentile}: heavier values count as the cap), covariate (a metric the treatment ' +
    'cannot change, e.g. input_tokens: the analysis adjusts on it, CUPED)}',
);

type Variants = z.infer<typeof Variant>[];
const withPayloads = (variants: Variants) => variants.map((v) => ({ ...v, payload: v.payload ?? {} }));

interface Experiment {
  slug: string;
  status: string;
  assignment: string;
  seed: string;
  variants: Array<{ key: string; trafficPercent: number; payload: unknown }>;
  metrics: Array<Record<string, unknown>>;
}

export function registerTools(server: McpServer, call: Call): void {
  const get = (path: string) => send(call, 'GET', path);

  server.registerTool(
    'list_experiments',
    {
      title: 'List experiments',
      description:
        'Lists the experiments this key may see (slug, status, variants with their traffic, metrics), ' +
        "optionally only one status. Paged: pass the answer's nextCursor as cursor for the next page.",
      inputSchema: {
        status: Status.optional().describe('Only experiments in this status'),
        limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 50)'),
        cursor: z.string().optional().describe("The previous answer's nextCursor"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => run(async () => ok(await get(`/experiments${query(args)}`))),
  );

  server.registerTool(
    'get_experiment',
    {
      title: 'Get an experiment',
      description:
        'One experiment: status, assignment mode (random or sticky), variants with payloads and traffic, ' +
        'declared metrics, version, and the decision made when it completed (shipped variant and note).',
      inputSchema: { slug: Slug },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ slug }) => run(async () => ok(await get(`/experiment/${slugPart(slug)}`))),
  );

  server.registerTool(
    'get_analysis',
    {
      title: 'Analyse an experiment',
      description:
        "The experiment's statistics: first the verdict (whether a variant won, lost or it is too early, " +
        'and why), then a compact scorecard per metric and variant (n, mean, lift with its interval, p-value ' +
        'or chance to win), what was exposed (users in sticky experiments, with their calls; calls in random ' +
        'ones), sample ratio mismatch and warnings. Read-only; safe to call any time.',
      inputSchema: {
        slug: Slug,
        method: z
          .enum(['frequentist', 'bayesian', 'sequential'])
          .optional()
          .describe(
            'frequentist (default), bayesian (chance to win), sequential (look as often as you like)',
          ),
        metrics: z
          .string()
          .optional()
          .describe('Comma-separated metric names; default every metric with data'),
        version: z.number().int().min(1).optional().describe('Only data under this version of the variants'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ slug, ...rest }) =>
      run(async () => {
        const analysis = await get(`/experiment/${slugPart(slug)}/analysis${query(rest)}`);
        return ok(analysis, analysisText(analysis as never));
      }),
  );

  server.registerTool(
    'get_results',
    {
      title: 'Read logged results',
      description:
        'Logged results of an experiment, newest first, a page at a time (input, output, metrics, variant, ' +
        "feedback). Pass the answer's nextCursor as cursor for older ones; null means no more.",
      inputSchema: {
        slug: Slug,
        limit: z.number().int().min(1).max(1000).optional().describe('Results per page (default 100)'),
        cursor: z.string().optional().describe("The previous answer's nextCursor"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ slug, limit, cursor }) =>
      run(async () =>
        ok(await get(`/experiment/${slugPart(slug)}/results${query({ order: 'desc', limit, cursor })}`)),
      ),
  );

  server.registerTool(
    'preview_assignment',
    {
      title: 'Preview an assignment',
      description:
        'Which variant a user would get, WITHOUT assigning (no exposure is recorded, nothing counts), and ' +
        'why: overrides, layer, targeting (on the context) and coverage decide whether they enter (else the ' +
        'default variant). Sticky experiments: the hash of seed + userId picks, always the same. Random ' +
        'experiments: every assign call is a fresh weighted draw, so the answer is the weights.',
      inputSchema: {
        slug: Slug,
        userId: z.string().min(1).describe('The user id assign would be called with'),
        context: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("The assign context (targeting reads it, with userId): {plan: 'pro'}"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ slug, userId, context }) =>
      run(async () => {
        const path = `/experiment/${slugPart(slug)}`;
        const answer = (await send(
          call,
          'POST',
          `${path}/preview`,
          context ? { userId, context } : { userId },
        )) as Previewed;
        const preview = previewOf((await get(path)) as Experiment, userId, answer);
        return ok(preview, `${preview.summary}\n${JSON.stringify(preview, null, 2)}`);
      }),
  );

  server.registerTool(
    'create_experiment',
    {
      title: 'Create an experiment (as a draft)',
      description:
        'Creates an experiment, always as a draft (nothing is assigned until update_experiment starts ' +
        'it). Idempotent by slug: creating the same slug again with the same variants, assignment and ' +
        'metrics (names and directions) answers the existing experiment; with a different definition it ' +
        'is refused, naming what differs (choose ' +
        'another slug, or change the existing one with update_experiment). Needs an admin key.',
      inputSchema: {
        slug: z
          .string()
          .min(1)
          .describe('1-100 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit'),
        name: z.string().optional(),
        description: z.string().optional().describe('What the experiment asks, in a sentence'),
        assignment: z
          .enum(['random', 'sticky'])
          .optional()
          .describe(
            "'random' (default): a weighted draw per call; 'sticky': the same user always gets the same",
          ),
        seed: z
          .string()
          .optional()
          .describe('What sticky assignment hashes with the user id (default: the slug)'),
        variants: z.array(Variant).min(1).describe('The arms; trafficPercent sums to 100'),
        metrics: z
          .array(Metric)
          .optional()
          .describe('Declared metrics; the first primary one decides the verdict'),
        segments: z.array(z.string()).optional().describe('Context keys the analysis may be split by'),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => create(call, args)),
  );

  server.registerTool(
    'log_result',
    {
      title: 'Log a result',
      description:
        'Records the outcome of one run of a variant: its metrics (numbers are averaged, true/false ' +
        "proportions), and optionally input, output, context, the user id and assign's assignmentId. " +
        'Needs a key with the log scope.',
      inputSchema: {
        slug: Slug,
        variantKey: z.string().min(1).describe('The variant that ran'),
        metrics: JsonObject.optional().describe('Named values, e.g. {"success": true, "latency_ms": 812}'),
        input: JsonObject.optional(),
        output: JsonObject.optional(),
        context: JsonObject.optional(),
        userId: z.string().optional(),
        assignmentId: z.string().optional().describe("The assign answer's assignmentId"),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ slug, ...body }) =>
      run(async () => ok(await send(call, 'POST', `/experiment/${slugPart(slug)}/log`, body))),
  );

  server.registerTool(
    'update_experiment',
    {
      title: 'Change an experiment',
      description:
        "Changes an experiment's status (draft → running; running ↔ paused; → completed; → archived), " +
        'variants or metrics. When completing, say what was decided: decision {variant: the key that ' +
        "shipped or 'none', note: why} (also on a completed experiment, to correct it). A status change or a change of traffic (variants' trafficPercent, added or " +
        'removed variants) affects live users: it is refused unless confirm repeats the slug exactly. ' +
        'Changing variants starts a new version. Needs an admin key.',
      inputSchema: {
        slug: Slug,
        status: Status.optional(),
        variants: z.array(Variant).min(1).optional().describe('The whole new list of variants'),
        metrics: z.array(Metric).optional().describe('The whole new list of declared metrics'),
        decision: z
          .object({
            variant: z.string().describe("The variant's key that shipped, or 'none' when nothing shipped"),
            note: z.string().max(2000).optional().describe('Why, e.g. "as good, 30% cheaper"'),
          })
          .optional()
          .describe("Only with status 'completed' (or on a completed experiment): what was decided"),
        confirm: z.string().optional().describe('The slug again: required for a status or traffic change'),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) => run(() => update(call, args)),
  );
}

interface CreateArgs {
  slug: string;
  variants: Variants;
  assignment?: string;
  metrics?: Array<Record<string, unknown>>;
  [k: string]: unknown;
}

async function create(call: Call, args: CreateArgs): Promise<CallToolResult> {
  const body = { ...args, status: 'draft', variants: withPayloads(args.variants) };
  const answer = await call('POST', '/experiments', body);
  if (answer.status === 201) return ok(answer.body);
  if (answer.status !== 409) throw new ToolError(apiError(answer));
  const existing = (await send(call, 'GET', `/experiment/${slugPart(args.slug)}`)) as Experiment;
  const differs = definitionDifference(existing, body);
  if (differs !== null) {
    throw new ToolError(
      `an experiment '${args.slug}' already exists with a different definition (${differs}); ` +
        'choose another slug, or change this one with update_experiment',
    );
  }
  return ok(
    existing,
    `experiment '${args.slug}' already exists with this definition (status ${existing.status}):\n${JSON.stringify(existing, null, 2)}`,
  );
}

/** Null when the existing experiment is what was asked for; else what differs. */
function definitionDifference(existing: Experiment, asked: CreateArgs): string | null {
  const variants = (list: Experiment['variants']) =>
    JSON.stringify(list.map((v) => ({ key: v.key, trafficPercent: v.trafficPercent, payload: v.payload })));
  if (variants(existing.variants) !== variants(asked.variants as Experiment['variants'])) return 'variants';
  if (existing.assignment !== (asked.assignment ?? 'random')) return 'assignment';
  if (asked.metrics !== undefined) {
    const names = (list: Array<Record<string, unknown>>) =>
      JSON.stringify(list.map((m) => [m.name, m.direction]));
    if (names(existing.metrics) !== names(asked.metrics)) return 'metrics';
  }
  return null;
}

interface UpdateArgs {
  slug: string;
  status?: string;
  variants?: Variants;
  metrics?: Array<Record<string, unknown>>;
  decision?: { variant: string; note?: string };
  confirm?: string;
}

async function update(call: Call, { slug, confirm, ...changes }: UpdateArgs): Promise<CallToolResult> {
  const path = `/experiment/${slugPart(slug)}`;
  const current = (await send(call, 'GET', path)) as Experiment;
  const body: Record<string, unknown> = { ...changes };
  if (changes.variants !== undefined) body.variants = withPayloads(changes.variants);
  const risky: string[] = [];
  if (changes.status !== undefined && changes.status !== current.status)
    risky.push(`the status (${current.status} → ${changes.status})`);
  if (changes.variants !== undefined && trafficOf(current.variants) !== trafficOf(changes.variants))
    risky.push('the traffic split');
  if (risky.length > 0 && confirm !== slug) {
    throw new ToolError(
      `this changes ${risky.join(' and ')} of '${slug}', which affects live users: ` +
        `call again with confirm: '${slug}' to do it`,
    );
  }
  return ok(await send(call, 'PATCH', path, body));
}

function trafficOf(variants: Array<{ key: string; trafficPercent: number }>): string {
  return JSON.stringify(variants.map((v) => [v.key, v.trafficPercent]).sort());
}
