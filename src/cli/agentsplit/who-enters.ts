// Who enters an experiment (ADR 0038) in one line, for `experiments show` and `agentsplit target`.
// A field an older server does not send counts as its default (everyone enters).
import { formatPercent, truncate } from '../../answers/format.js';
import type { EntryRules } from '../../core/entry.js';
import { oneLine } from './api.js';

/** The longest condition shown; the whole one is in --json. */
const MAX_CONDITION = 80;

/**
 * `everyone`, or the rules that are not their default, e.g.
 * `targeting {"plan":{"$in":["pro"]}} · coverage 20% · layer prompts [0, 0.5) · 2 overrides · default B`.
 */
export function whoEnters(e: Partial<EntryRules>): string {
  const parts: string[] = [];
  if (e.targeting) parts.push(`targeting ${conditionText(e.targeting)}`);
  if (e.coverage !== undefined && e.coverage !== 100) parts.push(`coverage ${formatPercent(e.coverage)}`);
  if (e.layer) parts.push(`layer ${e.layer.key} ${rangeText(e.layer.range)}`);
  const overrides = e.overrides?.length ?? 0;
  if (overrides > 0) parts.push(`${overrides} override${overrides === 1 ? '' : 's'}`);
  if (e.defaultVariant) parts.push(`default ${e.defaultVariant}`);
  return parts.length === 0 ? 'everyone' : parts.join(' · ');
}

/** A condition as compact JSON on one line, cut to fit a terminal. */
export function conditionText(condition: unknown): string {
  return truncate(oneLine(JSON.stringify(condition)), MAX_CONDITION);
}

/** `[0, 0.5)`: a bucket range, start included, end not. */
export function rangeText(range: readonly number[]): string {
  return `[${range[0]}, ${range[1]})`;
}
