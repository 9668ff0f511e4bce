// What an experiment's metric definitions ask the writes to keep beyond each metric's own rollups (ADR 0035):
// the pairs of metrics of its ratios and covariates, and its capped metrics. Pure; computed once per change of
// the definitions (the experiment cache) and carried on each result and feedback item.
import type { MetricDefinition } from './metric-definitions.js';

/** A ratio (first / second) or an adjustment (metric first on covariate second). */
export interface Pair {
  role: 'ratio' | 'covariate';
  first: string;
  second: string;
}

/** What an experiment's definitions ask to keep beyond the metric rollups (null when nothing). */
export interface DeclaredSums {
  pairs: Pair[];
  /** Metrics with a cap: sticky experiments keep their users' bins (core/unit-bins.ts). */
  capped: string[];
}

/** The stored name of a pair: unambiguous whatever the metric names hold. */
export const pairId = (p: Pair): string => JSON.stringify([p.role, p.first, p.second]);

/** The pair a stored name stands for. */
export function pairOf(id: string): Pair {
  const [role, first, second] = JSON.parse(id) as [Pair['role'], string, string];
  return { role, first, second };
}

/** The pairs and capped metrics `metrics` declare, or null when none (the write path then does nothing more). */
export function declaredSums(metrics: readonly MetricDefinition[]): DeclaredSums | null {
  const pairs = new Map<string, Pair>();
  const capped = new Set<string>();
  for (const m of metrics) {
    if (m.numerator !== undefined && m.denominator !== undefined) {
      const p: Pair = { role: 'ratio', first: m.numerator, second: m.denominator };
      pairs.set(pairId(p), p);
    }
    if (m.covariate !== undefined) {
      const p: Pair = { role: 'covariate', first: m.name, second: m.covariate };
      pairs.set(pairId(p), p);
    }
    if (m.cap !== undefined) capped.add(m.name);
  }
  return pairs.size === 0 && capped.size === 0 ? null : { pairs: [...pairs.values()], capped: [...capped] };
}
