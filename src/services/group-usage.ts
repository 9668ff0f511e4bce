// Which experiments name a saved group (ADR 0038: a group may not be deleted while a non-archived
// experiment uses it), read from this instance's experiment table.
import { groupsOf } from '../core/condition-check.js';
import type { Experiment } from '../core/experiment.js';
import type { ExperimentCache } from './experiment-cache.js';

/** Where an experiment's conditions live (targeting, and overrides by condition). */
type Conditioned = { targeting?: unknown; overrides?: Array<{ condition?: unknown }> };

/** Every group key an experiment's targeting or override conditions name. */
export function groupsUsedBy(experiment: Experiment): Set<string> {
  // The targeting fields join Experiment's type elsewhere (issue 35); read them as they are stored.
  const e = experiment as Experiment & Conditioned;
  const keys = new Set(groupsOf(e.targeting ?? null));
  for (const o of Array.isArray(e.overrides) ? e.overrides : []) {
    for (const k of groupsOf(o?.condition ?? null)) keys.add(k);
  }
  return keys;
}

/** The slugs of non-archived experiments using `key`, in creation order. */
export function groupUsage(cache: Pick<ExperimentCache, 'list'>): (key: string) => string[] {
  return (key) =>
    cache
      .list()
      .filter((l) => l.experiment.status !== 'archived' && groupsUsedBy(l.experiment).has(key))
      .map((l) => l.experiment.slug);
}
