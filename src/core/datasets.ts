// Datasets (issue 40, ADR 0046): named, versioned lists of items that offline runs answer. What a dataset
// and its items may hold, what a change of items changes (a new version only when something did), and
// the events of changes. Pure.
import { ValidationError } from './errors.js';
import type { ChangeEvent, EventSource } from './events.js';
import { SLUG_PATTERN } from './experiment.js';
import type { JsonObject, JsonValue } from './json.js';

/** Items one request may send (more by appending). */
export const MAX_DATASET_ITEMS = 10_000;
export const MAX_ITEM_ID = 256;
export const MAX_DATASET_DESCRIPTION = 1000;

export interface Dataset {
  /** A UUIDv7: a dataset deleted and made again under its name is another dataset. */
  id: string;
  name: string;
  description: string;
  /** The current version: 1 when created, one more for each change of its items. */
  version: number;
  /** Items in the current version. */
  items: number;
  createdAt: string;
  updatedAt: string;
}

/** An item as a request sends it. */
export interface ItemInput {
  id?: string;
  input: unknown;
  expected?: unknown;
  metadata?: JsonObject | null;
}

/** An item as stored: its id and its JSON as text (expected and metadata null when absent or null). */
export interface ItemText {
  id: string;
  input: string;
  expected: string | null;
  metadata: string | null;
}

/** An item's content, as runs read it. */
export interface ItemContent {
  input: JsonValue;
  expected: JsonValue;
  metadata: JsonObject | null;
}

/** What a change of items did. */
export interface ItemChange {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
}

/** A dataset's name: the same shape as an experiment's slug (it travels in paths alike). */
export function validateDatasetName(name: unknown): string {
  if (typeof name !== 'string' || !SLUG_PATTERN.test(name)) {
    throw new ValidationError(
      'dataset name must be 1-100 characters of A-Z a-z 0-9 . _ - and start with a letter or digit',
    );
  }
  return name;
}

export function validateDatasetDescription(description: unknown): string {
  if (description === undefined) return '';
  if (typeof description !== 'string' || description.length > MAX_DATASET_DESCRIPTION) {
    throw new ValidationError(
      `description must be a string of at most ${MAX_DATASET_DESCRIPTION} characters`,
    );
  }
  return description;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ids are refused with control characters.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why an item id cannot be used, or null. */
function idProblem(id: unknown): string | null {
  if (typeof id !== 'string') return 'must be a string';
  if (id.length < 1 || id.length > MAX_ITEM_ID)
    return `must be 1-${MAX_ITEM_ID} characters (it has ${id.length})`;
  if (CONTROL.test(id)) return 'must not hold control characters';
  return null;
}

/**
 * The items of a request as stored: each id checked (or made by `newId` when absent) and used once, the
 * input present, metadata an object; the 400 names the first bad index and the first repeated id.
 */
export function itemTexts(items: readonly ItemInput[], newId: () => string): ItemText[] {
  if (items.length > MAX_DATASET_ITEMS) {
    throw new ValidationError(
      `items holds ${items.length} items; at most ${MAX_DATASET_ITEMS} a request (append the rest with POST /datasets/:name/items)`,
    );
  }
  const seen = new Map<string, number>();
  return items.map((item, i) => {
    const id = item.id ?? newId();
    const problem = idProblem(id);
    if (problem !== null) throw new ValidationError(`items[${i}].id ${problem}`);
    const first = seen.get(id);
    if (first !== undefined) {
      throw new ValidationError(
        `items[${i}].id '${id}' repeats items[${first}].id: ids are unique in a dataset`,
      );
    }
    seen.set(id, i);
    if (item.input === undefined) throw new ValidationError(`items[${i}] has no input`);
    const metadata = item.metadata ?? null;
    if (metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
      throw new ValidationError(`items[${i}].metadata must be a JSON object`);
    }
    return {
      id,
      input: JSON.stringify(item.input),
      expected: item.expected === undefined || item.expected === null ? null : JSON.stringify(item.expected),
      metadata: metadata === null ? null : JSON.stringify(metadata),
    };
  });
}

/** The value with every object's keys sorted: two JSON texts are the same value when these match. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sorted((value as Record<string, unknown>)[key]);
  return out;
}

function sameJson(a: string | null, b: string | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  return JSON.stringify(sorted(JSON.parse(a))) === JSON.stringify(sorted(JSON.parse(b)));
}

/** Whether two items hold the same JSON, whatever the key order each was sent in. */
export function sameItem(a: ItemText, b: ItemText): boolean {
  return sameJson(a.input, b.input) && sameJson(a.expected, b.expected) && sameJson(a.metadata, b.metadata);
}

/**
 * What sending `incoming` to a dataset whose current items include `current` (by id) does: items with a
 * new id are added, items whose content differs are changed, the others change nothing.
 */
export function diffItems(
  current: ReadonlyMap<string, ItemText>,
  incoming: readonly ItemText[],
): { added: ItemText[]; changed: ItemText[]; unchanged: number } {
  const added: ItemText[] = [];
  const changed: ItemText[] = [];
  let unchanged = 0;
  for (const item of incoming) {
    const was = current.get(item.id);
    if (was === undefined) added.push(item);
    else if (sameItem(was, item)) unchanged++;
    else changed.push(item);
  }
  return { added, changed, unchanged };
}

/** A stored item's content, parsed. */
export function itemContent(item: Omit<ItemText, 'id'>): ItemContent {
  return {
    input: JSON.parse(item.input) as JsonValue,
    expected: item.expected === null ? null : (JSON.parse(item.expected) as JsonValue),
    metadata: item.metadata === null ? null : (JSON.parse(item.metadata) as JsonObject),
  };
}

function event(src: EventSource, type: string, data: JsonObject): ChangeEvent {
  return { id: src.newId(), type, at: src.at, actor: src.actor, experiment: null, data };
}

/** `dataset.created`: its id, name, version 1 and item count (never the items: a dataset may be large). */
export function datasetCreated(src: EventSource, d: Dataset): ChangeEvent[] {
  return [event(src, 'dataset.created', { id: d.id, name: d.name, version: d.version, items: d.items })];
}

/** `dataset.changed`: the new version, its item count, and how many items were added, changed, removed. */
export function datasetChanged(src: EventSource, d: Dataset, change: ItemChange): ChangeEvent[] {
  const { added, changed, removed } = change;
  return [
    event(src, 'dataset.changed', {
      id: d.id,
      name: d.name,
      version: d.version,
      items: d.items,
      added,
      changed,
      removed,
    }),
  ];
}

export function datasetDeleted(src: EventSource, d: Dataset): ChangeEvent[] {
  return [event(src, 'dataset.deleted', { id: d.id, name: d.name, version: d.version, items: d.items })];
}
