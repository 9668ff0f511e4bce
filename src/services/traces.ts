// Traces in (issue 39, ADR 0045): the spans of an OTLP export are kept, the traces they touch are read
// again, and each run (the spans of one trace that share an assignment) becomes one result of its
// experiment, its metrics and evaluations written as feedback on it: replaced when a later reading
// differs, untouched when it does not (a retried export writes nothing). One trace is read by one export
// at a time in this process; spans of traces that never join a run leave after the window, counted.
import { readAssignmentId } from '../core/assignment-id.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import { shownId } from '../core/messages.js';
import type { DecodedExport } from '../core/otlp-json.js';
import { runLogId, runValues, type SpanOutcome, sameValues, traceSummary } from '../core/trace-result.js';
import { groupRuns, type PriceTable, type RunKey, readRun, type TraceSpan } from '../core/trace-run.js';
import type { StoredTraceRun, TraceStore } from '../store/sql-traces.js';
import type { Store } from '../store/store.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';
import type { FeedbackService } from './feedback.js';
import type { IssuedAssignments } from './issued-assignments.js';
import type { LogInput, ResultService } from './results.js';

export interface TraceOptions {
  prices: PriceTable;
  /** The largest input or output messages kept on a result, in bytes (0: none). */
  messageCap: number;
  /** How long a trace's spans are kept after its last export (seconds). */
  windowSeconds: number;
}

export interface TraceDeps {
  store: TraceStore;
  findResult: Store['findResult'];
  experiments: Pick<ExperimentCache, 'find' | 'list'>;
  assignments: Pick<IssuedAssignments, 'resolve'>;
  results: Pick<ResultService, 'logWithId'>;
  feedback: Pick<FeedbackService, 'give'>;
  now: () => string;
  counted: (outcome: SpanOutcome, n: number) => void;
  warn?: (err: unknown, message: string) => void;
}

/** The OTLP answer's partial success: spans that could not be used, and why (or warnings, with 0). */
export interface ExportAnswer {
  rejectedSpans: number;
  errorMessage: string;
}

/** Warnings listed in one answer (the rest are counted in the last one). */
const MAX_WARNINGS = 5;
/** Traces swept per transaction. */
const SWEEP_BATCH = 1000;

/** What reading one run came to: a row to keep and the spans it newly joined, a warning, or nothing new. */
type RunOutcome = { row: StoredTraceRun; joined: number } | { warning: string } | null;

interface Target {
  live: LiveExperiment;
  variantKey: string;
  userId: string;
  assignmentId?: string;
}

