// Owns the verdict of an experiment: which variant wins on the primary metric, within its guardrails, as one
// sentence a product manager can act on. Pure: it reads comparisons already computed (and corrected).
import type { MetricKind } from './arms.js';
import type { AnalysisMethod, ArmComparison, TestUsed } from './compare.js';
import type { GuardrailResult } from './guardrail.js';
import type { Direction, MetricRole } from './types.js';
import {
  about,
  and,
  bounds,
  chance,
  change,
  effect,
  percent,
  pValue,
  testLabel,
  type UnitWord,
  units,
} from './wording.js';

/** Below this many units in a variant, a normal approximation of its mean is not trusted for a decision. */
export const MIN_UNITS_PER_VARIANT = 30;

export type VerdictStatus =
  | 'winner'
  | 'no-winner-yet'
  | 'guardrail-failed'
  | 'sample-ratio-mismatch'
  | 'not-enough-data';

export interface VerdictVariant {
  key: string;
  /** Units (users, or calls) in this variant. */
  n: number;
  /** Treatments on primary and secondary metrics: compareArms against the control, after any correction. */
  comparison?:
    | (Pick<ArmComparison, 'absolute' | 'relative' | 'chanceToWin' | 'better' | 'worse'> & {
        /** The p-value that decides (after the correction when `corrected`). */
        pValue?: number | null;
        /** Before the correction. */
        rawPValue?: number | null;
        /** A correction covers this comparison: its pValue is adjusted. */
        corrected?: boolean;
        /** The test whose interval the sentence prints. */
        test?: TestUsed | null;
      })
    | null;
  /** Treatments on guardrail metrics: guardrailCheck against the control. */
  guardrail?:
    | (Pick<GuardrailResult, 'status' | 'threshold' | 'bound' | 'absolute' | 'relative'> & {
        test?: TestUsed | null;
      })
    | null;
  /** Primary metric: how many more units this variant needs for the metric's mde at 80% power; null: unknown. */
  moreUnits?: number | null;
}

export interface VerdictMetric {
  /** Also the metric's name in the sentence. */
  name: string;
  role: MetricRole;
  direction: Direction | null;
  kind: MetricKind;
  /** Key of the control variant. */
  control: string;
  /** Declared minimum detectable effect, relative (0.05 = 5%); null or absent: none. */
  mde?: number | null;
  /** Every variant, the control included. */
  variants: VerdictVariant[];
}

export interface VerdictInput {
  metrics: VerdictMetric[];
  srm: { mismatch: boolean | null; pValue: number | null };
  method: AnalysisMethod;
  /** What a unit is: { one: 'user', other: 'users' } or { one: 'call', other: 'calls' }. */
  unit: UnitWord;
}

export interface Verdict {
  status: VerdictStatus;
  /** winner: the winning variant (the control when every treatment is worse); guardrail-failed: the treatment. */
  variant?: string;
  /** The primary metric; guardrail-failed: the guardrail that failed. */
  metric?: string;
  summary: string;
}

type Comparison = NonNullable<VerdictVariant['comparison']>;
type Guardrail = NonNullable<VerdictVariant['guardrail']>;
interface Treatment {
  variant: VerdictVariant;
  comparison: Comparison;
}

/** The evidence for a comparison: 'p = 0.003' (adjusted when corrected) or '99% chance to be better'. */
function evidence(c: Comparison, method: AnalysisMethod): string {
  if (method === 'bayesian')
    return c.chanceToWin === null ? '' : `${chance(c.chanceToWin)} chance to be better`;
  const p = c.pValue ?? c.absolute.pValue;
  if (p === null || p === undefined) return '';
  return c.corrected && c.rawPValue !== p ? `${pValue(p)} after correction` : pValue(p);
}

const joined = (...parts: Array<string | null>) => parts.filter((p) => p).join(', ');

/** How far in the better direction: the lift (the difference when the lift is undefined), signed. */
function score(c: Comparison, direction: Direction): number {
  const value = c.relative.estimate ?? c.absolute.estimate ?? 0;
  return direction === 'increase' ? value : -value;
}

function best(treatments: Treatment[], direction: Direction): Treatment {
  return treatments.reduce((a, b) =>
    score(b.comparison, direction) > score(a.comparison, direction) ? b : a,
  );
}

/** The guardrails `key` fails, in metric order. */
function failedGuardrails(guardrails: VerdictMetric[], key: string): VerdictMetric[] {
  return guardrails.filter((g) => guardrailOf(g, key)?.status === 'failed');
}

