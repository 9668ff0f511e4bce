// Late feedback (issue 15; ADR 0018): a value that arrives after the result, counted for the variant of
// the assignment or result it names, upserted per metric and committed before the answer.
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import { metricKind } from '../core/rollups.js';
import { targetSegments } from '../core/segments.js';
import type { FeedbackValue, NewFeedback } from '../core/writes.js';
import type { ResultTarget } from '../store/result-types.js';
import type { Store } from '../store/store.js';
import type { ExperimentCache } from './experiment-cache.js';
import type { IssuedAssignments } from './issued-assignments.js';
import type { RecordAnswer } from './results.js';

export interface FeedbackInput {
  assignmentId?: string;
  logId?: string;
  metrics: JsonObject;
  comment?: string;
}

export interface FeedbackReceipt {
  feedbackId: string;
}

export interface FeedbackDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  assignments: Pick<IssuedAssignments, 'resolve'>;
  store: Pick<Store, 'findResult' | 'findResults'>;
  ingest: {
    appendFeedback(feedback: NewFeedback[], answer?: ReturnType<RecordAnswer<unknown>>): Promise<void>;
  };
  newId: () => string;
  now: () => string;
}

/** Log ids are UUIDs: anything else names no result (and never reaches the database). */
const LOG_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The values as stored: numbers, and true/false as 1/0 of a proportion; anything else is a 400. */
export function feedbackValues(metrics: JsonObject): FeedbackValue[] {
  const entries = Object.entries(metrics);
  if (entries.length === 0) throw new ValidationError('metrics must name at least one metric');
  return entries.map(([metric, value]) => {
    const kind = metricKind(value);
    if (kind === undefined) {
      throw new ValidationError(
        `metrics.${metric} must be a number or true/false (got ${JSON.stringify(value)})`,
      );
    }
    return { metric, kind, value: kind === 'mean' ? (value as number) : value ? 1 : 0 };
  });
}

/** One item of a batch: the experiment it is for and its feedback, or why the edge already refused it. */
export type FeedbackBatchItem = { slug: string; input: FeedbackInput } | { refused: string };

/** A batch's outcome: how many items are committed, and the others by their index with the reason. */
export interface FeedbackBatchReceipt {
  accepted: number;
  rejected: Array<{ index: number; error: string }>;
}

/** Where `prepare` finds the result a logId names: the store, or what a batch read ahead. */
type ResultLookup = (experimentId: number, logId: string) => Promise<ResultTarget | undefined>;

/** What makes one item of a batch rejected rather than the whole batch failed: the request's own faults. */
const itemFault = (err: unknown): err is ValidationError | NotFoundError =>
  err instanceof ValidationError || err instanceof NotFoundError;

export class FeedbackService {
  constructor(private readonly deps: FeedbackDeps) {}

  async give(
    slug: string,
    input: FeedbackInput,
    record?: RecordAnswer<FeedbackReceipt>,
  ): Promise<FeedbackReceipt> {
    const feedback = await this.prepare(slug, input);
    const receipt = { feedbackId: feedback.feedbackId };
    await this.deps.ingest.appendFeedback([feedback], record?.(receipt));
    return receipt;
  }

  /**
   * Feedback for many experiments at once (issue 26): each item is checked and upserted exactly as `give`
   * would; an item `give` would refuse (400 or 404) is rejected by its index, the others are committed
   * together, with the Idempotency-Key's answer, before this resolves.
   */
  async giveMany(
    items: readonly FeedbackBatchItem[],
    record?: RecordAnswer<FeedbackBatchReceipt>,
  ): Promise<FeedbackBatchReceipt> {
    const accepted: NewFeedback[] = [];
    const rejected: FeedbackBatchReceipt['rejected'] = [];
    const results = await this.resultsNamed(items);
    for (const [index, item] of items.entries()) {
      if ('refused' in item) {
        rejected.push({ index, error: item.refused });
        continue;
      }
      try {
        accepted.push(await this.prepare(item.slug, item.input, results));
      } catch (err) {
        if (!itemFault(err)) throw err;
        rejected.push({ index, error: err.message });
      }
    }
    const receipt = { accepted: accepted.length, rejected };
    const answer = record?.(receipt);
    // Nothing to write and no answer to keep: nothing to commit.
    if (accepted.length > 0 || answer !== undefined) await this.deps.ingest.appendFeedback(accepted, answer);
    return receipt;
  }

