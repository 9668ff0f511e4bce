// Experiments: their shape, validation rules and lifecycle (status transitions). Pure: no I/O. Their
// variants are in variants.ts, the decision made when one completes in decision.ts.
import { isDeepStrictEqual } from 'node:util';
import { type Decision, type DecisionInput, validateDecision } from './decision.js';
import {
  DEFAULT_ENTRY,
  type EntryRules,
  type Override,
  populationChanged,
  validateCoverage,
  validateDefaultVariant,
  validateLayer,
  validateOverrides,
  validateTargeting,
} from './entry-rules.js';
import { ConflictError, ValidationError } from './errors.js';
import type { JsonObject } from './json.js';
import {
  type MetricDefinition,
  type MetricDefinitionInput,
  validateMetricDefinitions,
} from './metric-definitions.js';
import { validateSegments } from './segments.js';
import { type Variant, validateVariants } from './variants.js';

export const STATUSES = ['draft', 'running', 'paused', 'completed', 'released', 'archived'] as const;
export type Status = (typeof STATUSES)[number];

/**
 * Whether an experiment in `status` serves assignments: running, or released (its rollout completed: every
 * unit that enters gets the released variant, issue 38).
 */
export function isActive(status: Status): boolean {
  return status === 'running' || status === 'released';
}
export const ASSIGNMENT_MODES = ['random', 'sticky'] as const;
export type AssignmentMode = (typeof ASSIGNMENT_MODES)[number];
/** What the guardrail monitor does when a guardrail fails: raise `guardrail.failed`, or also pause. */
export const GUARDRAIL_ACTIONS = ['notify', 'pause'] as const;
export type GuardrailAction = (typeof GUARDRAIL_ACTIONS)[number];
export const DEFAULT_GUARDRAIL_ACTION: GuardrailAction = 'notify';
/** Units each variant needs on a guardrail metric before the monitor judges the experiment. */
export const DEFAULT_MINIMUM_UNITS = 100;
export const MAX_MINIMUM_UNITS = 1_000_000_000;

export interface Experiment extends EntryRules {
  slug: string;
  name: string;
  description: string;
  status: Status;
  active: boolean;
  assignment: AssignmentMode;
  seed: string;
  variants: Variant[];
  /** Declared metrics: which way is better and their role in the verdict (editing them loses nothing). */
  metrics: MetricDefinition[];
  /** Context keys whose values split the analysis (GET …/analysis?segment=key; core/segments.ts). */
  segments: string[];
  /** What the guardrail monitor does when a guardrail fails (services/monitor.ts). */
  guardrailAction: GuardrailAction;
  /** Units each variant needs on a guardrail metric before the monitor judges the experiment. */
  minimumUnits: number;
  /** Set when completing (null before, or when completed without one). */
  decision: Decision | null;
  /** While `released`: the variant every unit that enters is served (its rollout completed); else null. */
  releasedVariant: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface NewExperiment {
  slug: string;
  name?: string;
  description?: string;
  status?: Status;
  assignment?: AssignmentMode;
  seed?: string;
  variants: Variant[];
  metrics?: MetricDefinitionInput[];
  segments?: string[];
  guardrailAction?: GuardrailAction;
  minimumUnits?: number;
  targeting?: JsonObject | null;
  coverage?: number;
  /** Checked by validateLayer (range is [start, end]). */
  layer?: { key: string; range: number[] } | null;
  overrides?: Override[];
  defaultVariant?: string | null;
}

export interface ExperimentChanges {
  status?: Status;
  variants?: Variant[];
  metrics?: MetricDefinitionInput[];
  segments?: string[];
  name?: string;
  description?: string;
  guardrailAction?: GuardrailAction;
  minimumUnits?: number;
  targeting?: JsonObject | null;
  coverage?: number;
  /** Checked by validateLayer (range is [start, end]). */
  layer?: { key: string; range: number[] } | null;
  overrides?: Override[];
  defaultVariant?: string | null;
  /** Only with `status: 'completed'`, or on a completed experiment; null removes it. */
  decision?: DecisionInput | null;
}

export const SLUG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Which statuses each status may move to. `archived` is reachable from anywhere and leads nowhere. */
export const TRANSITIONS: Record<Status, readonly Status[]> = {
  draft: ['running', 'archived'],
  running: ['paused', 'completed', 'archived'],
  paused: ['running', 'completed', 'archived'],
  completed: ['archived'],
  // Reached only by a completed rollout; running again takes new variants (a new version).
  released: ['running', 'archived'],
  archived: [],
};

export function validateSlug(slug: unknown): string {
  if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug)) {
    throw new ValidationError(
      'slug must be 1-100 characters of A-Z a-z 0-9 . _ - and start with a letter or digit',
    );
  }
  return slug;
}

