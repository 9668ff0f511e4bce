// Metric definitions: what an experiment declares about its metrics (which way is better, what role
// each plays in the verdict). Pure. Definitions only change how rollups are read, never the rollups.
import { ValidationError } from './errors.js';
import { isJsonObject } from './json.js';

export const DIRECTIONS = ['increase', 'decrease'] as const;
export type Direction = (typeof DIRECTIONS)[number];
export const ROLES = ['primary', 'secondary', 'guardrail'] as const;
export type Role = (typeof ROLES)[number];
export const KINDS = ['mean', 'proportion'] as const;
/** What a numeric metric is compared on: its mean, or a quantile of its values (from write-time sketches). */
export const STATISTICS = ['mean', 'p50', 'p90', 'p95', 'p99'] as const;
export type Statistic = (typeof STATISTICS)[number];

export interface MetricDefinition {
  /** The name results log the metric under. */
  name: string;
  /** Which way is better. */
  direction: Direction;
  role: Role;
  /** Numbers are means and true/false values proportions; declaring the kind only checks it. */
  kind?: (typeof KINDS)[number];
  /** The smallest relative change worth detecting (0.05 = 5%): how many units a test needs. */
  minimumDetectableEffect?: number;
  /**
   * Guardrails: the change in the worse direction the team tolerates, relative (0.05 = at most 5% worse).
   * Absent: 0, no tolerated loss.
   */
  threshold?: number;
  /** Numeric metrics: compare the mean (default) or a quantile of the values. */
  statistic?: Statistic;
  /**
   * A ratio metric: `name` is not logged; it is Σ numerator / Σ denominator over each unit's values (a
   * call's, or a user's in sticky experiments), analysed by the delta method (ADR 0035).
   */
  numerator?: string;
  denominator?: string;
  /** Heavy tails: a unit's mean per call above the cap counts as the cap (docs/statistics.md). */
  cap?: Cap;
  /** Regression adjustment (CUPED): a metric the treatment cannot change, per unit (docs/statistics.md). */
  covariate?: string;
}

/** A fixed cap, or the percentile (in (0, 100)) of the units' values pooled over the variants. */
export type Cap = { value: number } | { percentile: number };

/** A definition as sent: the role defaults to 'secondary'. */
export type MetricDefinitionInput = Omit<MetricDefinition, 'role' | 'cap'> & {
  role?: Role;
  /** Checked by validateMetricDefinitions: exactly one of the two. */
  cap?: { value?: number; percentile?: number };
};

/** Most metric definitions per experiment (the metric cap is larger; definitions are for decisions). */
export const MAX_METRIC_DEFINITIONS = 50;