  /**
   * The results a batch's items name, read per experiment in one statement (one read per item, a
   * thousand at once, queue on SQLite's one read connection and the PostgreSQL pool: 1 to 2 s for 1000
   * items, measured). Items that will be refused anyway are left to `prepare`.
   */
  private async resultsNamed(items: readonly FeedbackBatchItem[]): Promise<ResultLookup> {
    const bySlug = new Map<string, string[]>();
    for (const item of items) {
      if ('refused' in item) continue;
      const logId = item.input.logId;
      if (logId === undefined || !LOG_ID.test(logId)) continue;
      const ids = bySlug.get(item.slug);
      if (ids === undefined) bySlug.set(item.slug, [logId]);
      else ids.push(logId);
    }
    const found = new Map<number, Map<string, ResultTarget>>();
    for (const [slug, logIds] of bySlug) {
      const live = await this.deps.experiments.find(slug);
      if (live) found.set(live.id, await this.deps.store.findResults(live.id, logIds));
    }
    return async (experimentId, logId) => found.get(experimentId)?.get(logId);
  }

  /** The feedback as stored, once its target is found; a 400 or 404 (domain error) when it cannot be. */
  private async prepare(
    slug: string,
    input: FeedbackInput,
    findResult: ResultLookup = (experimentId, logId) => this.deps.store.findResult(experimentId, logId),
  ): Promise<NewFeedback> {
    const hasAssignment = input.assignmentId !== undefined;
    if (hasAssignment === (input.logId !== undefined)) {
      throw new ValidationError(
        'send exactly one of assignmentId and logId: the assignment or result the feedback is about',
      );
    }
    const values = feedbackValues(input.metrics);
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    const keys = live.experiment.segments;
    let target: Pick<NewFeedback, 'target' | 'version' | 'variantKey' | 'userId' | 'segments'> & {
      entered?: false;
    };
    if (hasAssignment) {
      const id = input.assignmentId!;
      const assigned = await this.deps.assignments.resolve(live, id);
      if (assigned === null) {
        throw new NotFoundError(`experiment '${slug}' issued no assignment with id '${id}'`);
      }
      // The id's UUID names the assignment (the rest says what it was issued for, and its check may be
      // either kind): a short key, whatever the user id's length, and one row per assignment.
      target = {
        target: `a:${id.slice(0, 36)}`,
        ...assigned,
        segments: targetSegments(keys, { assignmentId: id }),
      };
    } else {
      const id = input.logId!;
      const result = LOG_ID.test(id) ? await findResult(live.id, id) : undefined;
      if (!result) throw new NotFoundError(`experiment '${slug}' has no result with logId '${id}'`);
      const { version, variantKey, userId } = result;
      // The result's segments: its own context's values, else its assignment's (core/segments.ts). An
      // offline run's result (issue 40): its feedback is stored, never counted online.
      target = {
        target: `l:${id}`,
        version,
        variantKey,
        userId,
        segments: targetSegments(keys, result),
        ...(result.offline ? { entered: false as const } : {}),
      };
    }
    return {
      feedbackId: this.deps.newId(),
      experimentId: live.id,
      ...target,
      // Sticky experiments randomized users: the feedback joins its user's unit (ADR 0018).
      unit: live.experiment.assignment === 'sticky' && target.userId !== null,
      ...(target.entered === false ? { counted: false as const } : {}),
      values,
      comment: input.comment ?? null,
      createdAt: this.deps.now(),
      ...(live.declared ? { declared: live.declared } : {}),
    };
  }
}
