// The comparison of an offline run (issue 40): every variant against the control over the dataset's items
// both have, per metric (stats/paired.ts), Holm across the metrics of each variant, a verdict sentence as
// online ("B beats A on `correct`: +6.0 points [+2.1, +9.8] over 200 items, 41 wins / 29 losses"), and the
// items whose scores changed most, with both outputs. Pure.
import { adjustPValues } from '../stats/corrections.js';
import { comparePaired, type PairedComparison } from '../stats/paired.js';
import type { MetricDefinition } from './metric-definitions.js';

/** One result of a run: its item, trial and values (its own metrics with the feedback on it over them). */
export interface RunRow {
  variantKey: string;
  itemId: string;
  trial: number;
  values: Record<string, number | boolean>;
  output: unknown;
}

export interface MetricComparison extends PairedComparison {
  variant: string;
  /** Holm-adjusted paired t p-value across this variant's metrics. */
  adjustedPValue: number | null;
  /** The adjusted p-value is below alpha. */
  significant: boolean;
  /** Per the metric's declared direction: true better, false worse, null undeclared or not significant. */
  better: boolean | null;
}

export interface RunMetric {
  name: string;
  kind: 'mean' | 'proportion';
  direction: 'increase' | 'decrease' | null;
  comparisons: MetricComparison[];
}

export interface ChangedItem {
  itemId: string;
  metric: string;
  variant: string;
  difference: number;
  control: { mean: number; output: unknown };
  treatment: { mean: number; output: unknown };
}

export interface RunComparison {
  control: string;
  alpha: number;
  items: number;
  variants: Array<{ key: string; results: number; items: number }>;
  metrics: RunMetric[];
  verdict: { summary: string; sentences: string[] };
  changed: ChangedItem[];
}

export interface ComparisonOptions {
  control: string;
  alpha?: number;
  /** Only these metrics (default: every metric with a number or true/false value). */
  metrics?: readonly string[];
  definitions?: readonly MetricDefinition[];
  /** How many changed items to list (default 10). */
  changed?: number;
  /** Bootstrap resamples per comparison (default 2000; simulations use fewer). */
  resamples?: number;
}

const number = (v: number | boolean) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

function signed(x: number, digits: number): string {
  const s = Math.abs(x).toFixed(digits);
  return `${x < 0 ? '−' : '+'}${s}`;
}

/** A difference and its interval in the metric's words: points for pass/fail, else its own units. */
function amount(m: RunMetric, c: MetricComparison): string {
  const scale = m.kind === 'proportion' ? 100 : 1;
  const size = Math.max(
    Math.abs(c.difference.estimate * scale),
    ...(c.difference.ci ?? []).map((x) => Math.abs(x * scale)),
  );
  const digits = m.kind === 'proportion' ? 1 : size >= 100 ? 0 : size >= 1 ? 2 : 3;
  const unit = m.kind === 'proportion' ? ' points' : '';
  const ci =
    c.difference.ci === null
      ? ''
      : ` [${signed(c.difference.ci[0] * scale, digits)}, ${signed(c.difference.ci[1] * scale, digits)}]`;
  return `${signed(c.difference.estimate * scale, digits)}${unit}${ci}`;
}

function sentence(m: RunMetric, c: MetricComparison, control: string): string {
  const over = `over ${c.items} items, ${c.wins} wins / ${c.losses} losses`;
  if (!c.significant) {
    return `${c.variant} and ${control} do not differ detectably on \`${m.name}\`: ${amount(m, c)} ${over} (adjusted p = ${(c.adjustedPValue ?? 1).toPrecision(2)})`;
  }
  const verb =
    c.better === true
      ? 'beats'
      : c.better === false
        ? 'is worse than'
        : c.difference.estimate > 0
          ? 'is higher than'
          : 'is lower than';
  const p = c.adjustedPValue! < 0.0001 ? 'p < 0.0001' : `p = ${c.adjustedPValue!.toPrecision(2)}`;
  return `${c.variant} ${verb} ${control} on \`${m.name}\`: ${amount(m, c)} ${over} (${p})`;
}

