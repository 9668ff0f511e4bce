// Local evaluation: the running experiments' definitions from GET /experiments/definitions (ETag /
// If-None-Match, refreshed every few seconds, the last good set kept when a fetch fails), each compiled
// once into what an in-process assignment needs.

import { type SavedGroups, savedGroups } from './conditions.js';
import { type CompiledEntry, compileEntry, type Entry, type EntryFields, evaluateEntry } from './entry.js';
import {
  type BucketRange,
  bucketRanges,
  chooseVariant,
  hashV2From,
  pickLastWeighted,
  pickWeighted,
  seedState,
} from './hash.js';
import { describeError, errorText, httpRequest } from './http.js';
import { checkKeyState } from './ids.js';
import type { JsonObject } from './types.js';
import type { Warnings } from './warnings.js';

/**
 * One experiment as GET /experiments/definitions describes it. The entry fields (targeting, coverage,
 * layer, overrides, defaultVariant) are missing from an older server's answer: everyone enters.
 */
export interface Definition extends EntryFields {
  slug: string;
  assignmentIdKey: number;
  version: number;
  assignment: 'sticky' | 'random';
  seed: string;
  variants: Array<{ key: string; trafficPercent: number; payload: JsonObject }>;
}

/** A definition prepared for the hot path. */
export interface CompiledDefinition {
  definition: Definition;
  sticky: boolean;
  seedState: number;
  ranges: BucketRange[];
  cumulative: Float64Array;
  /** checkKeyState(assignmentIdKey): the id check's state after the key. */
  keyState: number;
  /** Per variant, `.<version base 36>.<index base 36>.`: the id's middle. */
  middles: string[];
  /** Per variant, `.<version base 36>.x<index base 36>.`: the middle of a unit that did not enter. */
  outMiddles: string[];
  entry: CompiledEntry;
  keys: string[];
  payloads: JsonObject[];
}

export function compileDefinition(d: Definition): CompiledDefinition {
  const weights = d.variants.map((v) => v.trafficPercent / 100);
  const cumulative = new Float64Array(weights.length);
  let sum = 0;
  weights.forEach((w, i) => {
    sum += w;
    cumulative[i] = sum;
  });
  const version = d.version.toString(36);
  return {
    definition: d,
    sticky: d.assignment === 'sticky',
    seedState: seedState(d.seed),
    ranges: bucketRanges(weights.length, 1, weights),
    cumulative,
    keyState: checkKeyState(d.assignmentIdKey),
    middles: d.variants.map((_, i) => `.${version}.${i.toString(36)}.`),
    outMiddles: d.variants.map((_, i) => `.${version}.x${i.toString(36)}.`),
    entry: compileEntry(d),
    keys: d.variants.map((v) => v.key),
    payloads: d.variants.map((v) => v.payload),
  };
}

/** The variant index for `userId`, exactly as the server draws it. */
export function chooseIndex(
  c: CompiledDefinition,
  userId: string,
  random: () => number = Math.random,
): number {
  if (c.sticky) {
    const i = chooseVariant(hashV2From(c.seedState, userId), c.ranges);
    return i >= 0 ? i : pickLastWeighted(c.cumulative);
  }
  return pickWeighted(c.cumulative, random);
}

/**
 * Who enters and with which variant (ADR 0038): overrides, layer, targeting, coverage, then today's draw.
 * `context` is the assign's context (the attributes, with `userId` added unless it sets one).
 */
export function evaluate(
  c: CompiledDefinition,
  userId: string,
  context: JsonObject | null | undefined,
  groups: SavedGroups,
  random: () => number = Math.random,
): Entry {
  if (c.entry.everyone) return { index: chooseIndex(c, userId, random), inExperiment: true, reason: null };
  return evaluateEntry(
    c.entry,
    c.sticky,
    c.seedState,
    userId,
    context,
    groups,
    () => chooseIndex(c, userId, random),
    random,
  );
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The entry fields, when present, have the shapes ADR 0038 gives them. */
function entryFieldsOk(d: EntryFields): boolean {
  const layer = d.layer as unknown;
  return (
    (d.targeting == null || isObject(d.targeting)) &&
    (d.coverage === undefined || (typeof d.coverage === 'number' && d.coverage >= 0 && d.coverage <= 100)) &&
    (layer == null ||
      (isObject(layer) &&
        typeof layer.key === 'string' &&
        Array.isArray(layer.range) &&
        layer.range.length === 2 &&
        layer.range.every((x) => typeof x === 'number'))) &&
    (d.overrides === undefined ||
      (Array.isArray(d.overrides) &&
        d.overrides.every((o: unknown) => {
          if (!isObject(o)) return false;
          return typeof o.variant === 'string' && (Array.isArray(o.userIds) || isObject(o.condition));
        }))) &&
    (d.defaultVariant == null || typeof d.defaultVariant === 'string') &&
    (d.rollout == null ||
      (isObject(d.rollout) &&
        typeof d.rollout.variant === 'string' &&
        typeof d.rollout.control === 'string' &&
        typeof d.rollout.seed === 'string' &&
        typeof d.rollout.percent === 'number'))
  );
}

function isDefinition(x: unknown): x is Definition {
  const d = x as Definition;
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.slug === 'string' &&
    Number.isInteger(d.assignmentIdKey) &&
    Number.isInteger(d.version) &&
    (d.assignment === 'sticky' || d.assignment === 'random') &&
    typeof d.seed === 'string' &&
    Array.isArray(d.variants) &&
    d.variants.length > 0 &&
    d.variants.every((v) => typeof v?.key === 'string' && typeof v.trafficPercent === 'number') &&
    entryFieldsOk(d)
  );
}

