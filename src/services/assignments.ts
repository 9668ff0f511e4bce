// Assigning a variant: an in-memory lookup, a draw, and an exposure handed to the ingest pipeline.
import type { RandomSource } from '../core/assignment.js';
import { assignmentIdFor } from '../core/assignment-id.js';
import type { SavedGroups } from '../core/condition.js';
import { type Decision, decide, type EntryReason } from '../core/entry.js';
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
  /** False when the unit did not enter (ADR 0038): served the default (or an override's) variant, not counted. */
  inExperiment: boolean;
  /** Why a unit did not enter; absent when it entered. */
  reason?: EntryReason;
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
  /** The saved groups conditions may name (`$inGroup`), as held now. */
  groups?: () => SavedGroups;
}

const NO_GROUPS: SavedGroups = new Map();

/** The exposure goes to `ingest`, which never makes assign wait (ADR 0002). */
export type Assign = (slug: string, userId: string, context?: JsonObject) => Assignment;

/** What an assigner answers for the decision: assign's JSON, or an OpenFeature evaluation's. */
export type AnswerOf<T> = (live: LiveExperiment, decision: Decision, assignmentId: string) => T;

/** How assign's JSON ends after the assignment id, for units that entered and per reason for the others. */
const ENTERED_END = '","inExperiment":true}';
const OUT_END = {
  override: '","inExperiment":false,"reason":"override"}',
  layer: '","inExperiment":false,"reason":"layer"}',
  targeting: '","inExperiment":false,"reason":"targeting"}',
  coverage: '","inExperiment":false,"reason":"coverage"}',
} satisfies Record<EntryReason, string>;

export function createAssign(deps: AssignmentDeps): Assign {
  return createAssigner(deps, ({ compiled, experiment }, { index, reason }, assignmentId) => {
    const variant = experiment.variants[index]!;
    const answer: Assignment = {
      variant: variant.key,
      payload: variant.payload,
      assignmentId,
      inExperiment: reason === null,
      json: `${compiled.responsePrefix[index]}${assignmentId}${reason === null ? ENTERED_END : OUT_END[reason]}`,
    };
    if (reason !== null) answer.reason = reason;
    return answer;
  });
}

/**
 * The assign use case (lookup, draw, assignment id, exposure) with its answer made by `answer`: every
 * way of assigning (assign, OFREP's single evaluation) draws, names and records exposures alike.
 */
export function createAssigner<T>(deps: AssignmentDeps, answer: AnswerOf<T>) {
  const groups = deps.groups ?? (() => NO_GROUPS);
  return (slug: string, userId: string, context?: JsonObject): T => {
    const live = deps.experiments.lookup(slug);
    if (live === undefined) throw new NotFoundError(`no experiment with slug '${slug}'`);
    // 404 as the specification requires, but saying why and what to do.
    if (!live.experiment.active) throw new NotFoundError(whyNotServing(live.experiment));
    const { compiled, experiment } = live;
    const decision = decide(compiled, live.entry, userId, context, groups(), deps.random);
    const index = decision.index;
    const variant = experiment.variants[index]!;
    const assignmentId = assignmentIdFor(deps.newId(), live.id, {
      version: experiment.version,
      variantIndex: index,
      userId,
      ...(decision.entered ? {} : { entered: false }),
    });
    // A unit that did not enter leaves no exposure: the analysis and the SRM check see entered units only.
    if (!decision.entered) return answer(live, decision, assignmentId);
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
    return answer(live, decision, assignmentId);
  };
}
