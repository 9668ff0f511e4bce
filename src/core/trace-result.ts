// What a run read from a trace (core/trace-run.ts) writes (issue 39, ADR 0045): one result, whose log id
// is a function of the trace and the run's key (so a retried or replayed export finds the same result),
// and its metrics and evaluations as feedback on that result, replaced whenever a later reading differs.
// Pure.
import { createHash } from 'node:crypto';
import { ValidationError } from './errors.js';
import type { ModelPrice, PriceTable, SpanSummary, TraceRun } from './trace-run.js';

/** What the results view shows of a result made from a trace (the run's latest reading). */
export interface TraceSummary {
  traceId: string;
  rootSpanId: string;
  spanCount: number;
  models: string[];
  /** The first model call's input messages and the last one's output (JSON text), within the cap. */
  input: string | null;
  output: string | null;
  spans: SpanSummary[];
}

/** What became of spans: kept (new), repeated (kept before), joined a run, ignored (never joined), rejected (malformed). */
export type SpanOutcome = 'accepted' | 'repeated' | 'joined' | 'ignored' | 'rejected';
export const SPAN_OUTCOMES: readonly SpanOutcome[] = [
  'accepted',
  'repeated',
  'joined',
  'ignored',
  'rejected',
];

/** A feedback value as the feedback service takes it. */
export type RunValues = Record<string, number | boolean>;

/**
 * The log id of a run's result: a UUID (version 8, RFC 9562) made from the trace id and the run's key, so
 * every reading of the run, on any instance and after any retry, names the same result.
 */
export function runLogId(traceId: string, keyText: string): string {
  const h = createHash('sha256').update(`agentsplit.run\u0000${traceId}\u0000${keyText}`).digest('hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Evaluation labels read as pass (true) or fail (false) when an evaluation has no score value. */
const PASSING = new Set(['pass', 'passed', 'true', 'yes', 'correct', 'good', 'success']);
const FAILING = new Set(['fail', 'failed', 'false', 'no', 'incorrect', 'bad', 'failure']);

/**
 * The values a reading writes as feedback: its metrics, then each evaluation by name (its score value, else
 * its label when that says pass or fail; the latest of one name wins). A metric and an evaluation of the
 * same name: the evaluation's.
 */
export function runValues(run: TraceRun): RunValues {
  const values: RunValues = { ...run.metrics };
  for (const e of run.evaluations) {
    if (e.value !== null) values[e.name] = e.value;
    else if (e.label !== null && PASSING.has(e.label.toLowerCase())) values[e.name] = true;
    else if (e.label !== null && FAILING.has(e.label.toLowerCase())) values[e.name] = false;
  }
  return values;
}

/** The summary the results view shows of a reading. */
export function traceSummary(run: TraceRun): TraceSummary {
  return {
    traceId: run.traceId,
    rootSpanId: run.rootSpanId,
    spanCount: run.spanCount,
    models: run.models,
    input: run.input,
    output: run.output,
    spans: run.spans,
  };
}

/** Whether two readings write the same values (then nothing is written again). */
export function sameValues(a: RunValues, b: RunValues): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

/** The version of the price table file's format this release reads (README, "Traces"). */
export const PRICE_TABLE_VERSION = 1;

const isPrice = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * A price table file's JSON: `{"version": 1, "currency": "USD", "models": {"<model>": {"input": <USD per
 * million tokens>, "output": …, "cacheRead"?: …}}}`. Throws a ValidationError naming what is wrong.
 */
export function readPriceTable(json: unknown, where: string): PriceTable {
  const fail = (what: string): never => {
    throw new ValidationError(`${where}: ${what}`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail('must be a JSON object');
  const file = json as Record<string, unknown>;
  if (file.version !== PRICE_TABLE_VERSION) {
    fail(`version must be ${PRICE_TABLE_VERSION} (got ${JSON.stringify(file.version)})`);
  }
  if (file.currency !== undefined && file.currency !== 'USD') {
    fail(`currency must be "USD" (cost_usd is in US dollars; got ${JSON.stringify(file.currency)})`);
  }
  const models = file.models;
  if (typeof models !== 'object' || models === null || Array.isArray(models)) {
    fail('models must be an object of model name → {input, output, cacheRead?}');
  }
  const table: PriceTable = {};
  for (const [model, raw] of Object.entries(models as Record<string, unknown>)) {
    const p = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (!isPrice(p.input) || !isPrice(p.output)) {
      fail(`models.${model} needs input and output prices (US dollars per million tokens, ≥ 0)`);
    }
    if (p.cacheRead !== undefined && !isPrice(p.cacheRead)) {
      fail(`models.${model}.cacheRead must be a price ≥ 0`);
    }
    const price: ModelPrice = { input: p.input as number, output: p.output as number };
    if (p.cacheRead !== undefined) price.cacheRead = p.cacheRead as number;
    table[model] = price;
  }
  return table;
}