export class TraceService {
  /** The last export waiting on or reading each trace (one export reads a trace at a time). */
  private readonly tails = new Map<string, Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly deps: TraceDeps,
    private readonly options: TraceOptions,
  ) {}

  /**
   * Keeps an export's spans and writes what the runs of its traces now read; resolves once everything is
   * committed. `may(slug)`: whether the caller's key may log to that experiment.
   */
  async ingest(decoded: DecodedExport, may: (slug: string) => boolean): Promise<ExportAnswer> {
    const { spans, rejected } = decoded;
    if (rejected.count > 0) this.deps.counted('rejected', rejected.count);
    const warnings: string[] = [];
    if (spans.length > 0) {
      const traceIds = [...new Set(spans.map((s) => s.traceId))].sort();
      await this.inTurn(traceIds, () => this.read(spans, may, warnings));
    }
    const reasons = [...rejected.reasons];
    if (rejected.count > rejected.reasons.length) {
      reasons.push(`${rejected.count - rejected.reasons.length} more spans rejected`);
    }
    const shown = warnings.slice(0, MAX_WARNINGS);
    if (warnings.length > shown.length) shown.push(`${warnings.length - shown.length} more warnings`);
    return { rejectedSpans: rejected.count, errorMessage: [...reasons, ...shown].join('; ') };
  }

  /** Runs `work` once every earlier export that touched any of `traceIds` is done. */
  private async inTurn(traceIds: string[], work: () => Promise<void>): Promise<void> {
    const before = traceIds.map((id) => this.tails.get(id)).filter((p) => p !== undefined);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const id of traceIds) this.tails.set(id, mine);
    try {
      await Promise.all(before);
      await work();
    } finally {
      release();
      for (const id of traceIds) if (this.tails.get(id) === mine) this.tails.delete(id);
    }
  }

  private async read(spans: TraceSpan[], may: (slug: string) => boolean, warnings: string[]): Promise<void> {
    const kept = await this.deps.store.keepSpans(spans, this.deps.now());
    this.deps.counted('accepted', kept.added);
    if (spans.length > kept.added) this.deps.counted('repeated', spans.length - kept.added);
    let keyless = 0;
    let keylessTraces = 0;
    const readings: Array<Promise<RunOutcome>> = [];
    for (const [traceId, trace] of kept.traces) {
      const runs = groupRuns(trace.spans);
      if (runs.size === 0 && [...trace.runs.values()].some((r) => r.sealed)) {
        warnings.push(
          `trace ${traceId}: spans arrived after its window closed; its result no longer changes`,
        );
        continue;
      }
      if (runs.size === 0) {
        keyless += trace.spans.length;
        keylessTraces++;
        continue;
      }
      for (const [text, { key, spans: runSpans }] of runs) {
        readings.push(this.readRunOf(traceId, text, key, runSpans, trace.runs.get(text), may));
      }
    }
    // The runs are written together: their results share a commit, their feedback another.
    const rows: StoredTraceRun[] = [];
    let joined = 0;
    for (const outcome of await Promise.all(readings)) {
      if (outcome === null) continue;
      if ('warning' in outcome) warnings.push(outcome.warning);
      else {
        rows.push(outcome.row);
        joined += outcome.joined;
      }
    }
    if (rows.length > 0) await this.deps.store.putRuns(rows, this.deps.now());
    if (joined > 0) this.deps.counted('joined', joined);
    if (keyless > 0) {
      warnings.push(
        `${keyless} spans of ${keylessTraces} traces carry no agentsplit.assignment_id (nor agentsplit.experiment, agentsplit.variant and user.id) yet: kept ${this.options.windowSeconds} s for the span that does, then dropped`,
      );
    }
  }

  /**
   * Writes what one run reads now (its result the first time, its values when they changed); answers its
   * row to keep (null: nothing changed), or a warning when it cannot be written.
   */
  private async readRunOf(
    traceId: string,
    text: string,
    key: RunKey,
    spans: TraceSpan[],
    stored: StoredTraceRun | undefined,
    may: (slug: string) => boolean,
  ): Promise<RunOutcome> {
    const warning = (w: string) => ({ warning: `trace ${traceId}: ${w}` });
    if (stored?.sealed === true)
      return warning('spans arrived after its window closed; its result no longer changes');
    const target = await this.targetOf(key, stored);
    if (typeof target === 'string') return warning(target);
    const slug = target.live.experiment.slug;
    if (!may(slug)) return warning(`this key may not log to experiment '${slug}'`);
    const run = readRun(traceId, key, spans, {
      prices: this.options.prices,
      messageCap: this.options.messageCap,
    });
    const values = runValues(run);
    const changed = stored === undefined || !sameValues(values, stored.reading);
    if (!changed && stored.spanCount === run.spanCount) return null;
    const logId = stored?.logId ?? runLogId(traceId, text);
    try {
      if (stored === undefined && (await this.deps.findResult(target.live.id, logId)) === undefined) {
        await this.deps.results.logWithId(slug, this.logInput(target, run.input, run.output), logId);
      }
      if (changed && Object.keys(values).length > 0) {
        await this.deps.feedback.give(slug, { logId, metrics: values });
      }
    } catch (err) {
      if (err instanceof ValidationError || err instanceof NotFoundError) return warning(err.message);
      throw err;
    }
    const row: StoredTraceRun = {
      traceId,
      runKey: text,
      experimentId: target.live.id,
      logId,
      spanCount: run.spanCount,
      reading: values,
      summary: traceSummary(run),
      sealed: false,
    };
    return { row, joined: Math.max(0, run.spanCount - (stored?.spanCount ?? 0)) };
  }

  /** The experiment and variant a run's key names, or why it names none. */
  private async targetOf(key: RunKey, stored: StoredTraceRun | undefined): Promise<Target | string> {
    if ('assignmentId' in key) {
      const id = key.assignmentId;
      const candidates = this.deps.experiments
        .list()
        .filter((l) =>
          stored === undefined ? readAssignmentId(id, l.id) !== null : l.id === stored.experimentId,
        );
      for (const live of candidates) {
        const assigned = await this.deps.assignments.resolve(live, id);
        if (assigned !== null) {
          return { live, variantKey: assigned.variantKey, userId: assigned.userId, assignmentId: id };
        }
      }
      return `agentsplit.assignment_id '${shownId(id)}' was issued by no experiment here`;
    }
    const live = await this.deps.experiments.find(key.experiment);
    if (live === undefined) return `agentsplit.experiment '${key.experiment}' names no experiment`;
    return { live, variantKey: key.variant, userId: key.userId };
  }

  private logInput(target: Target, input: string | null, output: string | null): LogInput {
    const log: LogInput = { variantKey: target.variantKey, userId: target.userId };
    if (target.assignmentId !== undefined) log.assignmentId = target.assignmentId;
    const messages = (t: string | null): JsonObject | undefined => {
      if (t === null) return undefined;
      try {
        return { messages: JSON.parse(t) };
      } catch {
        return { messages: t };
      }
    };
    const i = messages(input);
    const o = messages(output);
    if (i !== undefined) log.input = i;
    if (o !== undefined) log.output = o;
    return log;
  }

  /** Sweeps every `everyMs` the traces past the window (their never-joined spans counted as ignored). */
  start(everyMs: number): void {
    this.sweeper = setInterval(() => {
      this.sweeping ??= this.sweep()
        .then(() => undefined)
        .catch((err) => this.deps.warn?.(err, 'sweeping old trace spans failed'))
        .finally(() => {
          this.sweeping = undefined;
        });
    }, everyMs);
    this.sweeper.unref();
  }

  /** Drops the traces no export touched within the window; answers how many. */
  async sweep(): Promise<number> {
    const before = new Date(Date.parse(this.deps.now()) - this.options.windowSeconds * 1000).toISOString();
    let swept = 0;
    for (;;) {
      const { traces, unjoined } = await this.deps.store.sweep(before, SWEEP_BATCH);
      if (unjoined > 0) this.deps.counted('ignored', unjoined);
      swept += traces;
      if (traces < SWEEP_BATCH) return swept;
    }
  }

  async stop(): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    await this.sweeping;
  }
}
