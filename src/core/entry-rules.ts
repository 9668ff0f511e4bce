// Save-time validation of who enters (ADR 0038): targeting, coverage, layer, overrides, defaultVariant.
// Every problem names its path, so a 400 says what to fix. Pure.
import { isDeepStrictEqual } from 'node:util';
import { checkCondition, groupsOf } from './condition-check.js';
import { ValidationError } from './errors.js';
import { isJsonObject, type JsonObject } from './json.js';
import type { Variant } from './variants.js';

export interface Layer {
  key: string;
  /** [start, end) within [0, 1]. */
  range: [number, number];
}

/** Serves `variant` to the ids listed, or to the units whose attributes match `condition`. */
export interface Override {
  variant: string;
  userIds?: string[];
  condition?: JsonObject;
}

/** The fields that say who enters (Experiment holds them; core/entry-rules.ts validates them). */
export interface EntryRules {
  targeting: JsonObject | null;
  /** 0–100: the share of targeted units that enter. */
  coverage: number;
  layer: Layer | null;
  overrides: Override[];
  /** Served to units that do not enter; null: the first variant. */
  defaultVariant: string | null;
}

export const DEFAULT_ENTRY: EntryRules = {
  targeting: null,
  coverage: 100,
  layer: null,
  overrides: [],
  defaultVariant: null,
};

/** A layer's key: spelled like an experiment's slug. */
const LAYER_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const MAX_OVERRIDES = 50;
export const MAX_OVERRIDE_IDS = 10_000;
const MAX_ID_LENGTH = 512;

function fail(problems: string[]): never {
  const shown = problems.slice(0, 5).join('; ');
  throw new ValidationError(problems.length > 5 ? `${shown}; and ${problems.length - 5} more` : shown);
}

/** A condition, checked (and its saved groups known); null stays null (everyone). */
function validateCondition(value: unknown, path: string, knownGroup: (key: string) => boolean): JsonObject {
  const problems = checkCondition(value, path);
  if (problems.length > 0) fail(problems);
  const unknown = groupsOf(value).filter((g) => !knownGroup(g));
  if (unknown.length > 0) {
    fail([
      `${path} names saved groups that do not exist: ${unknown.join(', ')} (create them with PUT /groups/:key)`,
    ]);
  }
  return value as JsonObject;
}

export function validateTargeting(value: unknown, knownGroup: (key: string) => boolean): JsonObject | null {
  if (value === null) return null;
  return validateCondition(value, 'targeting', knownGroup);
}

export function validateCoverage(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 100) {
    throw new ValidationError(
      'coverage must be a number from 0 to 100 (the percent of targeted units that enter)',
    );
  }
  return value;
}

export function validateLayer(value: unknown): Layer | null {
  if (value === null) return null;
  if (!isJsonObject(value))
    throw new ValidationError('layer must be an object {key, range: [start, end]} or null');
  const { key, range } = value as Record<string, unknown>;
  if (typeof key !== 'string' || !LAYER_KEY.test(key)) {
    throw new ValidationError(
      'layer.key must be 1-100 characters of A-Z a-z 0-9 . _ - and start with a letter or digit',
    );
  }
  if (
    !Array.isArray(range) ||
    range.length !== 2 ||
    !range.every((x) => typeof x === 'number' && Number.isFinite(x)) ||
    !(range[0] >= 0 && range[0] < range[1] && range[1] <= 1)
  ) {
    throw new ValidationError(
      'layer.range must be [start, end] with 0 <= start < end <= 1 (fractions of the layer)',
    );
  }
  return { key, range: [range[0] as number, range[1] as number] };
}

export function validateOverrides(
  value: unknown,
  variants: readonly Variant[],
  knownGroup: (key: string) => boolean,
): Override[] {
  if (!Array.isArray(value) || value.length > MAX_OVERRIDES) {
    throw new ValidationError(`overrides must be an array of at most ${MAX_OVERRIDES} overrides`);
  }
  const keys = variants.map((v) => v.key);
  let ids = 0;
  return value.map((o: unknown, i): Override => {
    const at = `overrides[${i}]`;
    if (!isJsonObject(o))
      throw new ValidationError(`${at} must be an object {variant, userIds} or {variant, condition}`);
    const { variant, userIds, condition } = o as Record<string, unknown>;
    if (typeof variant !== 'string' || !keys.includes(variant)) {
      throw new ValidationError(`${at}.variant must name a variant (${keys.join(', ')})`);
    }
    if ((userIds === undefined) === (condition === undefined)) {
      throw new ValidationError(`${at} needs exactly one of userIds or condition`);
    }
    if (userIds !== undefined) {
      if (!Array.isArray(userIds) || userIds.length === 0) {
        throw new ValidationError(`${at}.userIds must be a non-empty array of user ids`);
      }
      const bad = userIds.findIndex(
        (u) => typeof u !== 'string' || u.length === 0 || u.length > MAX_ID_LENGTH,
      );
      if (bad >= 0)
        throw new ValidationError(`${at}.userIds[${bad}] must be a string of 1-${MAX_ID_LENGTH} characters`);
      ids += userIds.length;
      if (ids > MAX_OVERRIDE_IDS) {
        throw new ValidationError(
          `overrides list more than ${MAX_OVERRIDE_IDS} user ids in all: use a saved group and a condition`,
        );
      }
      return { variant, userIds: [...new Set(userIds as string[])] };
    }
    return { variant, condition: validateCondition(condition, `${at}.condition`, knownGroup) };
  });
}

export function validateDefaultVariant(value: unknown, variants: readonly Variant[]): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !variants.some((v) => v.key === value)) {
    throw new ValidationError(
      `defaultVariant must name a variant (${variants.map((v) => v.key).join(', ')}) or be null`,
    );
  }
  return value;
}

/** The saved groups the rules name (targeting and overrides' conditions), each once. */
export function groupsUsed(rules: Pick<EntryRules, 'targeting' | 'overrides'>): string[] {
  return groupsOf([rules.targeting, ...rules.overrides.map((o) => o.condition ?? null)]);
}

/** The rules' changes that alter who is randomized (a new version): targeting, coverage, layer. */
export function populationChanged(a: EntryRules, b: EntryRules): boolean {
  return (
    !isDeepStrictEqual(a.targeting, b.targeting) ||
    a.coverage !== b.coverage ||
    !isDeepStrictEqual(a.layer, b.layer)
  );
}
