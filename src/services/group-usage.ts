// Which experiments name a saved group (ADR 0038: a group may not be deleted while a non-archived
// experiment uses it), read from this instance's experiment table.
import { groupsUsed } from '../core/entry-rules.js';
import type { ExperimentCache } from './experiment-cache.js';

/** The slugs of non-archived experiments using `key`, in creation order. */
export function groupUsage(cache: Pick<ExperimentCache, 'list'>): (key: string) => string[] {
  return (key) =>
    cache
      .list()
      .filter((l) => l.experiment.status !== 'archived' && groupsUsed(l.experiment).includes(key))
      .map((l) => l.experiment.slug);
}
