// How many distinct metric names an experiment analyses (ADR 0014), and which names of each result are
// beyond that cap. Pure: the store applies it to each batch, in commit order, before writing it.
import { metricKind, type RolledResult } from './rollups.js';

/** Distinct metric names analysed per experiment; further names are stored but not rolled up. */
export const MAX_METRICS_PER_EXPERIMENT = 200;

/**
 * Decides, result by result, which of its metric names each result rolls up: names its experiment
 * already rolls up, and new ones while the experiment has fewer than `cap`. The other names (only those
 * with values that would be rolled up: numbers and true/false) are over the cap and set as `overCap`.
 * `names(experimentId)` is the set of names an experiment rolls up; admitted names are added to it.
 */
export function applyMetricCap(
  results: RolledResult[],
  names: (experimentId: number) => Set<string>,
  cap = MAX_METRICS_PER_EXPERIMENT,
): void {
  for (const r of results) {
    r.overCap = null;
    if (!r.metrics) continue;
    let known: Set<string> | undefined;
    let over: Set<string> | undefined;
    for (const metric in r.metrics) {
      const value = r.metrics[metric];
      if (metricKind(value) === undefined) continue;
      known ??= names(r.experimentId);
      if (known.has(metric)) continue;
      if (known.size < cap) known.add(metric);
      else {
        over ??= new Set();
        over.add(metric);
      }
    }
    if (over) r.overCap = over;
  }
}
