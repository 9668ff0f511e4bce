// A run of an agent, read from its trace (issue 39): the spans of one trace that share an assignment become
// one result. This file is the reading: which spans join which assignment (`agentsplit.assignment_id` on a
// span or an ancestor, or `agentsplit.experiment` + `agentsplit.variant` + `user.id`), and a run's metrics
// from the OpenTelemetry GenAI conventions (current and legacy names). Pure: a function of the set of spans
// received so far, so the same spans in any order, or twice, read the same.

/** An attribute's value as OTLP carries it (AnyValue), unwrapped; 64-bit integers as numbers. */
export type AttributeValue =
  | string
  | number
  | boolean
  | null
  | AttributeValue[]
  | { [key: string]: AttributeValue };

export type Attributes = Record<string, AttributeValue>;

/** A span as the decoders hand it over (OTLP JSON or protobuf, normalised). */
export interface TraceSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** Nanoseconds since the epoch, as decimal text (64 bits). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** The span's attributes over its resource's (the span's win). */
  attributes: Attributes;
  events: Array<{ name: string; timeUnixNano: string; attributes: Attributes }>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
}

/** What joins a run to an experiment: an assignment id, or experiment, variant and user. */
export type RunKey = { assignmentId: string } | { experiment: string; variant: string; userId: string };

/** A price per million tokens, for a model (gen_ai.response.model or .request.model, exactly or by prefix). */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cached input tokens (cache reads), when the provider prices them apart; else as input. */
  cacheRead?: number;
}

export type PriceTable = Record<string, ModelPrice>;

export interface Evaluation {
  name: string;
  value: number | null;
  label: string | null;
}

/** One span of a run as the results view shows it. */
export interface SpanSummary {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** gen_ai.operation.name (chat, execute_tool, invoke_agent, …), when given. */
  operation: string | null;
  model: string | null;
  /** Milliseconds from the run's first span start. */
  startMs: number;
  durationMs: number;
  error: boolean;
  inputTokens?: number;
  outputTokens?: number;
}

/** The most spans a run's summary lists (the first by start time); spanCount says how many it has. */
export const SUMMARY_SPANS = 50;

export interface TraceRun {
  traceId: string;
  key: RunKey;
  /** The run's root: the highest of its spans (the trace's root when it is in the run). */
  rootSpanId: string;
  spanCount: number;
  /** Metrics, each present only when the spans say it. */
  metrics: Record<string, number>;
  /** The models the run called (response model, else request model), in order of first call. */
  models: string[];
  evaluations: Evaluation[];
  /** The first model call's input messages and the last one's output (JSON text, within the cap), if any. */
  input: string | null;
  output: string | null;
  /** Its first SUMMARY_SPANS spans by start time. */
  spans: SpanSummary[];
}

export const ASSIGNMENT_ATTRIBUTE = 'agentsplit.assignment_id';
export const EXPERIMENT_ATTRIBUTE = 'agentsplit.experiment';
export const VARIANT_ATTRIBUTE = 'agentsplit.variant';
export const USER_ATTRIBUTE = 'user.id';

const text = (v: AttributeValue | undefined): string | null =>
  typeof v === 'string' && v.length > 0 ? v : null;
const count = (v: AttributeValue | undefined): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0
    ? v
    : typeof v === 'string' && /^\d+$/.test(v)
      ? Number(v)
      : null;

/** The join key a span itself carries, if any. */
export function keyOf(a: Attributes): RunKey | null {
  const id = text(a[ASSIGNMENT_ATTRIBUTE]);
  if (id !== null) return { assignmentId: id };
  const experiment = text(a[EXPERIMENT_ATTRIBUTE]);
  const variant = text(a[VARIANT_ATTRIBUTE]);
  const userId = text(a[USER_ATTRIBUTE]);
  return experiment !== null && variant !== null && userId !== null ? { experiment, variant, userId } : null;
}

/** A key as text (maps and storage). */
export function keyText(k: RunKey): string {
  // JSON, not a separator character: any text may be in the three (and PostgreSQL's text refuses NUL).
  return 'assignmentId' in k
    ? `a:${k.assignmentId}`
    : `e:${JSON.stringify([k.experiment, k.variant, k.userId])}`;
}

/**
 * The runs of one trace's spans: each span joins the key on itself or its nearest ancestor that carries
 * one; a span with none on its known ancestry joins the trace's only key, when it has exactly one. Spans
 * that join nothing are left out (the caller counts them). Spans repeated (an exporter's retry) count once.
 */