export function validateGuardrailAction(action: unknown): GuardrailAction {
  if (typeof action === 'string' && (GUARDRAIL_ACTIONS as readonly string[]).includes(action)) {
    return action as GuardrailAction;
  }
  throw new ValidationError(`guardrailAction must be one of 'notify', 'pause'`);
}

export function validateMinimumUnits(units: unknown): number {
  if (typeof units !== 'number' || !Number.isInteger(units) || units < 1 || units > MAX_MINIMUM_UNITS) {
    throw new ValidationError(`minimumUnits must be an integer from 1 to ${MAX_MINIMUM_UNITS}`);
  }
  return units;
}

export function assertTransition(from: Status, to: Status): void {
  if (from === to) return;
  if (to === 'released') {
    throw new ConflictError(
      "an experiment becomes 'released' when a rollout of its variant completes: POST /experiment/:slug/rollout",
    );
  }
  const allowed = TRANSITIONS[from];
  if (!allowed.includes(to)) {
    const options = allowed.length > 0 ? allowed.join(', ') : 'none';
    throw new ConflictError(
      `cannot change status from '${from}' to '${to}'; allowed from '${from}': ${options}`,
    );
  }
}

/** Does a saved group of this key exist? (Conditions naming an unknown group are refused.) */
export type KnownGroup = (key: string) => boolean;
const NO_GROUPS: KnownGroup = () => false;

/** The experiment once a rollout of `variant` completed: released, serving it to everyone who enters. */
export function release(current: Experiment, variant: string, now: string): Experiment {
  return { ...current, status: 'released', active: true, releasedVariant: variant, updatedAt: now };
}

