// Late feedback (issue 15; ADR 0018): a value that arrives after the result, counted for the variant of
// the assignment or result it names, upserted per metric and committed before the answer.
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import { metricKind } from '../core/rollups.js';
import type { FeedbackValue, NewFeedback } from '../core/writes.js';
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
  store: Pick<Store, 'findResult'>;
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

export class FeedbackService {
  constructor(private readonly deps: FeedbackDeps) {}

  async give(
    slug: string,
    input: FeedbackInput,
    record?: RecordAnswer<FeedbackReceipt>,
  ): Promise<FeedbackReceipt> {
    const hasAssignment = input.assignmentId !== undefined;
    if (hasAssignment === (input.logId !== undefined)) {
      throw new ValidationError(
        'send exactly one of assignmentId and logId: the assignment or result the feedback is about',
      );
    }
    const values = feedbackValues(input.metrics);
    const live = await this.deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    let target: Pick<NewFeedback, 'target' | 'version' | 'variantKey' | 'userId'>;
    if (hasAssignment) {
      const id = input.assignmentId!;
      const assigned = await this.deps.assignments.resolve(live, id);
      if (assigned === null) {
        throw new NotFoundError(`experiment '${slug}' issued no assignment with id '${id}'`);
      }
      // The id's UUID names the assignment (the rest says what it was issued for, and its check may be
      // either kind): a short key, whatever the user id's length, and one row per assignment.
      target = { target: `a:${id.slice(0, 36)}`, ...assigned };
    } else {
      const id = input.logId!;
      const result = LOG_ID.test(id) ? await this.deps.store.findResult(live.id, id) : undefined;
      if (!result) throw new NotFoundError(`experiment '${slug}' has no result with logId '${id}'`);
      target = { target: `l:${id}`, ...result };
    }
    const feedbackId = this.deps.newId();
    const feedback: NewFeedback = {
      feedbackId,
      experimentId: live.id,
      ...target,
      // Sticky experiments randomized users: the feedback joins its user's unit (ADR 0018).
      unit: live.experiment.assignment === 'sticky' && target.userId !== null,
      values,
      comment: input.comment ?? null,
      createdAt: this.deps.now(),
    };
    const receipt = { feedbackId };
    await this.deps.ingest.appendFeedback([feedback], record?.(receipt));
    return receipt;
  }
}
