// The warnings a log answer carries about metrics it stored but will not analyse: values that are not
// numbers or true/false, and names beyond the experiment's cap. Each names a few and counts the rest.
import type { JsonObject } from './json.js';
import { someOf } from './messages.js';
import { MAX_METRIC_MAGNITUDE, metricKind } from './rollups.js';

/** Metrics named one by one in a log answer's warnings; the rest are counted. */
const NAMED = 5;

function whatItIs(value: unknown): string {
  if (value === null) return 'is null, not a number or true/false';
  if (Array.isArray(value)) return 'is an array, not a number or true/false';
  if (typeof value === 'number') {
    return `is beyond ±${MAX_METRIC_MAGNITUDE.toExponential().replace('+', '')} (its square would overflow the sums)`;
  }
  return `is ${typeof value === 'object' ? 'an object' : `a ${typeof value}`}, not a number or true/false`;
}

/**
 * One warning per metric name whose value will not be analysed (each name once, over all `metrics`),
 * at most NAMED of them and then one that counts the rest; [] when every value is analysable.
 */
export function unanalysedValueWarnings(metrics: Iterable<JsonObject | null | undefined>): string[] {
  const reasons = new Map<string, string>();
  for (const m of metrics) {
    if (!m) continue;
    for (const name in m) {
      const value = m[name];
      if (metricKind(value) === undefined && !reasons.has(name)) reasons.set(name, whatItIs(value));
    }
  }
  const warnings: string[] = [];
  for (const [name, reason] of reasons) {
    if (warnings.length === NAMED) {
      warnings.push(
        `and ${reasons.size - NAMED} more metrics that are not numbers or true/false: stored, not analysed`,
      );
      break;
    }
    warnings.push(`metric '${name}' ${reason}: stored, not analysed`);
  }
  return warnings;
}

/** The warning for names left out of analysis by the cap (ADR 0014); undefined when there are none. */
export function overCapWarning(names: readonly string[], slug: string, cap: number): string | undefined {
  if (names.length === 0) return undefined;
  const which = names.length === 1 ? `metric ${someOf(names)} is` : `metrics ${someOf(names, 3)} are`;
  return `${which} stored, not analysed: an experiment analyses at most ${cap} distinct metric names, and '${slug}' has them already`;
}
