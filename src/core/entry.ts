// Who enters an experiment (ADR 0038): overrides, then the layer, targeting, coverage, then the split.
// Compiled once per change of the experiment; `decide` is what assign, OFREP, MCP and preview all run.
// Pure: no I/O; the draw of random experiments is injected.
import {
  assignVariant,
  type BucketRange,
  bucketRanges,
  type CompiledExperiment,
  chooseVariant,
  hashV2,
  inNamespace,
  type RandomSource,
} from './assignment.js';
import { type CompiledCondition, compileCondition, type SavedGroups } from './condition.js';
import { DEFAULT_ENTRY, type EntryRules, type Layer, type Override } from './entry-rules.js';
import type { JsonObject } from './json.js';
import { inRollout, type RolloutServing } from './rollout.js';

/** Who enters: the rules' fields live with their validation (entry-rules.ts). */
export { DEFAULT_ENTRY, type EntryRules, type Layer, type Override };

/** Why a unit did not enter: the step of the order that stopped it. */
export const ENTRY_REASONS = ['override', 'layer', 'targeting', 'coverage'] as const;
export type EntryReason = (typeof ENTRY_REASONS)[number];

interface CompiledOverride {
  index: number;
  ids: ReadonlySet<string> | null;
  condition: CompiledCondition | null;
}

/** An experiment's entry rules, ready for the hot path; null from compileEntry when everyone enters. */
export interface CompiledEntry {
  overrides: CompiledOverride[];
  /** The layer as GrowthBook's namespace tuple. */
  layer: readonly [string, number, number] | null;
  targeting: CompiledCondition | null;
  /** Ranges shrunk by coverage; null at coverage 100 (the split is today's). */
  covered: BucketRange[] | null;
  /** Does any step read attributes (targeting, or an override's condition)? */
  readsAttributes: boolean;
  /** The index served to units that do not enter. */
  defaultIndex: number;
  /** A rollout's split in place of the experiment's (issue 38): by its own hash of the unit; else null. */
  rollout: CompiledRollout | null;
}

/** A rollout's serving rule with its variants as indexes. */
export interface CompiledRollout {
  seed: string;
  percent: number;
  variant: number;
  control: number;
}

export interface Decision {
  index: number;
  entered: boolean;
  reason: EntryReason | null;
}

const ENTERED_NONE = -1;

/** The decisions of entered units, one per variant index, made once: assign allocates none. */
const ENTERED: readonly Decision[] = Array.from({ length: 100 }, (_, index) =>
  Object.freeze({ index, entered: true, reason: null }),
);
const entered = (index: number): Decision => ENTERED[index] ?? { index, entered: true, reason: null };

function indexOf(keys: readonly string[], key: string | null): number {
  if (key === null) return 0;
  const i = keys.indexOf(key);
  return i >= 0 ? i : 0;
}

/** Null when the rules let everyone in with today's split (the common case: assign does no more work). */
export function compileEntry(
  rules: EntryRules,
  variantKeys: readonly string[],
  weights: number[],
  serving: RolloutServing | null = null,
): CompiledEntry | null {
  const { targeting, coverage, layer, overrides } = rules;
  if (targeting === null && coverage >= 100 && layer === null && overrides.length === 0 && serving === null) {
    return null;
  }
  const compiledOverrides = overrides.map((o) => ({
    index: indexOf(variantKeys, o.variant),
    ids: o.userIds ? new Set(o.userIds) : null,
    condition: o.condition ? compileCondition(o.condition) : null,
  }));
  return {
    overrides: compiledOverrides,
    layer: layer ? [layer.key, layer.range[0], layer.range[1]] : null,
    targeting: targeting ? compileCondition(targeting) : null,
    covered: coverage >= 100 ? null : bucketRanges(weights.length, coverage / 100, weights),
    readsAttributes: targeting !== null || compiledOverrides.some((o) => o.condition !== null),
    defaultIndex: indexOf(variantKeys, rules.defaultVariant),
    rollout:
      serving === null
        ? null
        : {
            seed: serving.seed,
            percent: serving.percent,
            variant: indexOf(variantKeys, serving.variant),
            control: indexOf(variantKeys, serving.control),
          },
  };
}

/** The attributes conditions see: the context, plus `userId` unless the context sets it. */
export function attributesOf(
  userId: string,
  context: JsonObject | undefined | null,
): Record<string, unknown> {
  if (!context) return { userId };
  return Object.hasOwn(context, 'userId') ? context : { ...context, userId };
}

/** The first override that serves `userId` (its position), or -1. */
function overrideFor(
  entry: CompiledEntry,
  userId: string,
  attributes: Record<string, unknown> | null,
  groups: SavedGroups,
): number {
  for (let i = 0; i < entry.overrides.length; i++) {
    const o = entry.overrides[i]!;
    if (o.ids?.has(userId) || (attributes !== null && o.condition?.matches(attributes, groups))) return i;
  }
  return ENTERED_NONE;
}

function out(entry: CompiledEntry, reason: EntryReason): Decision {
  return { index: entry.defaultIndex, entered: false, reason };
}

/**
 * Who `userId` is to the experiment, in the order of ADR 0038. `entry` null: everyone enters (today's
 * split). Random experiments draw from `random` (once); sticky ones hash.
 */
export function decide(
  compiled: CompiledExperiment,
  entry: CompiledEntry | null,
  userId: string,
  context: JsonObject | undefined | null,
  groups: SavedGroups,
  random: RandomSource,
  sticky = compiled.experiment.assignment === 'sticky',
): Decision {
  if (entry === null) {
    return entered(assignVariant(compiled, userId, random, sticky));
  }
  // Closures per call cost more than the conditions (measured): the attributes are built once, up front.
  const attributes = entry.readsAttributes ? attributesOf(userId, context) : null;
  if (entry.overrides.length > 0) {
    const o = overrideFor(entry, userId, attributes, groups);
    if (o >= 0) return { index: entry.overrides[o]!.index, entered: false, reason: 'override' };
  }
  if (entry.layer !== null && !inNamespace(userId, entry.layer)) return out(entry, 'layer');
  if (entry.targeting !== null && !entry.targeting.matches(attributes!, groups))
    return out(entry, 'targeting');
  if (entry.covered !== null) {
    const index = chooseVariant(sticky ? hashV2(compiled.experiment.seed, userId) : random(), entry.covered);
    if (index < 0) return out(entry, 'coverage');
    if (entry.rollout === null) return entered(index);
  }
  // A rollout splits by its own hash of the unit, whatever the experiment's mode: membership only grows.
  const r = entry.rollout;
  if (r !== null) return entered(inRollout(r.seed, userId, r.percent) ? r.variant : r.control);
  return entered(assignVariant(compiled, userId, random, sticky));
}