function oneOf<T extends string>(value: unknown, allowed: readonly T[], at: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new ValidationError(`${at} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
}

/** Validates a `metrics` list: unique non-empty names, a direction and a role each. */
export function validateMetricDefinitions(metrics: unknown): MetricDefinition[] {
  if (!Array.isArray(metrics) || metrics.length > MAX_METRIC_DEFINITIONS) {
    throw new ValidationError(`metrics must be an array of at most ${MAX_METRIC_DEFINITIONS} definitions`);
  }
  const seen = new Set<string>();
  return metrics.map((m: unknown, i): MetricDefinition => {
    const at = `metrics[${i}]`;
    if (!isJsonObject(m)) throw new ValidationError(`${at} must be an object`);
    const { name, direction, role, kind, minimumDetectableEffect, threshold, statistic } = m as Record<
      string,
      unknown
    >;
    const { numerator, denominator, cap, covariate } = m as Record<string, unknown>;
    if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
      throw new ValidationError(`${at}.name must be a metric name of 1-200 characters`);
    }
    if (seen.has(name)) throw new ValidationError(`${at}.name '${name}' is defined twice`);
    seen.add(name);
    const out: MetricDefinition = {
      name,
      direction: oneOf(direction, DIRECTIONS, `${at}.direction`),
      role: oneOf(role ?? 'secondary', ROLES, `${at}.role`),
    };
    if (kind !== undefined) out.kind = oneOf(kind, KINDS, `${at}.kind`);
    if (minimumDetectableEffect !== undefined) {
      const mde = minimumDetectableEffect;
      if (typeof mde !== 'number' || !(mde > 0) || !(mde <= 10)) {
        throw new ValidationError(
          `${at}.minimumDetectableEffect must be a relative change above 0 (0.05 for 5%), at most 10`,
        );
      }
      out.minimumDetectableEffect = mde;
    }
    if (threshold !== undefined) {
      if (typeof threshold !== 'number' || !(threshold >= 0) || !(threshold <= 10)) {
        throw new ValidationError(
          `${at}.threshold must be a relative change of at least 0 (0.05 for 5% worse), at most 10`,
        );
      }
      out.threshold = threshold;
    }
    if (statistic !== undefined) {
      out.statistic = oneOf(statistic, STATISTICS, `${at}.statistic`);
      if (out.statistic !== 'mean' && out.kind === 'proportion') {
        throw new ValidationError(
          `${at}.statistic '${out.statistic}' needs numeric values, not a proportion`,
        );
      }
    }
    addDerived(out, { numerator, denominator, cap, covariate }, at);
    return out;
  });
}

function metricName(value: unknown, at: string, name: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new ValidationError(`${at} must be a metric name of 1-200 characters`);
  }
  if (value === name) throw new ValidationError(`${at} must name another metric than '${name}' itself`);
  return value;
}

/** Ratio, cap and covariate: checked, and set on `out` (one of them per definition). */
function addDerived(out: MetricDefinition, d: Record<string, unknown>, at: string): void {
  const asked = (['numerator', 'denominator', 'cap', 'covariate'] as const).filter((k) => d[k] !== undefined);
  if (asked.length === 0) return;
  const ratio = d.numerator !== undefined || d.denominator !== undefined;
  if (ratio && (d.cap !== undefined || d.covariate !== undefined)) {
    throw new ValidationError(`${at}: a ratio metric takes no cap or covariate (not supported yet)`);
  }
  if (d.cap !== undefined && d.covariate !== undefined) {
    throw new ValidationError(
      `${at}: cap and covariate cannot be combined in one definition (not supported yet)`,
    );
  }
  if (out.statistic !== undefined && out.statistic !== 'mean') {
    throw new ValidationError(`${at}.${asked[0]} needs statistic 'mean' (got '${out.statistic}')`);
  }
  if (ratio) {
    if (d.numerator === undefined || d.denominator === undefined) {
      throw new ValidationError(`${at}: a ratio metric needs both numerator and denominator`);
    }
    if (out.kind === 'proportion')
      throw new ValidationError(`${at}: a ratio metric is a mean, not a proportion`);
    out.numerator = metricName(d.numerator, `${at}.numerator`, out.name);
    out.denominator = metricName(d.denominator, `${at}.denominator`, out.name);
    return;
  }
  if (d.covariate !== undefined) out.covariate = metricName(d.covariate, `${at}.covariate`, out.name);
  if (d.cap !== undefined) {
    if (out.kind === 'proportion')
      throw new ValidationError(`${at}.cap needs numeric values, not a proportion`);
    out.cap = validCap(d.cap, `${at}.cap`);
  }
}

function validCap(cap: unknown, at: string): Cap {
  const keys = isJsonObject(cap) ? Object.keys(cap) : [];
  const c = cap as Record<string, unknown>;
  if (keys.length === 1 && keys[0] === 'value' && typeof c.value === 'number' && Number.isFinite(c.value)) {
    return { value: c.value };
  }
  if (
    keys.length === 1 &&
    keys[0] === 'percentile' &&
    typeof c.percentile === 'number' &&
    c.percentile > 0 &&
    c.percentile < 100
  ) {
    return { percentile: c.percentile };
  }
  throw new ValidationError(
    `${at} must be {"value": a number} or {"percentile": a number above 0 and below 100}`,
  );
}

/** The definition of `name`, if the experiment declares one. */
export function findDefinition(
  metrics: readonly MetricDefinition[],
  name: string,
): MetricDefinition | undefined {
  return metrics.find((m) => m.name === name);
}