export class Definitions {
  private compiled = new Map<string, CompiledDefinition>();
  /** The saved groups the definitions' conditions name (`groups` of the answer), as Sets. */
  groups: SavedGroups = new Map();
  /** Each definition's JSON, to reuse its compiled form when a refresh did not change it. */
  private sources = new Map<string, string>();
  private etag: string | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private fetching: Promise<void> | undefined;
  /** Aborts a fetch in flight when the client closes. */
  private readonly aborter = new AbortController();
  /** True once a set of definitions has been loaded (stale ones stay loaded when fetches fail). */
  loaded = false;
  /** Settles after the first fetch, successful or not. */
  readonly ready: Promise<void>;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs: number,
    refreshMs: number,
    private readonly warnings: Warnings,
  ) {
    this.ready = this.refresh();
    this.timer = setInterval(() => void this.refresh(), refreshMs);
    this.timer.unref?.();
  }

  get(slug: string): CompiledDefinition | undefined {
    return this.compiled.get(slug);
  }

  /** Fetches the definitions now (one fetch at a time). Never rejects. */
  refresh(): Promise<void> {
    if (this.aborter.signal.aborted) return Promise.resolve();
    this.fetching ??= this.fetchOnce().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.aborter.abort();
  }

  private async fetchOnce(): Promise<void> {
    try {
      const answer = await httpRequest(`${this.baseUrl}/experiments/definitions`, {
        method: 'GET',
        apiKey: this.apiKey,
        headers: this.etag !== undefined ? { 'if-none-match': this.etag } : {},
        timeoutMs: this.timeoutMs,
        signal: this.aborter.signal,
      });
      if (answer.status === 304) return;
      if (answer.status === 401 || answer.status === 403) {
        this.warnings.auth(`GET /experiments/definitions answered ${errorText(answer)}`);
        return;
      }
      const body = answer.body as { experiments?: unknown; groups?: unknown } | undefined;
      const list = body?.experiments;
      if (answer.status !== 200 || !Array.isArray(list)) {
        this.warnings.warn(
          'definitions',
          `GET /experiments/definitions answered ${errorText(answer)}; ${this.loaded ? 'keeping the definitions we have' : 'no definitions yet: assign answers defaults'}`,
        );
        return;
      }
      this.install(list, body?.groups);
      this.etag = answer.headers.get('etag') ?? undefined;
    } catch (err) {
      if (this.aborter.signal.aborted) return; // the client closed
      this.warnings.warn(
        'definitions',
        `GET /experiments/definitions failed (${describeError(err)}); ${this.loaded ? 'keeping the definitions we have' : 'no definitions yet: assign answers defaults'}`,
      );
    }
  }

  private install(list: unknown[], groups: unknown): void {
    const compiled = new Map<string, CompiledDefinition>();
    const sources = new Map<string, string>();
    for (const d of list) {
      if (!isDefinition(d)) {
        this.warnings.warn('definition-shape', 'a definition of an unexpected shape was skipped');
        continue;
      }
      const source = JSON.stringify(d);
      const old = this.compiled.get(d.slug);
      compiled.set(
        d.slug,
        old !== undefined && this.sources.get(d.slug) === source ? old : compileDefinition(d),
      );
      sources.set(d.slug, source);
    }
    this.compiled = compiled;
    this.sources = sources;
    this.groups = isObject(groups) ? savedGroups(groups as Record<string, unknown[]>) : new Map();
    this.loaded = true;
  }
}
