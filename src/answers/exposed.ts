// What was exposed, as the CLI and the MCP tools say it: counted in the unit of the randomization (users in
// sticky experiments, calls in random ones), with the assign calls beside the users, since a user may call
// many times ("A 400 users (800 calls)"). The dashboard says it the same way (its format module).
import type { Analysis } from './analysis.js';
import { formatCount } from './format.js';

export interface Exposed {
  unit: 'user' | 'call';
  counts: Record<string, number>;
}

/**
 * The answer's `exposed`; from an older server without it, the sample-ratio check's units when it says
 * them (the same counts), else the assign calls.
 */
export function exposedOf(a: Analysis): Exposed {
  if (a.exposed) return a.exposed;
  if (a.srm.unit && a.srm.counts) return { unit: a.srm.unit, counts: a.srm.counts };
  return { unit: 'call', counts: a.exposures };
}

/** '1 user', '800 calls'. */
export function unitCount(n: number, unit: 'user' | 'call'): string {
  return `${formatCount(n)} ${unit}${n === 1 ? '' : 's'}`;
}

/** 'A 400 users (800 calls), B 398 users (790 calls)'; random: 'A 800 calls, B 790 calls'; 'none' without variants. */
export function exposedText(a: Analysis): string {
  const { unit, counts } = exposedOf(a);
  const entries = Object.entries(counts);
  if (entries.length === 0) return 'none';
  return entries
    .map(([key, n]) => {
      const calls = unit === 'user' ? ` (${unitCount(a.exposures[key] ?? 0, 'call')})` : '';
      return `${key} ${unitCount(n, unit)}${calls}`;
    })
    .join(', ');
}
