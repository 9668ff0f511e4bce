// get_analysis's text: the verdict sentence first, then a compact scorecard (a line per metric and
// variant) an agent can read in one pass, numbers rounded as the CLI and the dashboard round them. A ratio,
// a cap or an adjustment gets a line under its metric, and each variant what was capped or its unadjusted
// reading (labelled so, the adjusted one being the one that decides).
import type { Analysis, MetricAnalysis, Num, VariantAnalysis } from '../answers/analysis.js';
import { adjustmentText, cappedText, capText, unadjustedText } from '../answers/derived.js';
import { exposedText } from '../answers/exposed.js';
import {
  formatChance,
  formatCount,
  formatLift,
  formatLiftInterval,
  formatP,
  formatTest,
  formatValue,
} from '../answers/format.js';

const ROLE_ORDER: Record<string, number> = { primary: 0, guardrail: 1, secondary: 2 };

export function analysisText(a: Analysis): string {
  const lines = [`Verdict (${a.verdict.status}): ${a.verdict.summary}`, ''];
  lines.push(
    `${a.slug}: ${a.method}, control ${a.control}, alpha ${a.alpha}, versions ${a.versions.join(', ') || '—'}; exposed ${exposedText(a)}`,
  );
  const metrics = [...a.metrics].sort((x, y) => rank(x) - rank(y));
  for (const m of metrics) {
    const direction = m.direction === null ? '' : `, ${m.direction} is better`;
    lines.push(
      `${m.name} (${m.role ?? 'undeclared'}, ${m.kind}${direction}${m.noVariation ? ', no variation' : ''}):`,
    );
    const ratio = m.ratio && `ratio: ${m.label ?? `${m.ratio.numerator} per ${m.ratio.denominator}`}`;
    for (const line of [ratio, capText(m), adjustmentText(m.adjustment)]) if (line) lines.push(`  ${line}`);
    for (const v of m.variants) {
      const derived = [cappedText(m, v), unadjustedText(m, v)].filter((x) => x !== null);
      lines.push(`  ${[variantLine(a, m, v), ...derived].join('; ')}`);
    }
  }
  if (a.metrics.length === 0) lines.push('No metric has data yet.');
  const srm = a.srm;
  lines.push(
    srm.mismatch
      ? `Sample ratio mismatch: p = ${formatP(srm.pValue)}; the split is not what the weights say, distrust the results`
      : `Sample ratio: fine (p = ${formatP(srm.pValue)})`,
  );
  for (const w of a.warnings) lines.push(`Warning: ${w}`);
  return lines.join('\n');
}

function rank(m: MetricAnalysis): number {
  return ROLE_ORDER[m.role ?? ''] ?? 3;
}

/** What the metric compares and the variant's value of it: its mean, or its p95 (not the mean under that name). */
function compared(m: MetricAnalysis, v: VariantAnalysis): [string, Num] {
  const q = m.statistic as keyof NonNullable<VariantAnalysis['quantiles']> | undefined;
  if (q === undefined || !['p50', 'p90', 'p95', 'p99'].includes(q)) return ['mean', v.mean];
  return [q, v.quantiles?.[q] ?? null];
}

function variantLine(a: Analysis, m: MetricAnalysis, v: VariantAnalysis): string {
  const [statistic, value] = compared(m, v);
  const head = `${v.key}: n ${formatCount(v.n)}, ${statistic} ${formatValue(value, m.kind)}`;
  if (v.key === a.control || v.relative === undefined) return `${head} (control)`;
  const test = formatTest(v.test);
  const lift = `lift ${formatLift(v.relative.estimate)} ${formatLiftInterval(v.relative.ci)}${test ? ` (${test})` : ''}`;
  const parts = [head, lift];
  if (v.chanceToWin !== undefined && v.chanceToWin !== null)
    parts.push(`chance to win ${formatChance(v.chanceToWin)}`);
  else {
    // pValue decides: adjusted exactly when the metric is in the correction's family.
    const adjusted = m.corrected && a.correction !== 'none' ? ` (${a.correction}-adjusted)` : '';
    parts.push(`p ${formatP(v.pValue ?? v.relative.pValue)}${adjusted}`);
  }
  if (v.guardrail !== undefined) parts.push(`guardrail ${v.guardrail.status}`);
  if (v.better === true) parts.push('better');
  if (v.worse === true) parts.push('worse');
  return parts.join(', ');
}
