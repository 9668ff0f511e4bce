// Assigning a variant: an in-memory lookup, a draw, and an exposure handed to the background writer.
import { assignVariant, type RandomSource } from '../core/assignment.js';
import { NotFoundError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import { storedExposureJson } from '../store/exposure-form.js';
import type { PendingExposure } from '../store/schema.js';
import type { ExperimentCache } from './experiment-cache.js';

export interface Assignment {
  variant: string;
  payload: JsonObject;
  assignmentId: string;
  /** The response body, serialized from the compiled prefix: payloads are stringified once per change. */
  json: string;
}

export interface AssignmentDeps {
  experiments: Pick<ExperimentCache, 'lookup'>;
  exposures: { appendExposure(exposure: PendingExposure): void };
  random: RandomSource;
  newId: () => string;
  /** The current time, ISO 8601. */
  now: () => string;
}

/**
 * `requestJson`, when given, is the request body's text holding only `userId` and `context` (see
 * `isStorableRequestText`): the exposure then stores it as it is instead of serializing again (ADR 0009).
 */
export type Assign = (slug: string, userId: string, context?: JsonObject, requestJson?: string) => Assignment;

export function createAssign(deps: AssignmentDeps): Assign {
  return (slug, userId, context, requestJson) => {
    const live = deps.experiments.lookup(slug);
    if (!live?.experiment.active) {
      throw new NotFoundError(`no running experiment with slug '${slug}'`);
    }
    const { compiled, experiment } = live;
    const index = assignVariant(compiled, userId, deps.random);
    const variant = experiment.variants[index]!;
    const assignmentId = deps.newId();
    deps.exposures.appendExposure({
      experimentId: live.id,
      version: experiment.version,
      variantKey: variant.key,
      // Serialized now, so what waits for the writer is one short string (cheap to keep, cheap to send).
      json: storedExposureJson(
        assignmentId,
        variant.key,
        compiled.variantKeyJson[index]!,
        deps.now(),
        { userId, context },
        requestJson,
      ),
    });
    return {
      variant: variant.key,
      payload: variant.payload,
      assignmentId,
      json: `${compiled.responsePrefix[index]}${assignmentId}"}`,
    };
  };
}
