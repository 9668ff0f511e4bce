// OpenFeature evaluation (OFREP, ADR 0029): one flag (an experiment) evaluated as assign does, exposure
// included; every running flag a key may see evaluated at once, without exposures, with client-form ids.
import { clientAssignmentIdFor } from '../core/assignment-id.js';
import { type Decision, decide, type EntryReason } from '../core/entry.js';
import type { JsonObject } from '../core/json.js';
import { stableUuid } from '../core/ofrep.js';
import { type AssignmentDeps, createAssigner } from './assignments.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export interface OfrepDeps extends AssignmentDeps {
  experiments: Pick<ExperimentCache, 'lookup' | 'serving'>;
}

export interface Ofrep {
  /** One flag's evaluation as JSON text; records the exposure as assign does (404 and why when not running). */
  evaluate(slug: string, userId: string, context?: JsonObject): string;
  /** Every running flag the key may see (`allowed`, null: all) as `{"flags":[...]}`, sorted by key; no exposure. */
  evaluateAll(allowed: ReadonlySet<string> | null, userId: string, context?: JsonObject): string;
}

/**
 * OpenFeature's reasons (ADR 0038): an override is a rule that targeted the unit (TARGETING_MATCH), an
 * entered unit was split (SPLIT), a unit kept out gets the default (DEFAULT); metadata says which step.
 */
const REASON = {
  override: 'TARGETING_MATCH',
  layer: 'DEFAULT',
  targeting: 'DEFAULT',
  coverage: 'DEFAULT',
} satisfies Record<EntryReason, string>;

/** The evaluation's JSON from the pieces compiled per variant (core/assignment.ts): the hot path's way. */
function evaluation(live: LiveExperiment, { index, reason }: Decision, assignmentId: string): string {
  const { ofrepHead, ofrepTail } = live.compiled;
  if (reason === null) return `${ofrepHead}SPLIT${ofrepTail[index]}${assignmentId}","inExperiment":true}}`;
  return `${ofrepHead}${REASON[reason]}${ofrepTail[index]}${assignmentId}","inExperiment":false,"entryReason":"${reason}"}}`;
}

export function createOfrep(deps: OfrepDeps): Ofrep {
  const evaluate = createAssigner(deps, evaluation);
  return {
    evaluate,
    evaluateAll(allowed, userId, context) {
      const groups = deps.groups?.() ?? new Map();
      const flags: string[] = [];
      const running = deps.experiments
        .serving()
        .filter((live) => allowed === null || allowed.has(live.experiment.slug))
        .sort((a, b) => (a.experiment.slug < b.experiment.slug ? -1 : 1));
      for (const live of running) {
        const { experiment } = live;
        // The same variant and id at every evaluation, random experiments included (drawn by the sticky
        // hash here): the web provider polls and applies each answer, so a redraw would show a user another
        // variant mid-session than the one its posted exposure counted; the same bytes also answer 304.
        const decision = decide(live.compiled, live.entry, userId, context, groups, Math.random, true);
        const uuid = stableUuid(live.id, experiment.version, userId);
        const id = clientAssignmentIdFor(uuid, live.id, {
          version: experiment.version,
          variantIndex: decision.index,
          userId,
          ...(decision.entered ? {} : { entered: false }),
        });
        flags.push(evaluation(live, decision, id));
      }
      return `{"flags":[${flags.join(',')}]}`;
    },
  };
}
