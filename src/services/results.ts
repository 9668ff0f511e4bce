// Logging results (acknowledged only once committed) and reading them back page by page.

import { hasAssignmentIdForm } from '../core/assignment-id.js';
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import type { JsonObject } from '../core/json.js';
import { NAMES_IN_A_MESSAGE, shownId, someOf } from '../core/messages.js';
import { MAX_METRICS_PER_EXPERIMENT } from '../core/metric-cap.js';
import { overCapWarning, unanalysedValueWarnings } from '../core/metric-warnings.js';
import type { OfflineAnswer } from '../core/offline-runs.js';
import { resultSegments } from '../core/segments.js';
import { normalizeTime } from '../core/time.js';
import type { NewResult } from '../core/writes.js';
import type { Result } from '../store/result-types.js';
import type { TraceStore } from '../store/sql-traces.js';
import type { Store } from '../store/store.js';

/** A stored result as services hand it out (the http layer names it from here, not from the store). */
export type { Result };

import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';
import type { AssignmentTarget, IssuedAssignments } from './issued-assignments.js';
import { exportResults, listPage, type ResultListQuery } from './result-reads.js';

export interface LogInput {
  variantKey: string;
  input?: JsonObject;
  output?: JsonObject;
  metrics?: JsonObject;
  context?: JsonObject;
  userId?: string;
  assignmentId?: string;
  timestamp?: string;
  /** An offline run's result (issue 40): the run, its dataset item, and the trial (1-based). */
  runId?: string;
  itemId?: string;
  trial?: number;
}

export interface LogReceipt {
  logId: string;
  warning?: string;
}

export interface LogsAnswer {
  logIds: string[];
  warnings: string[];
}

/** Turns an answer into the Idempotency-Key record committed with the results (ADR 0016). */
export type RecordAnswer<T> = (answer: T) => IdempotencyRecord;

function receipt(logId: string, warnings: string[]): LogReceipt {
  return warnings.length > 0 ? { logId, warning: warnings.join('; ') } : { logId };
}

export type { ResultListQuery };

export interface ResultDeps {
  experiments: Pick<ExperimentCache, 'find' | 'lookup'>;
  /** What assignment ids were issued for (the variant a result's assignmentId names is checked). */
  assignments: Pick<IssuedAssignments, 'resolve' | 'resolveCurrent'>;
  ingest: {
    /** Resolves with each result's metric names the cap left out (null: none). */
    appendResults(results: NewResult[], record?: IdempotencyRecord): Promise<Array<string[] | null>>;
  };
  store: Pick<Store, 'listResults' | 'lastResultSeq' | 'readRollups'>;
  /** Checks a result that names an offline run (absent: results cannot name runs). */
  runs?: {
    answerOf(
      live: LiveExperiment,
      variantKey: string,
      named: { runId: string; itemId?: string; trial?: number },
    ): Promise<OfflineAnswer>;
  };
  /** The summaries of results read from traces (absent: none shown). */
  traces?: Pick<TraceStore, 'summariesOf'>;
  newId: () => string;
  /** The current time, ISO 8601. */
  now: () => string;
}

