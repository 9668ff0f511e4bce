// get_analysis's text names what each metric compares with that statistic's value: a p95 metric's line is
// its p95, never the mean under the name p95. A ratio, a cap and an adjustment each get their line, and a
// variant what was capped or its reading before the adjustment, labelled "unadjusted".
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

function analysisOf(metrics: MetricAnalysis[]): Analysis {
  return {
    slug: 's',
    control: 'A',
    method: 'frequentist',
    alpha: 0.05,
    sided: 'two',
    correction: 'none',
    version: null,
    versions: [1],
    unit: 'user',
    verdict: { status: 'winner', summary: 'B wins.' },
    exposures: { A: 150, B: 150 },
    srm: { chiSquare: 0, pValue: 1, mismatch: false },
    metrics,
    warnings: [],
  } as Analysis;
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

test('a ratio, a cap and an adjustment say what they did; the unadjusted reading is labelled', () => {
  const users = (m: MetricAnalysis): MetricAnalysis => ({ ...m, unit: 'user', statistic: 'mean' });
  const ratio = {
    ...users(metric('cost_per_success', 'mean')),
    label: 'cost_usd per success, users as units',
    ratio: { numerator: 'cost_usd', denominator: 'success' },
  };
  const capped = users(metric('cost_usd', 'mean'));
  capped.cap = { value: 0.006384, percentile: 90, units: 30.4, share: 0.1013 };
  capped.variants[0]!.capped = { units: 15, share: 0.1 };
  capped.variants[1]!.capped = { units: 15.4, share: 0.1027 };
  const adjusted = users(metric('latency_ms', 'mean'));
  adjusted.adjustment = {
    covariate: 'input_tokens',
    adjusted: true,
    theta: 2.02,
    covariateMean: 199.4,
    varianceReduction: 0.82,
  };
  adjusted.variants[0]!.unadjusted = { mean: 903.1 };
  adjusted.variants[1]!.unadjusted = {
    mean: 880.2,
    relative: { estimate: -0.0254, ci: [-0.06, 0.009], stdError: 0.01, pValue: 0.375 },
    pValue: 0.375,
  };
  const lines = analysisText(analysisOf([ratio, capped, adjusted])).split('\n');
  for (const line of [
    '  ratio: cost_usd per success, users as units',
    '  capped at 0.006384 (p90): 30 of 1,000 users, 10.1%',
    '  A: n 500, mean 900 (control); capped 15 users (10%)',
    '  adjusted on input_tokens: variance −82%',
    '  A: n 500, mean 900 (control); unadjusted: mean 903.1',
  ]) {
    assert.ok(lines.includes(line), `${line}\n${lines.join('\n')}`);
  }
  assert.ok(
    lines.some((l) => l.startsWith('  B: n 500, mean 990') && l.endsWith('; capped 15 users (10.3%)')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some(
      (l) =>
        l.startsWith('  B: n 500, mean 990, lift +10.0%') &&
        l.endsWith('; unadjusted: mean 880.2, lift -2.5% [-6.0%, +0.9%], p 0.38'),
    ),
    lines.join('\n'),
  );
});
