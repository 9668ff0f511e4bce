// Saved groups (ADR 0038): named lists of unit ids that conditions name with $inGroup / $notInGroup.
// What a group may hold, and the events of its changes. Pure.
import { ValidationError } from './errors.js';
import type { ChangeEvent, EventSource } from './events.js';
import { SLUG_PATTERN } from './experiment.js';

export type GroupValue = string | number;

export const MAX_GROUP_VALUES = 100_000;
export const MAX_GROUP_VALUE_LENGTH = 512;
export const MAX_GROUP_DESCRIPTION = 1000;

/** A group's key: the same shape as an experiment's slug (it travels in paths and conditions alike). */
export function validateGroupKey(key: unknown): string {
  if (typeof key !== 'string' || !SLUG_PATTERN.test(key)) {
    throw new ValidationError(
      'group key must be 1-100 characters of A-Z a-z 0-9 . _ - and start with a letter or digit',
    );
  }
  return key;
}

/**
 * The values as kept: the order sent, each value once (a string and a number are different values,
 * as $inGroup compares them). The 400 names the first bad index.
 */
export function validateGroupValues(values: unknown): GroupValue[] {
  if (!Array.isArray(values)) throw new ValidationError('values must be an array of strings or numbers');
  if (values.length > MAX_GROUP_VALUES) {
    throw new ValidationError(`values holds ${values.length} entries; at most ${MAX_GROUP_VALUES}`);
  }
  const seen = new Set<GroupValue>();
  const kept: GroupValue[] = [];
  for (let i = 0; i < values.length; i++) {
    const v: unknown = values[i];
    if (typeof v === 'string') {
      if (v.length < 1 || v.length > MAX_GROUP_VALUE_LENGTH) {
        throw new ValidationError(
          `values[${i}] must be a string of 1-${MAX_GROUP_VALUE_LENGTH} characters (it has ${v.length})`,
        );
      }
    } else if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new ValidationError(`values[${i}] must be a string or a finite number`);
    }
    if (seen.has(v)) continue;
    seen.add(v);
    // -0 is 0 to $inGroup (a Set) and to JSON alike.
    kept.push(v === 0 ? 0 : v);
  }
  return kept;
}

export function validateGroupDescription(description: unknown): string {
  if (description === undefined) return '';
  if (typeof description !== 'string' || description.length > MAX_GROUP_DESCRIPTION) {
    throw new ValidationError(`description must be a string of at most ${MAX_GROUP_DESCRIPTION} characters`);
  }
  return description;
}

/** How many values `after` has that `before` lacked, and the reverse. */
export function groupDiff(
  before: readonly GroupValue[],
  after: readonly GroupValue[],
): { added: number; removed: number } {
  const was = new Set(before);
  const now = new Set(after);
  let added = 0;
  let removed = 0;
  for (const v of now) if (!was.has(v)) added++;
  for (const v of was) if (!now.has(v)) removed++;
  return { added, removed };
}

function event(src: EventSource, type: string, data: ChangeEvent['data']): ChangeEvent {
  return { id: src.newId(), type, at: src.at, actor: src.actor, experiment: null, data };
}

/** `group.saved`: the key, the new size and what changed (never the values: a group may be large). */
export function groupSaved(
  src: EventSource,
  key: string,
  before: readonly GroupValue[] | undefined,
  after: readonly GroupValue[],
): ChangeEvent[] {
  const { added, removed } = groupDiff(before ?? [], after);
  return [
    event(src, 'group.saved', { key, size: after.length, added, removed, created: before === undefined }),
  ];
}

export function groupDeleted(src: EventSource, key: string, size: number): ChangeEvent[] {
  return [event(src, 'group.deleted', { key, size })];
}
