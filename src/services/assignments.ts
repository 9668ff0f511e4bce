// Assigning a variant: an in-memory lookup, a draw, and an exposure handed to the ingest pipeline.
import { assignVariant, type RandomSource } from '../core/assignment.js';
import { assignmentIdFor } from '../core/assignment-id.js';
import { NotFoundError } from '../core/errors.js';
import { whyNotServing } from '../core/experiment.js';
import type { Exposure } from '../core/exposure.js';
import type { JsonObject } from '../core/json.js';
import { segmentValues } from '../core/segments.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export interface Assignment {
  variant: string;
  payload: JsonObject;
  assignmentId: string;
  /** The response body, serialized from the compiled prefix: payloads are stringified once per change. */
  json: string;
}

export interface AssignmentDeps {
  experiments: Pick<ExperimentCache, 'lookup'>;
  /** Serializes the exposure at once and writes it with a later batch (ingest/group-commit.ts). */
  ingest: { appendExposure(exposure: Exposure): void };
  random: RandomSource;
  newId: () => string;
  /** The current time, ISO 8601. */
  now: () => string;
}

/** The exposure goes to `ingest`, which never makes assign wait (ADR 0002). */
export type Assign = (slug: string, userId: string, context?: JsonObject) => Assignment;

/** What an assigner answers for the variant drawn: assign's JSON, or an OpenFeature evaluation's. */
export type AnswerOf<T> = (live: LiveExperiment, index: number, assignmentId: string) => T;

export function createAssign(deps: AssignmentDeps): Assign {
  return createAssigner(deps, ({ compiled, experiment }, index, assignmentId) => {
    const variant = experiment.variants[index]!;
    return {
      variant: variant.key,
      payload: variant.payload,
      assignmentId,
      json: `${compiled.responsePrefix[index]}${assignmentId}"}`,
    };
  });
}

/**
 * The assign use case (lookup, draw, assignment id, exposure) with its answer made by `answer`: every
 * way of assigning (assign, OFREP's single evaluation) draws, names and records exposures alike.
 */
export function createAssigner<T>(deps: AssignmentDeps, answer: AnswerOf<T>) {
  return (slug: string, userId: string, context?: JsonObject): T => {
    const live = deps.experiments.lookup(slug);
    if (live === undefined) throw new NotFoundError(`no experiment with slug '${slug}'`);
    // 404 as the specification requires, but saying why and what to do.
    if (!live.experiment.active) throw new NotFoundError(whyNotServing(live.experiment));
    const { compiled, experiment } = live;
    const index = assignVariant(compiled, userId, deps.random);
    const variant = experiment.variants[index]!;
    const assignmentId = assignmentIdFor(deps.newId(), live.id, {
      version: experiment.version,
      variantIndex: index,
      userId,
    });
    deps.ingest.appendExposure({
      assignmentId,
      experimentId: live.id,
      version: experiment.version,
      variantKey: variant.key,
      userId,
      context: context ?? null,
      createdAt: deps.now(),
      unit: experiment.assignment === 'sticky',
      segments: experiment.segments.length > 0 ? segmentValues(context, experiment.segments) : null,
    });
    return answer(live, index, assignmentId);
  };
}
