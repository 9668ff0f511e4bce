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
}

/** A definition as sent: the role defaults to 'secondary'. */
export type MetricDefinitionInput = Omit<MetricDefinition, 'role'> & { role?: Role };

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
    return out;
  });
}

/** The definition of `name`, if the experiment declares one. */
export function findDefinition(
  metrics: readonly MetricDefinition[],
  name: string,
): MetricDefinition | undefined {
  return metrics.find((m) => m.name === name);
}