function guardrailOf(g: VerdictMetric, key: string): Guardrail | null {
  return g.variants.find((v) => v.key === key)?.guardrail ?? null;
}

/** 'threshold 5%'. */
function limit(threshold: number): string {
  return `threshold ${percent(threshold)}`;
}

function guardrailFailure(g: VerdictMetric, key: string): string {
  return guardrailFailureOf(g.name, g.kind, guardrailOf(g, key)!);
}

/** 'fails the cost_usd guardrail: cost_usd is 30% higher [22%, 38%], worse than its 5% threshold'. */
export function guardrailFailureOf(name: string, kind: MetricKind, r: Guardrail): string {
  const moved = change(kind, r.absolute, r.relative);
  const shown = moved && `${name} is ${moved}${bounds(kind, r.absolute, r.relative, r.test)}`;
  const beyond = r.threshold > 0 ? `worse than its ${percent(r.threshold)} threshold` : 'significantly worse';
  return `fails the ${name} guardrail: ${joined(shown, beyond)}`;
}

/** How each guardrail stands for `key`: "within limit" only when it passed. */
function guardrailsOf(guardrails: VerdictMetric[], key: string): string[] {
  return guardrails.flatMap((g) => {
    const r = guardrailOf(g, key);
    if (!r) return [];
    const moved = change(g.kind, r.absolute, r.relative);
    if (r.status === 'passed') {
      const within = r.threshold > 0 ? `within its ${percent(r.threshold)} limit` : 'within limit';
      return [`${g.name} is ${moved ?? 'unchanged'} (guardrail, ${within})`];
    }
    if (r.bound === null) return [`${g.name} could not be compared (guardrail, inconclusive)`];
    const worse = worseBy(g, r.bound);
    const from = r.test ? ` (${testLabel(r.test)})` : '';
    return [
      worse === null
        ? `${g.name} guardrail inconclusive (${limit(r.threshold)})`
        : `${g.name} could still be ${worse}${from}; ${limit(r.threshold)}`,
    ];
  });
}

/** '7.9% lower' for a metric that should increase and whose interval reaches −7.9%; null if no loss is possible. */
function worseBy(g: VerdictMetric, bound: number): string | null {
  const loss = g.direction === 'increase' ? -bound : bound;
  if (!(loss > 0)) return null;
  return `${percent(loss)} ${g.direction === 'increase' ? 'lower' : 'higher'}`;
}

function srmVerdict(p: number | null): Verdict {
  const withP = p === null ? '' : ` (${pValue(p)})`;
  return {
    status: 'sample-ratio-mismatch',
    summary: `Traffic does not match the configured split${withP}: do not trust any effect until assignment is fixed.`,
  };
}

/**
 * In order: a sample-ratio mismatch; no primary metric (the first declared primary is THE primary), or one
 * without a direction; too few units (MIN_UNITS_PER_VARIANT in the control and in some treatment) or no
 * comparison computed; a winner (treatments significantly better, or the control when every treatment is
 * significantly worse, minus treatments that fail a guardrail; the best lift wins); a failed guardrail;
 * otherwise no winner yet, with the units still needed for the declared minimum detectable effect.
 */
