// The answer of GET /runs/:id/comparison (issue 40) as its text readers take it (agentsplit runs compare,
// MCP's get_run_comparison). These follow src/http/schemas/runs.ts (ComparisonResponse).

export interface RunComparisonOfVariant {
  variant: string;
  items: number;
  unpaired: number;
  control: { mean: number };
  treatment: { mean: number };
  difference: { estimate: number; ci: [number, number] | null; se: number | null; pValue: number | null };
  adjustedPValue: number | null;
  significant: boolean;
  better: boolean | null;
  wilcoxon: { statistic: number; pValue: number; method: string; n: number } | null;
  bootstrap: { ci: [number, number]; resamples: number } | null;
  mcnemar: { b: number; c: number; pValue: number } | null;
  wins: number;
  ties: number;
  losses: number;
  variance: { generation: number; items: number } | null;
  itemsNeeded: number | null;
}

export interface RunComparisonMetric {
  name: string;
  kind: 'mean' | 'proportion';
  direction: 'increase' | 'decrease' | null;
  comparisons: RunComparisonOfVariant[];
}

export interface RunComparison {
  run: {
    id: string;
    experiment: string;
    dataset: string;
    version: number;
    variants: string[];
    trials: number;
  };
  control: string;
  alpha: number;
  items: number;
  variants: Array<{ key: string; results: number; items: number }>;
  metrics: RunComparisonMetric[];
  verdict: { summary: string; sentences: string[] };
  changed: Array<{ itemId: string; metric: string; variant: string; difference: number }>;
}

/** 'better', 'worse', or 'not significant' (Holm across the metrics): what a reader marks a row with. */
export function comparisonMark(v: RunComparisonOfVariant): string {
  if (!v.significant) return 'not significant';
  if (v.better === true) return '✓ better';
  if (v.better === false) return '✗ worse';
  return '• significant (no direction)';
}
