// POST /experiment/:slug/preview (ADR 0038): what assign would answer a unit, and the clause that decided,
// recording nothing; for an experiment in any status (a draft's targeting can be tried before it runs).
import type { RandomSource } from '../core/assignment.js';
import type { SavedGroups } from '../core/condition.js';
import { decide, type EntryReason } from '../core/entry.js';
import { explain } from '../core/entry-explain.js';
import { NotFoundError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import type { ExperimentCache } from './experiment-cache.js';

export interface PreviewAnswer {
  variant: string;
  payload: JsonObject;
  inExperiment: boolean;
  /** Why the unit did not enter; null when it entered. */
  reason: EntryReason | null;
  /** The deciding clause, in words. */
  explanation: string;
  /** The experiment's status: only a running or released experiment serves assign (404 otherwise). */
  status: string;
}

export interface PreviewDeps {
  experiments: Pick<ExperimentCache, 'find'>;
  groups: () => SavedGroups;
  random?: RandomSource;
}

export type Preview = (slug: string, userId: string, context?: JsonObject) => Promise<PreviewAnswer>;

export function createPreview(deps: PreviewDeps): Preview {
  const random = deps.random ?? Math.random;
  return async (slug, userId, context) => {
    const live = await deps.experiments.find(slug);
    if (!live) throw new NotFoundError(`no experiment with slug '${slug}'`);
    const { experiment } = live;
    const groups = deps.groups();
    const decision = decide(live.compiled, live.entry, userId, context, groups, random);
    const variant = experiment.variants[decision.index]!;
    let explanation = explain(experiment, decision, userId, context, groups);
    if (!experiment.active)
      explanation += ` (the experiment is ${experiment.status}: assign answers 404 until it runs)`;
    return {
      variant: variant.key,
      payload: variant.payload,
      inExperiment: decision.entered,
      reason: decision.reason,
      explanation,
      status: experiment.status,
    };
  };
}
