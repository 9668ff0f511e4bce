// The local assignment (`local: true`): the same draw and sticky hash as the server over the loaded
// definitions, an id in the server's form, and an exposure for a unit that entered (none otherwise, ADR 0038).
import { defaultAssignment, USER_ID_RULE, userIdProblem } from './assignment.js';
import { describeError } from './http.js';
import { assignmentIdWith } from './ids.js';
import type { LocalDraw } from './internal.js';
import { type Definitions, evaluate } from './local.js';
import type { QueuedExposure } from './queue.js';
import type { Assignment, AssignOptions, JsonObject } from './types.js';
import type { Warnings } from './warnings.js';

/** Queues an exposure for POST /exposures. */
export type Expose = (item: QueuedExposure) => void;

/** AgentSplit.assignLocal of an open client: a local assignment, or the default (said through `warnings`). */
export function assignLocal<P>(
  definitions: Definitions | undefined,
  slug: string,
  userId: string,
  options: AssignOptions<P> | undefined,
  warnings: Warnings,
  expose: Expose,
): Assignment<P> {
  try {
    const c = definitions?.get(slug);
    if (c === undefined) {
      warnings.warn(
        'local:missing',
        definitions === undefined
          ? 'assignLocal needs the option local: true: default used'
          : definitions.loaded
            ? `experiment ${slug} is not among the running definitions: default used`
            : 'no definitions loaded yet: default used',
      );
      return defaultAssignment(slug, userId, options);
    }
    const problem = userIdProblem(userId);
    if (problem !== '') {
      // What the server answers 400 for: the same default as a refused remote assign.
      warnings.warn('local:user', `assign ${slug}: the userId ${problem} (${USER_ID_RULE}): default used`);
      return defaultAssignment(slug, userId, options);
    }
    const e = evaluate(c, userId, options?.context, definitions!.groups);
    const i = e.index;
    const now = Date.now();
    const assignmentId = assignmentIdWith(
      c.keyState,
      e.inExperiment ? c.middles[i]! : c.outMiddles[i]!,
      userId,
      now,
    );
    // A unit that did not enter leaves no exposure (ADR 0038): analysis and SRM see entered units only.
    if (e.inExperiment) {
      expose({
        kind: 'exposure',
        experiment: slug,
        assignmentId,
        context: options?.context,
        at: now,
      });
    }
    return {
      experiment: slug,
      userId,
      variant: c.keys[i]!,
      payload: c.payloads[i] as P,
      assignmentId,
      source: 'local',
      inExperiment: e.inExperiment,
      reason: e.reason,
    };
  } catch (err) {
    warnings.warn('local:error', `assign ${slug} failed (${describeError(err)}): default used`);
    return defaultAssignment(slug, userId, options);
  }
}

/**
 * The OpenFeature provider's draw of an open client (`unusable`: why it cannot reach the service, or ''):
 * the variant, its exposure recorded only if the caller takes it.
 */
export function drawLocal(
  definitions: Definitions | undefined,
  unusable: string,
  slug: string,
  userId: string,
  context: JsonObject | undefined,
  expose: Expose,
): LocalDraw {
  if (definitions === undefined) {
    const why = unusable !== '' ? unusable : 'the client was made without local: true';
    return { kind: 'not-local', message: `no local evaluation: ${why}` };
  }
  if (!definitions.loaded) {
    return {
      kind: 'not-loaded',
      message: 'no definitions loaded yet (GET /experiments/definitions has not answered)',
    };
  }
  const c = definitions.get(slug);
  if (c === undefined) {
    return {
      kind: 'not-found',
      message: `experiment ${slug} is not among the running experiments (unknown, or not running)`,
    };
  }
  const problem = userIdProblem(userId);
  if (problem !== '') {
    return { kind: 'bad-user', message: `the targetingKey ${problem} (${USER_ID_RULE})` };
  }
  const e = evaluate(c, userId, context, definitions.groups);
  const i = e.index;
  return {
    kind: 'ok',
    variant: c.keys[i]!,
    payload: c.payloads[i]!,
    experimentVersion: c.definition.version,
    inExperiment: e.inExperiment,
    reason: e.reason,
    expose: (context) => {
      const now = Date.now();
      const middle = e.inExperiment ? c.middles[i]! : c.outMiddles[i]!;
      const assignmentId = assignmentIdWith(c.keyState, middle, userId, now);
      if (!e.inExperiment) return assignmentId; // not entered: no exposure
      expose({ kind: 'exposure', experiment: slug, assignmentId, context, at: now });
      return assignmentId;
    },
  };
}