export function decideVerdict(input: VerdictInput): Verdict {
  const { method, unit } = input;
  if (input.srm.mismatch === true) return srmVerdict(input.srm.pValue);
  const primary = input.metrics.find((m) => m.role === 'primary');
  if (!primary) {
    return {
      status: 'no-winner-yet',
      summary:
        'No primary metric is declared: declare one primary metric with a direction (which way is better) to get a verdict.',
    };
  }
  const { name, direction, kind } = primary;
  if (direction === null) {
    return {
      status: 'no-winner-yet',
      metric: name,
      summary: `${name} has no direction: declare whether it should increase or decrease to get a verdict.`,
    };
  }
  const control = primary.variants.find((v) => v.key === primary.control) ?? {
    key: primary.control,
    n: 0,
  };
  const others = primary.variants.filter((v) => v.key !== primary.control);
  const computed = (c: Comparison | null | undefined): c is Comparison =>
    !!c && (method === 'bayesian' ? c.chanceToWin !== null : (c.pValue ?? c.absolute.pValue) !== null);
  const eligible: Treatment[] = others.flatMap((variant) =>
    variant.n >= MIN_UNITS_PER_VARIANT && computed(variant.comparison)
      ? [{ variant, comparison: variant.comparison }]
      : [],
  );
  const counts = () => and([control, ...others].map((v) => `${v.key} has ${units(v.n, unit)}`));
  if (control.n < MIN_UNITS_PER_VARIANT || others.every((v) => v.n < MIN_UNITS_PER_VARIANT)) {
    return {
      status: 'not-enough-data',
      metric: name,
      summary: `Not enough data on ${name} yet: ${counts()}; each variant needs at least ${units(MIN_UNITS_PER_VARIANT, unit)}.`,
    };
  }
  if (eligible.length === 0) {
    return {
      status: 'not-enough-data',
      metric: name,
      summary: `Not enough data on ${name} yet: ${counts()}, but no comparison with ${control.key} could be computed.`,
    };
  }

  const guardrails = input.metrics.filter((m) => m.role === 'guardrail');
  const candidates = eligible.filter((t) => t.comparison.better === true);
  const controlWins =
    candidates.length === 0 &&
    eligible.length === others.length &&
    eligible.every((t) => t.comparison.worse === true);
  if (controlWins) {
    // Every treatment is worse: the control wins; the closest treatment shows by how much at least.
    const closest = best(eligible, direction);
    const c = closest.comparison;
    const beaten = others.map((v) => v.key);
    const lead = others.length === 1 ? `${closest.variant.key}` : `closest is ${closest.variant.key},`;
    return {
      status: 'winner',
      variant: control.key,
      metric: name,
      summary: `${control.key} (control) beats ${and(beaten)} on ${name}: ${lead} ${joined(
        effect(kind, c.absolute, c.relative, c.test),
        evidence(c, method),
      )}.`,
    };
  }
  const safe = candidates.filter((t) => failedGuardrails(guardrails, t.variant.key).length === 0);
  if (safe.length > 0) {
    const w = best(safe, direction);
    const c = w.comparison;
    const within = guardrailsOf(guardrails, w.variant.key);
    return {
      status: 'winner',
      variant: w.variant.key,
      metric: name,
      summary: `${w.variant.key} beats ${control.key} on ${name}: ${joined(effect(kind, c.absolute, c.relative, c.test), evidence(c, method))}${within.map((g) => `; ${g}`).join('')}.`,
    };
  }
  if (candidates.length > 0) {
    const dropped = best(candidates, direction);
    const c = dropped.comparison;
    const g = failedGuardrails(guardrails, dropped.variant.key)[0]!;
    return {
      status: 'guardrail-failed',
      variant: dropped.variant.key,
      metric: g.name,
      summary: `${dropped.variant.key} beats ${control.key} on ${name} (${joined(
        effect(kind, c.absolute, c.relative, c.test),
        evidence(c, method),
      )}) but ${guardrailFailure(g, dropped.variant.key)}; do not ship it.`,
    };
  }
  const failing = others.find((v) => failedGuardrails(guardrails, v.key).length > 0);
  if (failing) {
    const g = failedGuardrails(guardrails, failing.key)[0]!;
    return {
      status: 'guardrail-failed',
      variant: failing.key,
      metric: g.name,
      summary: `${failing.key} ${guardrailFailure(g, failing.key)}; no variant beats ${control.key} on ${name} yet.`,
    };
  }
  return {
    status: 'no-winner-yet',
    metric: name,
    summary: noWinnerYet(primary, control.key, eligible, input),
  };
}

function noWinnerYet(
  primary: VerdictMetric,
  controlKey: string,
  eligible: Treatment[],
  input: VerdictInput,
): string {
  const { name, kind } = primary;
  const top = best(eligible, primary.direction!);
  const c = top.comparison;
  const label = eligible.length === 1 ? top.variant.key : `best: ${top.variant.key}`;
  const status = `No variant beats ${controlKey} on ${name} yet (${label}, ${joined(
    effect(kind, c.absolute, c.relative, c.test),
    evidence(c, input.method),
  )})`;
  const needs = primary.variants.flatMap((v) => (typeof v.moreUnits === 'number' ? [v.moreUnits] : []));
  const target = primary.mde
    ? `a ${percent(primary.mde)} change in ${name}`
    : `the minimum detectable effect on ${name}`;
  if (needs.length === 0) {
    return primary.mde
      ? `${status}; keep collecting data.`
      : `${status}; keep collecting data, and declare a minimum detectable effect to know for how long.`;
  }
  const more = Math.max(...needs);
  if (more <= 0)
    return `${status}; there are enough ${input.unit.other} to detect ${target}, so any effect is likely smaller.`;
  return `${status}; about ${about(more)} more ${more === 1 ? input.unit.one : input.unit.other} per variant to detect ${target}.`;
}
