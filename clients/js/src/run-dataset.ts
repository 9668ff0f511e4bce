// runDataset (issue 40; the contract shared with the Python client's run_dataset): opens an offline run,
// calls the caller's function for every (variant, item, trial) at most `concurrency` at a time, logs each
// outcome once (an Idempotency-Key per pair, so a retried log is stored once), and answers the server's
// comparison. Setup calls reject with an AgentSplitError; a pair that fails is reported, never thrown.
import { datasetItems, openRun, runComparison } from './datasets.js';
import { describeError, errorText, httpRequest, retryAfterMs } from './http.js';
import { AgentSplitError, experimentPath, type ManageTarget, manage } from './manage.js';
import type { Experiment } from './manage-types.js';
import type {
  DatasetItem,
  DatasetRun,
  RunDatasetOptions,
  RunFailure,
  RunOutcome,
  RunProgress,
} from './run-types.js';
import type { JsonObject, JsonValue } from './types.js';

export type RunFunction<P> = (payload: P, item: DatasetItem) => RunOutcome | Promise<RunOutcome>;

/** The header's alphabet (printable ASCII without `"` and `\`) and length, as the server checks them. */
const KEY_CHARS = /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/;
const MAX_KEY = 255;

/**
 * The log's Idempotency-Key of a pair: `<runId>/<variant>/<itemId>/<trial>`, or, for an item id the
 * header cannot carry (non-ASCII, `"`, `\`, too long), `<runId>/<variant>/sha256-<hex of the id>/<trial>`.
 */
export async function pairKey(
  runId: string,
  variant: string,
  itemId: string,
  trial: number,
): Promise<string> {
  const plain = `${runId}/${variant}/${itemId}/${trial}`;
  if (plain.length <= MAX_KEY && KEY_CHARS.test(plain)) return plain;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(itemId));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${runId}/${variant}/sha256-${hex}/${trial}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON object as logged: an object as it is, anything else as `{value: …}`. */
const asObject = (v: unknown): JsonObject => (isObject(v) ? (v as JsonObject) : { value: v as JsonValue });