function toJson(value: JsonObject | undefined): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export class ResultService {
  constructor(private readonly deps: ResultDeps) {}

  /**
   * Resolves after the result is committed. Whatever is stored but not analysed is warned about: an
   * unknown variant key (flagged), metric values that are not numbers or true/false, names over the cap.
   * Nothing is awaited before the commit when the experiment is in the cache and no assignmentId needs
   * resolving (the common case, and the one `npm run bench` measures).
   */
  log(slug: string, input: LogInput, record?: RecordAnswer<LogReceipt>): Promise<LogReceipt> {
    const live = this.deps.experiments.lookup(slug);
    const offline = input.runId !== undefined || input.itemId !== undefined || input.trial !== undefined;
    if (live === undefined || input.assignmentId !== undefined || offline) {
      return this.logResolving(slug, input, record);
    }
    try {
      return this.logTo(live, input, undefined, record);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Logs a result under a log id the caller chose (a run read from a trace: core/trace-result.ts runLogId),
   * as `log` would otherwise. Never reached from a request body: clients cannot choose log ids.
   */
  logWithId(slug: string, input: LogInput, logId: string): Promise<LogReceipt> {
    return this.logResolving(slug, input, undefined, logId);
  }

  private async logResolving(
    slug: string,
    input: LogInput,
    record?: RecordAnswer<LogReceipt>,
    logId?: string,
  ): Promise<LogReceipt> {
    const live = await this.experiment(slug);
    const offline = await this.offlineOf(live, input);
    return this.logTo(live, input, await this.assigned(live, input), record, logId, offline);
  }

  /** The run, item and trial a result answers (undefined online); a 400 or 404 when it names them wrongly. */
  private async offlineOf(live: LiveExperiment, input: LogInput): Promise<OfflineAnswer | undefined> {
    if (input.runId === undefined) {
      if (input.itemId !== undefined || input.trial !== undefined) {
        throw new ValidationError('itemId and trial answer an offline run: send runId with them');
      }
      return undefined;
    }
    if (this.deps.runs === undefined) throw new ValidationError('this service keeps no offline runs');
    const { runId, itemId, trial } = input;
    return this.deps.runs.answerOf(live, input.variantKey, {
      runId,
      ...(itemId === undefined ? {} : { itemId }),
      ...(trial === undefined ? {} : { trial }),
    });
  }

  private logTo(
    live: LiveExperiment,
    input: LogInput,
    assigned: AssignmentTarget | null | undefined,
    record?: RecordAnswer<LogReceipt>,
    chosenId?: string,
    offline?: OfflineAnswer,
  ): Promise<LogReceipt> {
    const result = this.newResult(live, input, assigned, chosenId, offline);
    // Decided before the wait, so the parsed request is not kept alive while the commit is awaited.
    const logId = result.logId;
    const warnings = unanalysedValueWarnings([input.metrics]);
    const mismatch = assignmentWarning(live, input, assigned);
    if (mismatch) warnings.unshift(mismatch);
    if (!result.knownVariant) warnings.unshift(unknownVariantWarning(live, [input.variantKey]));
    const slug = live.experiment.slug;
    // The answer as known before the commit (an over-cap warning is only known after it).
    return this.commit(live, [result], record?.(receipt(logId, warnings))).then(([metricsOverCap]) => {
      const overCap = overCapWarning(metricsOverCap ?? [], slug, MAX_METRICS_PER_EXPERIMENT);
      if (overCap) warnings.push(overCap);
      return receipt(logId, warnings);
    });
  }

  /**
   * All-or-nothing: the inputs were validated by the caller, and all results commit in one transaction.
   * Not async itself: the inputs are turned into results (their JSON serialized) at once and not kept
   * while the commit is awaited, so a large batch's parsed JSON can be collected early.
   */
  logMany(slug: string, inputs: LogInput[], record?: RecordAnswer<LogsAnswer>): Promise<LogsAnswer> {
    return this.experiment(slug).then(async (live) => {
      const assigned: Array<AssignmentTarget | null | undefined> = [];
      const offline: Array<OfflineAnswer | undefined> = [];
      for (const input of inputs) {
        assigned.push(await this.assigned(live, input));
        offline.push(await this.offlineOf(live, input));
      }
      const warnings = inputs.flatMap((input, i) => assignmentWarning(live, input, assigned[i]) ?? []);
      return this.commitMany(
        live,
        inputs.map((input, i) => this.newResult(live, input, assigned[i], undefined, offline[i])),
        [...new Set(warnings)].concat(unanalysedValueWarnings(inputs.map((input) => input.metrics))),
        record,
      );
    });
  }

  private async commitMany(
    live: LiveExperiment,
    results: NewResult[],
    valueWarnings: string[],
    record?: RecordAnswer<LogsAnswer>,
  ): Promise<LogsAnswer> {
    const warnings: string[] = [];
    const unknown = [...new Set(results.filter((r) => !r.knownVariant).map((r) => r.variantKey))];
    if (unknown.length > 0) warnings.push(unknownVariantWarning(live, unknown));
    warnings.push(...valueWarnings);
    const logIds = results.map((r) => r.logId);
    const decided = await this.commit(live, results, record?.({ logIds, warnings: [...warnings] }));
    const overCap = new Set(decided.flatMap((names) => names ?? []));
    const capWarning = overCapWarning([...overCap], live.experiment.slug, MAX_METRICS_PER_EXPERIMENT);
    if (capWarning) warnings.push(capWarning);
    return { logIds, warnings };
  }

  async list(slug: string, q: ResultListQuery): Promise<{ results: Result[]; nextCursor: string | null }> {
    return listPage(this.deps, q, () => this.experiment(slug));
  }

  /**
   * Every result committed when the export began, page by page, so memory stays flat whatever the
   * volume, and the names of the analysed metrics (at most the per-experiment cap), for one column
   * each. Throws NotFoundError before yielding anything when the slug is unknown.
   */
  async exportAll(slug: string): Promise<{ metricNames: string[]; results: AsyncGenerator<Result> }> {
    return exportResults(this.deps.store, await this.experiment(slug));
  }

  /**
   * A draft may be deleted between the lookup and the commit; the store then answers NotFoundError
   * (the results referred to an experiment that is gone), said here with the slug.
   */
  private async commit(
    live: LiveExperiment,
    results: NewResult[],
    record?: IdempotencyRecord,
  ): Promise<Array<string[] | null>> {
    try {
      return await this.deps.ingest.appendResults(results, record);
    } catch (err) {
      if (err instanceof NotFoundError) {
        throw new NotFoundError(`no experiment with slug '${live.experiment.slug}' (it was deleted)`);
      }
      throw err;
    }
  }

  private async experiment(slug: string): Promise<LiveExperiment> {
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    return live;
  }

  /** What the input's assignmentId was issued for: undefined without one, null when not issued here. */
  private async assigned(
    live: LiveExperiment,
    input: LogInput,
  ): Promise<AssignmentTarget | null | undefined> {
    if (input.assignmentId === undefined) return undefined;
    const now = this.deps.assignments.resolveCurrent(live, input.assignmentId);
    return now !== undefined ? now : this.deps.assignments.resolve(live, input.assignmentId);
  }

  private newResult(
    live: LiveExperiment,
    input: LogInput,
    assigned: AssignmentTarget | null | undefined,
    logId?: string,
    offline?: OfflineAnswer,
  ): NewResult {
    // Its assignment id was given to a unit that did not enter (ADR 0038), or it answers an offline run
    // (issue 40): stored, never counted.
    const counted = assigned?.entered !== false && offline === undefined;
    return {
      ...(counted ? {} : { counted: false as const }),
      ...(offline === undefined ? {} : { offline }),
      // Sticky experiments randomized users: a result with a userId joins its user's unit (ADR 0018).
      unit: counted && live.experiment.assignment === 'sticky' && input.userId !== undefined,
      assignedVariant: assigned && assigned.variantKey !== input.variantKey ? assigned.variantKey : null,
      logId: logId ?? this.deps.newId(),
      experimentId: live.id,
      version: live.experiment.version,
      variantKey: input.variantKey,
      knownVariant: live.experiment.variants.some((v) => v.key === input.variantKey),
      userId: input.userId ?? null,
      assignmentId: input.assignmentId ?? null,
      input: toJson(input.input),
      output: toJson(input.output),
      metrics: toJson(input.metrics),
      metricValues: input.metrics ?? null,
      context: toJson(input.context),
      segments: !counted
        ? undefined
        : resultSegments(
            input.context,
            live.experiment.segments,
            input.assignmentId === undefined
              ? undefined
              : {
                  id: input.assignmentId,
                  clientMade: assigned !== null && assigned !== undefined && !assigned.byServer,
                },
          ),
      timestamp: input.timestamp === undefined ? null : normalizeTime(input.timestamp, 'timestamp'),
      createdAt: this.deps.now(),
      ...(live.declared && counted ? { declared: live.declared } : {}),
    };
  }
}

/**
 * Says when the assignmentId names another variant than variantKey, or has this service's form but was
 * not made for this experiment (another experiment's id, or a damaged one): stored and flagged either way,
 * where /exposures and /feedback refuse it, since a result is data to keep. An id in any other form (a
 * client's own id) is stored as it is, unchecked.
 */
function assignmentWarning(
  live: LiveExperiment,
  input: LogInput,
  assigned: AssignmentTarget | null | undefined,
): string | undefined {
  if (assigned === null && input.assignmentId !== undefined && hasAssignmentIdForm(input.assignmentId)) {
    return `assignmentId '${shownId(input.assignmentId)}' was not made for experiment '${live.experiment.slug}' (its check, version, variant or user does not match): stored and flagged`;
  }
  if (!assigned || assigned.variantKey === input.variantKey) return undefined;
  return `assignmentId was issued for variant '${assigned.variantKey}', not '${input.variantKey}': stored and flagged`;
}

function unknownVariantWarning(live: LiveExperiment, keys: string[]): string {
  const known = someOf(
    live.experiment.variants.map((v) => v.key),
    NAMES_IN_A_MESSAGE,
    false,
  );
  const list = someOf(keys);
  return `variantKey ${list} matches no variant of experiment '${live.experiment.slug}' (variants: ${known}): stored and flagged`;
}
