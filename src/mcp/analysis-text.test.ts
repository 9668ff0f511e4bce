// get_analysis's text names what each metric compares with that statistic's value: a p95 metric's line is
// its p95, never the mean under the name p95.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Analysis, MetricAnalysis } from '../answers/analysis.js';
import { analysisText } from './analysis-text.js';

const effect = { estimate: 0.1, ci: [0.05, 0.15] as [number, number], stdError: 0.02, pValue: 0.001 };

function metric(name: string, statistic: string): MetricAnalysis {
  return {
    name,
    kind: 'mean',
    direction: 'decrease',
    role: 'primary',
    unit: 'call',
    sided: 'two',
    minimumDetectableEffect: null,
    statistic,
    variants: [
      { key: 'A', n: 500, mean: 900, stdDev: 1, quantiles: { p50: 812, p90: 1040, p95: 1110, p99: null } },
      {
        key: 'B',
        n: 500,
        mean: 990,
        stdDev: 1,
        quantiles: { p50: 850, p90: 1100, p95: 1200, p99: null },
        absolute: effect,
        relative: effect,
        pValue: 0.001,
      },
    ],
  };
}

test('a p95 metric reads its variants’ p95; a mean metric their mean', () => {
  const analysis: Analysis = {
    slug: 's',
    control: 'A',
    method: 'frequentist',
    alpha: 0.05,
    sided: 'two',
    correction: 'none',
    version: null,
    versions: [1],
    unit: 'call',
    verdict: { status: 'winner', summary: 'B wins.' },
    exposures: { A: 500, B: 500 },
    srm: { chiSquare: 0, pValue: 1, mismatch: false },
    metrics: [metric('latency_ms', 'p95'), metric('cost', 'mean')],
    warnings: [],
  } as Analysis;
  const lines = analysisText(analysis).split('\n');
  assert.ok(lines.includes('  A: n 500, p95 1,110 (control)'), lines.join('\n'));
  assert.ok(
    lines.some((l) => l.startsWith('  B: n 500, p95 1,200, lift')),
    lines.join('\n'),
  );
  assert.ok(lines.includes('  A: n 500, mean 900 (control)'), lines.join('\n'));
});