export function groupRuns(spans: readonly TraceSpan[]): Map<string, { key: RunKey; spans: TraceSpan[] }> {
  const byId = new Map<string, TraceSpan>();
  for (const s of spans) if (!byId.has(s.spanId)) byId.set(s.spanId, s);
  const own = new Map<string, RunKey>();
  for (const s of byId.values()) {
    const k = keyOf(s.attributes);
    if (k !== null) own.set(s.spanId, k);
  }
  const keys = new Map([...own.values()].map((k) => [keyText(k), k]));
  const only = keys.size === 1 ? [...keys.values()][0]! : null;
  const runs = new Map<string, { key: RunKey; spans: TraceSpan[] }>();
  for (const s of byId.values()) {
    let key: RunKey | null = null;
    const seen = new Set<string>();
    for (let at: TraceSpan | undefined = s; at !== undefined && !seen.has(at.spanId); ) {
      seen.add(at.spanId);
      key = own.get(at.spanId) ?? null;
      if (key !== null) break;
      at = at.parentSpanId === null ? undefined : byId.get(at.parentSpanId);
    }
    key ??= only;
    if (key === null) continue;
    const t = keyText(key);
    const run = runs.get(t) ?? { key, spans: [] };
    run.spans.push(s);
    runs.set(t, run);
  }
  return runs;
}

const nanos = (s: string): bigint => {
  try {
    return BigInt(s);
  } catch {
    return 0n;
  }
};
const millis = (s: TraceSpan) => Number(nanos(s.endTimeUnixNano) - nanos(s.startTimeUnixNano)) / 1e6;
const failed = (s: TraceSpan) => s.status.code === 2 || text(s.attributes['error.type']) !== null;
const operation = (s: TraceSpan) => text(s.attributes['gen_ai.operation.name']);
const isTool = (s: TraceSpan) =>
  operation(s) === 'execute_tool' || text(s.attributes['gen_ai.tool.name']) !== null;
const MODEL_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'embeddings']);

/** The first present count of `names` on a span. */
function firstCount(a: Attributes, names: readonly string[]): number | null {
  for (const n of names) {
    const v = count(a[n]);
    if (v !== null) return v;
  }
  return null;
}

const USAGE: Record<string, readonly string[]> = {
  input_tokens: ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.usage.prompt_tokens'],
  output_tokens: [
    'gen_ai.usage.output_tokens',
    'gen_ai.usage.completion_tokens',
    'llm.usage.completion_tokens',
  ],
  cache_read_tokens: ['gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_read_input_tokens'],
  cache_write_tokens: [
    'gen_ai.usage.cache_write.input_tokens',
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_creation_input_tokens',
  ],
  reasoning_tokens: ['gen_ai.usage.reasoning.output_tokens', 'gen_ai.usage.reasoning_tokens'],
};
const COST = ['gen_ai.usage.cost', 'gen_ai.usage.cost.amount'];

/**
 * Sums a count over the spans that carry it, each counted only where no descendant carries it too: an agent
 * span that totals its model calls' usage is not added to them.
 */
function deepestSum(spans: readonly TraceSpan[], names: readonly string[]): number | null {
  const carrying = spans.filter((s) => firstCount(s.attributes, names) !== null);
  if (carrying.length === 0) return null;
  const parents = new Map(spans.map((s) => [s.spanId, s.parentSpanId]));
  const carriers = new Set(carrying.map((s) => s.spanId));
  const covered = new Set<string>();
  for (const s of carrying) {
    const seen = new Set<string>([s.spanId]);
    for (let p = parents.get(s.spanId) ?? null; p !== null && !seen.has(p); p = parents.get(p) ?? null) {
      seen.add(p);
      if (carriers.has(p)) covered.add(p);
    }
  }
  return carrying
    .filter((s) => !covered.has(s.spanId))
    .reduce((sum, s) => sum + firstCount(s.attributes, names)!, 0);
}

const modelOf = (s: TraceSpan) =>
  text(s.attributes['gen_ai.response.model']) ?? text(s.attributes['gen_ai.request.model']);

/** A dated release's suffix (gpt-4o-2024-08-06, claude-3-5-sonnet-20241022). */
const RELEASE_DATE = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * The price of a model: its exact name, else its name without a release date. Never a mere prefix:
 * gpt-4o-mini is not gpt-4o.
 */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  return table[model] ?? table[model.replace(RELEASE_DATE, '')] ?? null;
}

/** A run's cost from the price table: each model call's tokens at its model's price (null if any is unpriced). */
function pricedCost(calls: readonly TraceSpan[], table: PriceTable): number | null {
  let total = 0;
  let priced = 0;
  for (const s of calls) {
    const input = firstCount(s.attributes, USAGE.input_tokens!);
    const output = firstCount(s.attributes, USAGE.output_tokens!);
    if (input === null && output === null) continue;
    const model = modelOf(s);
    const price = model === null ? null : priceOf(table, model);
    if (price === null) return null;
    // Cache reads are part of the input tokens; priced apart only where the table says their price.
    const reads = firstCount(s.attributes, USAGE.cache_read_tokens!) ?? 0;
    const cached = price.cacheRead !== undefined ? Math.min(input ?? 0, reads) : 0;
    const fresh = (input ?? 0) - cached;
    total += (fresh * price.input + cached * (price.cacheRead ?? 0) + (output ?? 0) * price.output) / 1e6;
    priced++;
  }
  return priced > 0 ? total : null;
}

