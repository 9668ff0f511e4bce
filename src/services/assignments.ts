// Assigning a variant: an in-memory lookup, a draw, and an exposure handed to the background writer.
import { assignVariant, type RandomSource } from '../core/assignment.js';
import { NotFoundError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import type { ExposureRow } from '../store/schema.js';
import type { ExperimentService } from './experiments.js';

export interface Assignment {
  variant: string;
  payload: JsonObject;
  assignmentId: string;
  /** The response body, serialized from the compiled prefix: payloads are stringified once per change. */
  json: string;
}

export interface AssignmentDeps {
  experiments: Pick<ExperimentService, 'lookup'>;
  exposures: { appendExposure(row: ExposureRow): void };
  random: RandomSource;
  newId: () => string;
  /** The current time, ISO 8601. */
  now: () => string;
}

export type Assign = (slug: string, userId: string, context?: JsonObject) => Assignment;

export function createAssign(deps: AssignmentDeps): Assign {
  return (slug, userId, context) => {
    const live = deps.experiments.lookup(slug);
    if (!live?.experiment.active) {
      throw new NotFoundError(`no running experiment with slug '${slug}'`);
    }
    const { compiled, experiment } = live;
    const index = assignVariant(compiled, userId, deps.random);
    const variant = experiment.variants[index]!;
    const assignmentId = deps.newId();
    deps.exposures.appendExposure({
      assignment_id: assignmentId,
      experiment_id: live.id,
      experiment_version: experiment.version,
      variant_key: variant.key,
      user_id: userId,
      context: context === undefined ? null : JSON.stringify(context),
      created_at: deps.now(),
    });
    return {
      variant: variant.key,
      payload: variant.payload,
      assignmentId,
      json: `${compiled.responsePrefix[index]}${assignmentId}"}`,
    };
  };
}
