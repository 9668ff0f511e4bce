// OpenFeature evaluation (OFREP, ADR 0029): one flag (an experiment) evaluated as assign does, exposure
// included; every running flag a key may see evaluated at once, without exposures, with client-form ids.
import { assignVariant } from '../core/assignment.js';
import { clientAssignmentIdFor } from '../core/assignment-id.js';
import type { JsonObject } from '../core/json.js';
import { stableUuid } from '../core/ofrep.js';
import { type AssignmentDeps, createAssigner } from './assignments.js';
import type { ExperimentCache, LiveExperiment } from './experiment-cache.js';

export interface OfrepDeps extends AssignmentDeps {
  experiments: Pick<ExperimentCache, 'lookup' | 'list'>;
}

export interface Ofrep {
  /** One flag's evaluation as JSON text; records the exposure as assign does (404 and why when not running). */
  evaluate(slug: string, userId: string, context?: JsonObject): string;
  /** Every running flag the key may see (`allowed`, null: all) as `{"flags":[...]}`, sorted by key; no exposure. */
  evaluateAll(allowed: ReadonlySet<string> | null, userId: string): string;
}

/** The evaluation's JSON from the prefix compiled per variant (core/assignment.ts): the hot path's way. */
function evaluation(live: LiveExperiment, index: number, assignmentId: string): string {
  return `${live.compiled.ofrepPrefix[index]}${assignmentId}"}}`;
}

export function createOfrep(deps: OfrepDeps): Ofrep {
  const evaluate = createAssigner(deps, evaluation);
  return {
    evaluate,
    evaluateAll(allowed, userId) {
      const flags: string[] = [];
      const running = deps.experiments
        .list('running')
        .filter((live) => allowed === null || allowed.has(live.experiment.slug))
        .sort((a, b) => (a.experiment.slug < b.experiment.slug ? -1 : 1));
      for (const live of running) {
        const { experiment } = live;
        const index = assignVariant(live.compiled, userId, deps.random);
        // Sticky: the same id every time (the answer stays the same, so its ETag answers 304). Random: a
        // fresh draw and a fresh id on every evaluation, as assign's.
        const uuid =
          experiment.assignment === 'sticky' ? stableUuid(live.id, experiment.version, userId) : deps.newId();
        const id = clientAssignmentIdFor(uuid, live.id, {
          version: experiment.version,
          variantIndex: index,
          userId,
        });
        flags.push(evaluation(live, index, id));
      }
      return `{"flags":[${flags.join(',')}]}`;
    },
  };
}