/** Builds a new experiment from a validated create request. */
export function createExperiment(
  input: NewExperiment,
  now: string,
  knownGroup: KnownGroup = NO_GROUPS,
): Experiment {
  const slug = validateSlug(input.slug);
  const status = input.status ?? 'draft';
  if (status !== 'draft' && status !== 'running') {
    throw new ValidationError(`a new experiment's status must be 'draft' or 'running' (got '${status}')`);
  }
  const variants = validateVariants(input.variants);
  return {
    slug,
    name: input.name ?? slug,
    description: input.description ?? '',
    status,
    active: isActive(status),
    assignment: input.assignment ?? 'random',
    seed: input.seed ?? slug,
    variants,
    metrics: validateMetricDefinitions(input.metrics ?? []),
    segments: validateSegments(input.segments ?? []),
    guardrailAction: validateGuardrailAction(input.guardrailAction ?? DEFAULT_GUARDRAIL_ACTION),
    minimumUnits: validateMinimumUnits(input.minimumUnits ?? DEFAULT_MINIMUM_UNITS),
    decision: null,
    releasedVariant: null,
    targeting: validateTargeting(input.targeting ?? null, knownGroup),
    coverage: validateCoverage(input.coverage ?? DEFAULT_ENTRY.coverage),
    layer: validateLayer(input.layer ?? null),
    overrides: validateOverrides(input.overrides ?? [], variants, knownGroup),
    defaultVariant: validateDefaultVariant(input.defaultVariant ?? null, variants),
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Applies a PATCH. Changing variants (keys, payloads or weights) bumps `version`, so exposures and
 * results made under different variant definitions can be told apart.
 */
export function applyChanges(
  current: Experiment,
  changes: ExperimentChanges,
  now: string,
  knownGroup: KnownGroup = NO_GROUPS,
): Experiment {
  // Archived is the end of an experiment's life: its variants and results are a closed record.
  if (changes.status !== undefined) assertTransition(current.status, changes.status);
  if (current.status === 'archived') {
    throw new ConflictError(
      `experiment '${current.slug}' is archived and can no longer be changed; create a new experiment instead`,
    );
  }
  const next: Experiment = { ...current, updatedAt: now };
  if (changes.name !== undefined) next.name = changes.name;
  if (changes.description !== undefined) next.description = changes.description;
  if (changes.status !== undefined) {
    assertTransition(current.status, changes.status);
    if (changes.status === 'running' && current.status === 'released' && changes.variants === undefined) {
      throw new ConflictError(
        `experiment '${current.slug}' is released (everyone gets ${current.releasedVariant}): to test again, ` +
          'send new variants with {"status": "running"}; they start a new version',
      );
    }
    next.status = changes.status;
    next.active = isActive(changes.status);
    if (changes.status !== 'released') next.releasedVariant = null;
  }
  // Definitions change how rollups are read, not what was assigned: no new version.
  if (changes.metrics !== undefined) next.metrics = validateMetricDefinitions(changes.metrics);
  // Segments count results from when they are declared: results committed before have no value.
  if (changes.segments !== undefined) next.segments = validateSegments(changes.segments);
  if (changes.guardrailAction !== undefined) {
    next.guardrailAction = validateGuardrailAction(changes.guardrailAction);
  }
  if (changes.minimumUnits !== undefined) next.minimumUnits = validateMinimumUnits(changes.minimumUnits);
  if (changes.variants !== undefined) {
    const variants = validateVariants(changes.variants);
    // Compared as values, not text: key order inside payloads is not a change (same weights, same users).
    if (!isDeepStrictEqual(variants, current.variants)) {
      next.variants = variants;
      next.version = current.version + 1;
    }
  }
  applyEntryChanges(current, next, changes, knownGroup);
  if (changes.decision !== undefined) next.decision = decisionOf(current, changes, next, now);
  return next;
}

/** A decision goes with completing; naming the variants of `next`, not a new version (nothing reassigns). */
function decisionOf(
  current: Experiment,
  changes: ExperimentChanges,
  next: Experiment,
  now: string,
): Decision | null {
  if (next.status !== 'completed') {
    throw new ValidationError(
      `a decision goes with completing the experiment: send it with {"status": "completed"}, or on a ` +
        `completed experiment to correct it ('${current.slug}' would be ${next.status})`,
    );
  }
  return changes.decision === null ? null : validateDecision(changes.decision, next.variants, now);
}

/**
 * Who enters (ADR 0038). Overrides and the default variant must name variants of the (new) variants,
 * so they are checked again when variants change; targeting, coverage and layer make a new version
 * (the population changed), overrides and the default do not (who is randomized is the same).
 */
function applyEntryChanges(
  current: Experiment,
  next: Experiment,
  changes: ExperimentChanges,
  known: KnownGroup,
): void {
  if (changes.targeting !== undefined) next.targeting = validateTargeting(changes.targeting, known);
  if (changes.coverage !== undefined) next.coverage = validateCoverage(changes.coverage);
  if (changes.layer !== undefined) next.layer = validateLayer(changes.layer);
  if (changes.overrides !== undefined || changes.variants !== undefined) {
    next.overrides = validateOverrides(changes.overrides ?? next.overrides, next.variants, known);
  }
  if (changes.defaultVariant !== undefined || changes.variants !== undefined) {
    next.defaultVariant = validateDefaultVariant(
      changes.defaultVariant !== undefined ? changes.defaultVariant : next.defaultVariant,
      next.variants,
    );
  }
  if (next.version === current.version && populationChanged(current, next))
    next.version = current.version + 1;
}

/**
 * Fields of an experiment a PATCH cannot set, and why: naming them is a mistake worth a 400, where
 * unknown fields are ignored.
 */
const READ_ONLY: Record<string, string> = {
  slug: 'it names the experiment',
  active: "it follows status (true exactly when 'running' or 'released')",
  releasedVariant: 'a rollout that completes sets it',
  version: 'it goes up by itself when variants change',
  assignment: 'switching modes would reassign users mid-experiment',
  seed: 'a new seed would reassign sticky users mid-experiment',
  createdAt: 'it is set by the service',
  updatedAt: 'it is set by the service',
};

/** ValidationError naming every read-only field in a PATCH body. */
export function assertChangeable(changes: object): void {
  const named = Object.keys(changes).filter((k) => Object.hasOwn(READ_ONLY, k));
  if (named.length === 0) return;
  const reasons = named.map((k) => `${k} (${READ_ONLY[k]})`).join(', ');
  throw new ValidationError(`these fields cannot be changed: ${reasons}`);
}

/** Why an experiment that is not running serves no assignments, and how to change that. */
export function whyNotServing(e: Experiment): string {
  const why = `experiment '${e.slug}' is ${e.status}: only a running or released experiment serves assignments`;
  return TRANSITIONS[e.status].includes('running')
    ? `${why}; start it with PATCH /experiment/${e.slug} {"status": "running"}`
    : `${why}, and a ${e.status} experiment cannot run again; create a new experiment`;
}

export function findVariant(experiment: Experiment, key: string): Variant | undefined {
  return experiment.variants.find((v) => v.key === key);
}