/** Compares every variant of the run's rows against `o.control`. */
export function compareRun(rows: readonly RunRow[], o: ComparisonOptions): RunComparison {
  const alpha = o.alpha ?? 0.05;
  const byVariant = new Map<string, RunRow[]>();
  for (const r of rows) byVariant.set(r.variantKey, [...(byVariant.get(r.variantKey) ?? []), r]);
  const names = new Set<string>();
  const kinds = new Map<string, Set<'mean' | 'proportion'>>();
  for (const r of rows) {
    for (const [k, v] of Object.entries(r.values)) {
      if (typeof v !== 'number' && typeof v !== 'boolean') continue;
      names.add(k);
      const set = kinds.get(k) ?? new Set();
      set.add(typeof v === 'boolean' || v === 0 || v === 1 ? 'proportion' : 'mean');
      kinds.set(k, set);
    }
  }
  const wanted = (o.metrics ?? [...names].sort()).filter((n) => names.has(n));
  /** A variant's values of a metric: item → trials (each trial once: the last row of a trial wins). */
  const valuesOf = (variant: string, metric: string) => {
    const trials = new Map<string, Map<number, number>>();
    for (const r of byVariant.get(variant) ?? []) {
      const v = r.values[metric];
      if (v === undefined) continue;
      const t = trials.get(r.itemId) ?? new Map<number, number>();
      t.set(r.trial, number(v));
      trials.set(r.itemId, t);
    }
    return new Map([...trials].map(([id, t]) => [id, [...t.values()]]));
  };
  const treatments = [...byVariant.keys()].filter((k) => k !== o.control).sort();
  const metrics: RunMetric[] = wanted.map((name) => {
    const definition = o.definitions?.find((d) => d.name === name);
    const kind = kinds.get(name)?.has('mean') ? 'mean' : 'proportion';
    const control = valuesOf(o.control, name);
    return {
      name,
      kind,
      direction: definition?.direction ?? null,
      // A variant with no item in common with the control on this metric has nothing to compare.
      comparisons: treatments.flatMap((variant) => {
        const c = comparePaired(control, valuesOf(variant, name), {
          alpha,
          proportion: kind === 'proportion',
          ...(o.resamples === undefined ? {} : { resamples: o.resamples }),
        });
        if (c.items === 0) return [];
        // Wins are items where the treatment did better: lower, for a metric whose lower values are better.
        const turned = definition?.direction === 'decrease' ? { wins: c.losses, losses: c.wins } : {};
        return [{ ...c, ...turned, variant, adjustedPValue: null, significant: false, better: null }];
      }),
    };
  });
  // Holm across the metrics of each variant.
  for (const variant of treatments) {
    const of = metrics.flatMap((m) =>
      m.comparisons.filter((c) => c.variant === variant).map((c) => ({ m, c })),
    );
    const { adjusted } = adjustPValues(
      of.map(({ c }) => c.difference.pValue ?? Number.NaN),
      'holm',
    );
    of.forEach(({ m, c }, k) => {
      c.adjustedPValue = adjusted[k] ?? null;
      c.significant = c.adjustedPValue !== null && c.adjustedPValue < alpha;
      if (c.significant && m.direction !== null) {
        c.better = c.difference.estimate > 0 === (m.direction === 'increase');
      }
    });
  }
  const primary = o.definitions?.find((d) => d.role === 'primary' && wanted.includes(d.name))?.name;
  const ordered =
    primary === undefined
      ? metrics
      : [...metrics].sort((a, b) => (a.name === primary ? -1 : b.name === primary ? 1 : 0));
  const sentences = ordered.flatMap((m) => m.comparisons.map((c) => sentence(m, c, o.control)));
  const significant = ordered.flatMap((m) =>
    m.comparisons.filter((c) => c.significant).map((c) => sentence(m, c, o.control)),
  );
  const summary =
    rows.length === 0
      ? 'No results in this run yet.'
      : treatments.length === 0
        ? `Only ${o.control} has results in this run: nothing to compare.`
        : (significant[0] ??
          (ordered.length > 0 ? sentences[0]! : 'No metric with numbers or true/false values in this run.'));
  const allItems = new Set(rows.map((r) => r.itemId));
  return {
    control: o.control,
    alpha,
    items: allItems.size,
    variants: [o.control, ...treatments].map((key) => {
      const mine = byVariant.get(key) ?? [];
      return { key, results: mine.length, items: new Set(mine.map((r) => r.itemId)).size };
    }),
    metrics: ordered,
    verdict: { summary, sentences },
    changed: changedItems(byVariant, o.control, treatments, ordered[0]?.name, o.changed ?? 10),
  };
}

/** The items whose mean score moved most from the control to each variant, with an output of each. */
function changedItems(
  byVariant: ReadonlyMap<string, RunRow[]>,
  control: string,
  treatments: readonly string[],
  metric: string | undefined,
  limit: number,
): ChangedItem[] {
  if (metric === undefined) return [];
  const summarize = (variant: string) => {
    const items = new Map<string, { sum: number; n: number; output: unknown }>();
    for (const r of byVariant.get(variant) ?? []) {
      const v = r.values[metric];
      if (v === undefined) continue;
      const s = items.get(r.itemId) ?? { sum: 0, n: 0, output: r.output };
      s.sum += number(v);
      s.n++;
      items.set(r.itemId, s);
    }
    return items;
  };
  const base = summarize(control);
  const changed: ChangedItem[] = [];
  for (const variant of treatments) {
    for (const [itemId, t] of summarize(variant)) {
      const c = base.get(itemId);
      if (c === undefined) continue;
      const difference = t.sum / t.n - c.sum / c.n;
      if (difference === 0) continue;
      changed.push({
        itemId,
        metric,
        variant,
        difference,
        control: { mean: c.sum / c.n, output: c.output },
        treatment: { mean: t.sum / t.n, output: t.output },
      });
    }
  }
  return changed
    .sort((a, b) => Math.abs(b.difference) - Math.abs(a.difference) || a.itemId.localeCompare(b.itemId))
    .slice(0, limit);
}