function spanSummary(s: TraceSpan, start: bigint): SpanSummary {
  const input = firstCount(s.attributes, USAGE.input_tokens!);
  const output = firstCount(s.attributes, USAGE.output_tokens!);
  return {
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    name: s.name,
    operation: operation(s),
    model: modelOf(s),
    startMs: Number(nanos(s.startTimeUnixNano) - start) / 1e6,
    durationMs: millis(s),
    error: failed(s),
    ...(input === null ? {} : { inputTokens: input }),
    ...(output === null ? {} : { outputTokens: output }),
  };
}

function clip(value: AttributeValue | undefined, cap: number): string | null {
  if (value === undefined || value === null) return null;
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s.length > 0 && Buffer.byteLength(s) <= cap ? s : null;
}

export interface RunOptions {
  prices?: PriceTable;
  /** The largest input or output message text kept, in bytes (0: none). */
  messageCap?: number;
}

/** One run's reading: metrics, models, evaluations and messages of its spans (deduplicated by span id). */
export function readRun(
  traceId: string,
  key: RunKey,
  spans: readonly TraceSpan[],
  o: RunOptions = {},
): TraceRun {
  const byId = new Map<string, TraceSpan>();
  for (const s of spans) if (!byId.has(s.spanId)) byId.set(s.spanId, s);
  const all = [...byId.values()].sort((a, b) => {
    const [x, y] = [nanos(a.startTimeUnixNano), nanos(b.startTimeUnixNano)];
    return x < y ? -1 : x > y ? 1 : a.spanId.localeCompare(b.spanId);
  });
  // The root: a span whose parent is not in the run (the earliest-starting of them, the id breaking ties).
  const roots = all.filter((s) => s.parentSpanId === null || !byId.has(s.parentSpanId));
  const root = roots.find((s) => s.parentSpanId === null) ?? roots[0] ?? all[0]!;
  const metrics: Record<string, number> = { latency_ms: millis(root), error: failed(root) ? 1 : 0 };
  for (const [name, names] of Object.entries(USAGE)) {
    const v = deepestSum(all, names);
    if (v !== null) metrics[name] = v;
  }
  const tools = all.filter(isTool);
  if (tools.length > 0) {
    metrics.tool_calls = tools.length;
    metrics.tool_errors = tools.filter(failed).length;
  }
  const calls = all.filter(
    (s) =>
      MODEL_OPERATIONS.has(operation(s) ?? '') ||
      (modelOf(s) !== null && firstCount(s.attributes, USAGE.input_tokens!) !== null),
  );
  const first = calls[0];
  const ttft = first === undefined ? null : first.attributes['gen_ai.response.time_to_first_chunk'];
  if (typeof ttft === 'number' && Number.isFinite(ttft) && ttft >= 0) metrics.ttft_ms = ttft * 1000;
  const stated = deepestSum(all, COST);
  const cost = stated ?? (o.prices ? pricedCost(calls, o.prices) : null);
  if (cost !== null) metrics.cost_usd = cost;
  const models = [...new Set(calls.map(modelOf).filter((m): m is string => m !== null))];
  const evaluations: Evaluation[] = [];
  for (const s of all) {
    for (const e of s.events) {
      if (e.name !== 'gen_ai.evaluation.result') continue;
      const name = text(e.attributes['gen_ai.evaluation.name']);
      if (name === null) continue;
      const v = e.attributes['gen_ai.evaluation.score.value'];
      evaluations.push({
        name,
        value: typeof v === 'number' && Number.isFinite(v) ? v : null,
        label: text(e.attributes['gen_ai.evaluation.score.label']),
      });
    }
  }
  const cap = o.messageCap ?? 0;
  const last = calls.at(-1);
  return {
    traceId,
    key,
    rootSpanId: root.spanId,
    spanCount: all.length,
    metrics,
    models,
    evaluations,
    input: cap > 0 && first ? clip(first.attributes['gen_ai.input.messages'], cap) : null,
    output: cap > 0 && last ? clip(last.attributes['gen_ai.output.messages'], cap) : null,
    spans: all.slice(0, SUMMARY_SPANS).map((s) => spanSummary(s, nanos(all[0]!.startTimeUnixNano))),
  };
}