/** The log body of what the function returned; throws (a failure of the pair) when it is not an object. */
export function logBody(
  outcome: unknown,
  item: DatasetItem,
  pair: { variant: string; runId: string; trial: number },
): Record<string, unknown> {
  if (!isObject(outcome)) {
    throw new TypeError(
      `the function must return an object (metrics, or {metrics, output, input}), not ${
        outcome === null ? 'null' : typeof outcome
      }`,
    );
  }
  const full = 'metrics' in outcome || 'output' in outcome;
  const metrics = full ? outcome.metrics : outcome;
  if (metrics !== undefined && !isObject(metrics)) throw new TypeError('metrics must be an object');
  const input = full && outcome.input !== undefined ? outcome.input : item.input;
  return {
    variantKey: pair.variant,
    runId: pair.runId,
    itemId: item.id,
    trial: pair.trial,
    ...(input === undefined || input === null ? {} : { input: asObject(input) }),
    ...(full && outcome.output !== undefined ? { output: asObject(outcome.output) } : {}),
    ...(metrics === undefined ? {} : { metrics }),
  };
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

const messageOf = (err: unknown) =>
  err instanceof Error ? err.message || err.name : typeof err === 'string' ? err : String(err);

/** A network error, a 5xx, a 429, or the server's "still being processed" 409 / a 408: try again. */
const transient = (status: number) => status >= 500 || status === 429 || status === 409 || status === 408;

/**
 * POSTs one pair's result with its Idempotency-Key, retrying what may pass later with the very same
 * bytes (so the server answers a retry from the first request); null when committed, else why not.
 */
async function logPair(
  target: () => ManageTarget,
  slug: string,
  text: string,
  key: string,
  retries: number,
  backoffMs: number,
): Promise<string | null> {
  const path = experimentPath(slug, '/log');
  for (let attempt = 1; ; attempt++) {
    const t = target();
    if (t.closed) return 'the client is closed';
    let problem: string;
    let wait = 0;
    try {
      const answer = await httpRequest(t.baseUrl + path, {
        method: 'POST',
        apiKey: t.apiKey,
        body: text,
        headers: { 'idempotency-key': key },
        timeoutMs: t.timeoutMs,
      });
      if (answer.status === 200) return null;
      problem = `log answered ${errorText(answer)}`;
      if (!transient(answer.status)) return problem;
      wait = retryAfterMs(answer.headers);
    } catch (err) {
      problem = `log failed: ${describeError(err)}`;
    }
    if (attempt > retries) return problem;
    await sleep(Math.max(wait, backoffMs * attempt));
  }
}

/** The `progress` option as a function of each pair's progress. */
function reporter(option: RunDatasetOptions['progress'], runId: string): (p: RunProgress) => void {
  if (option === false) return () => {};
  if (typeof option === 'function') {
    return (p) => {
      try {
        option(p);
      } catch {
        // The caller's progress function must not stop the run (nothing but setup errors is thrown).
      }
    };
  }
  const stderr = typeof process === 'undefined' ? undefined : process.stderr;
  if (stderr === undefined) return () => {};
  const write = (s: string) => {
    try {
      stderr.write(s);
    } catch {
      // stderr closed: no progress, the run goes on
    }
  };
  const line = (p: RunProgress) => `run ${runId}: ${p.done}/${p.total} done, ${p.failed} failed`;
  if (stderr.isTTY === true) {
    let last = 0;
    return (p) => {
      const end = p.done === p.total;
      const now = Date.now();
      if (!end && now - last < 100) return;
      last = now;
      write(`\r${line(p)}${end ? '\n' : ''}`);
    };
  }
  let tenth = 0;
  return (p) => {
    const t = p.total === 0 ? 10 : Math.floor((p.done * 10) / p.total);
    if (t <= tenth) return;
    tenth = t;
    write(`${line(p)}\n`);
  };
}

/** See ManagementCalls.runDataset. */
export async function runDataset<P = JsonObject>(
  target: () => ManageTarget,
  slug: string,
  dataset: string,
  fn: RunFunction<P>,
  options: RunDatasetOptions = {},
): Promise<DatasetRun> {
  const run = await openRun(target(), slug, dataset, {
    version: options.version,
    variants: options.variants,
    trials: options.trials ?? 1,
  });
  const experiment = await manage<Experiment>(target(), 'GET', experimentPath(slug), 200);
  const payloads = run.variants.map((key) => {
    const v = experiment.variants.find((x) => x.key === key);
    if (v === undefined) {
      const why = `variant '${key}' of run ${run.id} is not a variant of experiment '${slug}' any more`;
      throw new AgentSplitError(0, why, 'GET', experimentPath(slug));
    }
    return v.payload as P;
  });
  const items = await datasetItems(target(), run.dataset, run.version);

  const perItem = run.variants.length * run.trials;
  const total = items.length * perItem;
  const retries = Math.max(0, Math.floor(options.retries ?? 2));
  const backoffMs = Math.max(0, options.backoffMs ?? 200);
  const logRetries = Math.max(0, Math.floor(options.logRetries ?? 5));
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 8));
  const report = reporter(options.progress, run.id);
  const failures: Array<RunFailure & { index: number }> = [];
  let logged = 0;
  let done = 0;
  let next = 0;

  /** Runs pair `index` (items outermost, then trials, then variants): logged, or a failure. */
  const runPair = async (index: number): Promise<void> => {
    const item = items[Math.floor(index / perItem)]!;
    const v = index % run.variants.length;
    const variant = run.variants[v]!;
    const trial = (Math.floor(index / run.variants.length) % run.trials) + 1;
    let attempts = 0;
    let problem: string | null = null;
    try {
      let outcome: unknown;
      for (;;) {
        attempts++;
        try {
          outcome = await fn(payloads[v]!, item);
          break;
        } catch (err) {
          if (attempts > retries) throw err;
          await sleep(backoffMs * attempts);
        }
      }
      const text = JSON.stringify(logBody(outcome, item, { variant, runId: run.id, trial }));
      const key = await pairKey(run.id, variant, item.id, trial);
      problem = await logPair(target, slug, text, key, logRetries, backoffMs);
    } catch (err) {
      problem = messageOf(err);
    }
    if (problem === null) logged++;
    else failures.push({ variant, itemId: item.id, trial, error: problem, attempts, index });
    done++;
    report({ done, total, failed: failures.length });
  };

  const worker = async () => {
    while (next < total) await runPair(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(total, 1)) }, worker));
  if (total === 0) report({ done, total, failed: 0 });

  const comparison = await runComparison(target(), run.id, {
    control: options.control ?? run.variants[0],
    alpha: options.alpha,
    metrics: options.metrics,
  });
  failures.sort((a, b) => a.index - b.index);
  return { run, comparison, failures: failures.map(({ index: _, ...f }) => f), logged };
}
