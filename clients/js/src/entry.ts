// Who enters an experiment, evaluated locally exactly as the server does (docs/adr/0038-who-enters.md,
// the server's core/entry.ts ported; the client imports nothing from the server): overrides, then the
// layer, then targeting, then coverage and the split.
import { type CompiledCondition, compileCondition, type SavedGroups } from './conditions.js';
import { type BucketRange, bucketRanges, chooseVariant, hashV2From, inNamespace, seedState } from './hash.js';
import type { EntryReason, JsonObject } from './types.js';

/** Why a unit did not enter: the step that stopped it. */
export type { EntryReason };

/** A layer (GrowthBook's namespace): the unit enters when hashV1("__" + key, id) is in [start, end). */
export interface Layer {
  key: string;
  range: [number, number];
}

/** Serves `variant` to the listed unit ids, or to the units whose attributes match `condition`. */
export type Override = { variant: string; userIds: string[] } | { variant: string; condition: JsonObject };

/** The entry rules of one definition, prepared once. */
export interface CompiledEntry {
  overrides: Array<{
    index: number;
    userIds: ReadonlySet<unknown> | null;
    condition: CompiledCondition | null;
  }>;
  layer: [string, number, number] | null;
  targeting: CompiledCondition | null;
  /** coverage / 100, clamped to [0, 1]. */
  coverage: number;
  /** The bucket ranges shrunk to the coverage (used only below 100%). */
  coveredRanges: BucketRange[];
  /** Index of the defaultVariant (the first variant when missing or unknown). */
  defaultIndex: number;
  /** No rule at all: everyone enters, by today's draw (the hot path skips the rest). */
  everyone: boolean;
  /** A rollout's split in place of the weights (variant and control as indexes); null: none. */
  rollout: { seedState: number; share: number; variant: number; control: number } | null;
}

/** A rollout as the definitions answer it (issue 38): hashV2(seed, id) < percent / 100 gets `variant`. */
export interface RolloutFields {
  variant: string;
  control: string;
  seed: string;
  percent: number;
}

/** What the definitions answer may carry for entry; every field is optional (an older server sends none). */
export interface EntryFields {
  targeting?: JsonObject | null;
  coverage?: number;
  layer?: Layer | null;
  overrides?: Override[];
  defaultVariant?: string | null;
  rollout?: RolloutFields | null;
}

export function compileEntry(
  d: EntryFields & { variants: Array<{ key: string; trafficPercent: number }> },
): CompiledEntry {
  const keys = d.variants.map((v) => v.key);
  const overrides: CompiledEntry['overrides'] = [];
  for (const o of d.overrides ?? []) {
    const { userIds, condition } = o as { userIds?: unknown; condition?: JsonObject };
    // An unknown variant (the server refuses one on save) serves the first, as the server's index does.
    overrides.push({
      index: Math.max(0, keys.indexOf(o.variant)),
      userIds: Array.isArray(userIds) ? new Set<unknown>(userIds) : null,
      condition: condition ? compileCondition(condition) : null,
    });
  }
  const coverage = Math.min(1, Math.max(0, (d.coverage ?? 100) / 100));
  const defaultIndex = d.defaultVariant == null ? 0 : Math.max(0, keys.indexOf(d.defaultVariant));
  const layer: [string, number, number] | null = d.layer
    ? [d.layer.key, d.layer.range[0], d.layer.range[1]]
    : null;
  const r = d.rollout;
  return {
    everyone: overrides.length === 0 && layer === null && d.targeting == null && coverage >= 1 && r == null,
    overrides,
    layer,
    targeting: d.targeting == null ? null : compileCondition(d.targeting),
    coverage,
    coveredRanges: bucketRanges(
      keys.length,
      coverage,
      d.variants.map((v) => v.trafficPercent / 100),
    ),
    defaultIndex,
    rollout:
      r == null
        ? null
        : {
            seedState: seedState(r.seed),
            share: r.percent / 100,
            variant: Math.max(0, keys.indexOf(r.variant)),
            control: Math.max(0, keys.indexOf(r.control)),
          },
  };
}

/** The attributes conditions see: the context, plus `userId` unless the context sets it. */
export function entryAttributes(
  userId: string,
  context: JsonObject | null | undefined,
): Record<string, unknown> {
  if (context == null) return { userId };
  return Object.hasOwn(context, 'userId') ? context : { ...context, userId };
}

/** The outcome: the variant index served, whether the unit entered, and if not, why. */
export interface Entry {
  index: number;
  inExperiment: boolean;
  reason: EntryReason | null;
}

/**
 * Evaluates the entry rules for `userId`. `split` is today's draw (used at coverage 100, so that draw is
 * unchanged); below 100 the sticky hash or a fresh draw must fall into a shrunk range.
 */
export function evaluateEntry(
  e: CompiledEntry,
  sticky: boolean,
  seedState: number,
  userId: string,
  context: JsonObject | null | undefined,
  groups: SavedGroups,
  split: () => number,
  random: () => number,
): Entry {
  let attributes: Record<string, unknown> | undefined;
  const attrs = () => {
    attributes ??= entryAttributes(userId, context);
    return attributes;
  };
  for (const o of e.overrides) {
    if (o.userIds?.has(userId) || o.condition?.matches(attrs(), groups)) {
      return { index: o.index, inExperiment: false, reason: 'override' };
    }
  }
  if (e.layer !== null && !inNamespace(userId, e.layer)) {
    return { index: e.defaultIndex, inExperiment: false, reason: 'layer' };
  }
  if (e.targeting !== null && !e.targeting.matches(attrs(), groups)) {
    return { index: e.defaultIndex, inExperiment: false, reason: 'targeting' };
  }
  if (e.coverage < 1) {
    const n = sticky ? hashV2From(seedState, userId) : random();
    const index = chooseVariant(n, e.coveredRanges);
    if (index < 0) return { index: e.defaultIndex, inExperiment: false, reason: 'coverage' };
    if (e.rollout === null) return { index, inExperiment: true, reason: null };
  }
  // A rollout splits by its own hash of the unit, whatever the mode (the server's core/entry.ts).
  const r = e.rollout;
  if (r !== null) {
    return {
      index: hashV2From(r.seedState, userId) < r.share ? r.variant : r.control,
      inExperiment: true,
      reason: null,
    };
  }
  return { index: split(), inExperiment: true, reason: null };
}
