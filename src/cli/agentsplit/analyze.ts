// `agentsplit analyze <slug>`: GET /experiment/:slug/analysis, read for people: the verdict first, then a
// scorecard per metric (primary first, then guardrails, secondary and undeclared metrics) with its label,
// a cap or adjustment (with the unadjusted readings), guardrail status against the threshold and quantiles
// where the answer has them, the correction, the
// sample-ratio check (users or calls), what was exposed (users in sticky experiments, with their calls), the
// results and the warnings. --json prints the API's answer as is. The answer's
// types are in src/answers/analysis.ts.
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Analysis, MetricAnalysis, Num, VariantAnalysis } from '../../answers/analysis.js';
import { adjustmentText, cappedText, capText, unadjustedText } from '../../answers/derived.js';
import { exposedText } from '../../answers/exposed.js';
import {
  formatChance,
  formatCount,
  formatDifference,
  formatDifferenceInterval,
  formatLift,
  formatLiftInterval,
  formatP,
  formatTest,
  formatValue,
} from '../../answers/format.js';
import { experimentPath, positiveInteger } from './experiments.js';
import { commaList, session } from './session.js';
import { table } from './table.js';

interface AnalyzeOptions {
  metric?: string[];
  version?: number;
  method?: string;
  correction?: string;
  control?: string;
  alpha?: number;
  sided?: string;
  nStar?: number;
}

// Guardrails before secondary metrics: a guardrail can stop a launch, a secondary metric only informs it.
const ROLE_ORDER: Record<string, number> = { primary: 0, guardrail: 1, secondary: 2 };
const INTERVAL_WORDS: Record<string, string> = {
  frequentist: 'confidence',
  sequential: 'always-valid',
  bayesian: 'credible',
};
const SIDED_WORDS: Record<string, string> = {
  two: 'two-sided',
  greater: 'one-sided (greater)',
  less: 'one-sided (less)',
  better: "one-sided toward each metric's better direction",
};
const DIRECTION_WORDS: Record<string, string> = {
  increase: 'higher is better',
  decrease: 'lower is better',
};
const CORRECTION_WORDS: Record<string, string> = { holm: 'Holm', bh: 'BH' };
const QUANTILES = ['p50', 'p90', 'p95', 'p99'] as const;

export function registerAnalyze(program: Command): void {
  program
    .command('analyze')
    .description('which variant wins: the verdict, a scorecard per metric and the sample-ratio check')
    .argument('<slug>', "the experiment's slug")
    .option(
      '--metric <names>',
      'only these metrics (comma-separated, or the option repeated; default: every metric with data)',
      (value: string, previous: string[] = []) => [...previous, ...commaList(value)],
    )
    .option(
      '--version <n>',
      'only the data of this version of the variants (default: every version, pooled)',
      positiveInteger,
    )
    .addOption(
      new Option(
        '--method <method>',
        'frequentist: fixed horizon (the default); sequential: look as often as you like; bayesian: chance to be better',
      ).choices(['frequentist', 'sequential', 'bayesian']),
    )
    .addOption(
      new Option(
        '--correction <c>',
        "adjust p-values for multiple comparisons across every metric but guardrails (default: the server's, " +
          'BH across secondary and undeclared metrics; not for bayesian)',
      ).choices(['none', 'holm', 'bh']),
    )
    .option('--control <key>', 'the variant the others are compared with (default: the first variant)')
    .option('--alpha <a>', 'significance level, between 0 and 0.5 (default: 0.05)', alpha)
    .addOption(
      new Option(
        '--sided <s>',
        "two-sided (the default), greater, less, or better: toward each metric's declared direction",
      ).choices(['two', 'greater', 'less', 'better']),
    )
    .option(
      '--n-star <n>',
      'sequential: the sample size where the interval is tightest (default: 5000)',
      positiveNumber,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  agentsplit analyze checkout-prompt\n' +
        '  agentsplit analyze checkout-prompt --metric success,cost_usd --method bayesian\n' +
        '  agentsplit analyze checkout-prompt --version 2 --correction holm --json\n',
    )
    .action(async (slug: string, options: AnalyzeOptions, command: Command) => {
      const { api, json, out } = session(command);
      const query = new URLSearchParams();
      if (options.metric?.length) query.set('metrics', [...new Set(options.metric)].join(','));
      if (options.version !== undefined) query.set('version', String(options.version));
      if (options.method) query.set('method', options.method);
      if (options.correction) query.set('correction', options.correction);
      if (options.control) query.set('control', options.control);
      if (options.alpha !== undefined) query.set('alpha', String(options.alpha));
      if (options.sided) query.set('sided', options.sided);
      if (options.nStar !== undefined) query.set('nStar', String(options.nStar));
      const path = `${experimentPath(slug)}/analysis${query.size > 0 ? `?${query}` : ''}`;
      const { value, text } = await api.json<Analysis>('GET', path);
      if (json) return out(`${text}\n`);
      out(report(value));
    });
}

/** The whole report: verdict, settings, one scorecard per metric, the sample-ratio check, warnings. */
export function report(a: Analysis): string {
  const parts: string[] = [`verdict: ${a.verdict.status} — ${a.verdict.summary}\n`];
  const level = `${Number(((1 - a.alpha) * 100).toPrecision(4))}%`;
  const versions =
    a.version !== null
      ? `version ${a.version}`
      : a.versions.length === 0
        ? 'no data yet'
        : `version${a.versions.length > 1 ? 's' : ''} ${a.versions.join(', ')}${a.versions.length > 1 ? ' pooled' : ''}`;
  const correction = corrected(a) ? `, ${a.correction} correction` : '';
  parts.push(
    `${a.slug}: ${a.method}, ${SIDED_WORDS[a.sided] ?? a.sided}, ${level} ${INTERVAL_WORDS[a.method] ?? ''} ` +
      `intervals${correction}; control ${a.control}; ${a.unit === 'user' ? 'users' : 'calls'} as units; ${versions}\n`,
  );
  const metrics = orderMetrics(a.metrics);
  if (metrics.length === 0) parts.push('\nno metrics yet: results logged with metrics appear here\n');
  for (const metric of metrics) parts.push(`\n${scorecard(metric, a)}`);
  parts.push(`\n${correctionLine(a)}${srmLine(a)}`);
  parts.push(`exposed       ${exposedText(a)}\n`);
  if (a.results) parts.push(`results       ${counts(a.results)}\n`);
  for (const warning of a.warnings) parts.push(`warning: ${warning}\n`);
  return parts.join('');
}

/** Primary first, then guardrails, secondary, and metrics nobody declared; the API's order within a role. */
function orderMetrics(metrics: MetricAnalysis[]): MetricAnalysis[] {
  return metrics
    .map((m, i) => ({ m, i }))
    .sort((x, y) => (ROLE_ORDER[x.m.role ?? ''] ?? 3) - (ROLE_ORDER[y.m.role ?? ''] ?? 3) || x.i - y.i)
    .map(({ m }) => m);
}

/** A correction is in use (frequentist or sequential), so some p-values are adjusted. */
function corrected(a: Analysis): boolean {
  return a.correction !== 'none' && a.method !== 'bayesian';
}

/**
 * What each number is: the analysis' label ('mean per call, users as units'); an older server's answer
 * without one gets the kind and the unit, without claiming what is averaged.
 */
function labelOf(metric: MetricAnalysis): string {
  if (metric.label) return metric.label;
  const what = metric.kind === 'proportion' ? 'share true' : 'mean';
  return metric.unit === 'user' ? `${what}, users as units` : `${what} per call`;
}

/** A relative size without a sign, as a threshold is set: 0.05 -> 5%. */
function share(x: number): string {
  return `${Number((Math.abs(x) * 100).toPrecision(4))}%`;
}

/** 'could be 3.7% worse' / 'at worst 1.2% better': the guardrail interval's worse end, in the metric's terms. */
function reach(direction: string | null, bound: Num): string {
  if (bound === null) return 'its lift cannot be computed';
  const size = (x: number) => formatLift(Math.abs(x)).replace('+', '');
  if (!direction) return `could be ${size(bound)} ${bound > 0 ? 'higher' : 'lower'}`;
  const worse = direction === 'increase' ? -bound : bound;
  return worse > 0 ? `could be ${size(worse)} worse` : `at worst ${size(worse)} better`;
}

/** One metric: a heading line, then one row per variant, then guardrails, quantiles and units still needed. */
function scorecard(metric: MetricAnalysis, a: Analysis): string {
  const about = [
    metric.role,
    labelOf(metric),
    metric.direction ? DIRECTION_WORDS[metric.direction] : 'no direction declared',
    metric.role === 'guardrail' && typeof metric.threshold === 'number'
      ? `threshold ${share(metric.threshold)}`
      : null,
    metric.corrected && corrected(a) ? `${CORRECTION_WORDS[a.correction] ?? a.correction}-adjusted` : null,
    intervalsOf(metric),
  ].filter(Boolean);
  const heading = `${metric.name} (${about.join('; ')})\n`;
  if (metric.noVariation) {
    const arms = metric.variants.filter((v) => v.n > 0);
    const n = arms.reduce((x, v) => x + v.n, 0);
    return (
      heading +
      `  no variation: every value is ${formatValue(arms[0]?.mean ?? null, metric.kind)} in every variant ` +
      `(n = ${formatCount(n)}); nothing to compare\n`
    );
  }
  const bayesian = a.method === 'bayesian';
  // pValue is what decides: the adjusted one exactly when a correction covers this metric.
  const adjusted = Boolean(metric.corrected) && corrected(a);
  const evidence = bayesian
    ? 'chance better'
    : adjusted
      ? `p (${CORRECTION_WORDS[a.correction] ?? a.correction}-adjusted)`
      : 'p-value';
  const [column, value] = compared(metric);
  const rows = metric.variants.map((v) => {
    if (v.key === a.control || !v.absolute) {
      return [v.key, formatCount(v.n), formatValue(value(v), metric.kind), 'control', '', '', ''];
    }
    const difference = `${formatDifference(v.absolute.estimate, metric.kind)} ${formatDifferenceInterval(v.absolute.ci, metric.kind)}`;
    const lift = v.relative ? `${formatLift(v.relative.estimate)} ${formatLiftInterval(v.relative.ci)}` : '—';
    const shown = bayesian
      ? metric.direction
        ? formatChance(v.chanceToWin)
        : '— (no direction)'
      : formatP(v.pValue ?? v.absolute.pValue);
    return [
      v.key,
      formatCount(v.n),
      formatValue(value(v), metric.kind),
      difference,
      lift,
      shown,
      mark(metric, v),
    ];
  });
  const lines = [
    heading,
    table(['variant', 'n', column, `difference vs ${a.control}`, 'lift', evidence, 'significance'], rows),
  ];
  lines.push(...derivedLines(metric));
  for (const v of metric.variants) {
    if (v.guardrail) {
      const g = v.guardrail;
      const from = formatTest(g.test);
      lines.push(
        `  ${v.key} guardrail ${g.status}: ${reach(metric.direction, g.bound)}${from ? ` (${from})` : ''}; threshold ${share(g.threshold)}\n`,
      );
    }
  }
  for (const v of metric.variants) {
    const q = v.quantiles;
    const shown = q && metric.kind !== 'proportion' ? QUANTILES.filter((k) => q[k] !== null) : [];
    if (q && shown.length > 0) {
      lines.push(
        `  ${v.key} quantiles: ${shown.map((k) => `${k} ${formatValue(q[k], metric.kind)}`).join(', ')}\n`,
      );
    }
  }
  for (const v of metric.variants) {
    if (v.moreUnits !== undefined && v.moreUnits !== null && metric.minimumDetectableEffect !== null) {
      lines.push(
        `  ${v.key} needs about ${formatCount(v.moreUnits)} more ${metric.unit === 'user' ? 'users' : 'calls'} ` +
          `per variant to detect ${formatLift(metric.minimumDetectableEffect)}\n`,
      );
    }
  }
  return lines.join('');
}

/**
 * A cap and what it capped per variant, or the adjustment and each variant's unadjusted reading (the table
 * holds the adjusted ones): '  adjusted on input_tokens: variance −82%', '  B unadjusted: mean 880.2, …'.
 */
function derivedLines(metric: MetricAnalysis): string[] {
  const lines = [capText(metric), adjustmentText(metric.adjustment)].filter((x) => x !== null);
  for (const v of metric.variants) {
    const said = [cappedText(metric, v), unadjustedText(metric, v)].filter((x) => x !== null);
    if (said.length > 0) lines.push(`${v.key} ${said.join('; ')}`);
  }
  return lines.map((line) => `  ${line}\n`);
}

/** 'intervals: 95% Welch t interval': the test behind the metric's intervals (each one, if they differ). */
function intervalsOf(metric: MetricAnalysis): string | null {
  const labels = [...new Set(metric.variants.map((v) => formatTest(v.test)).filter(Boolean))];
  return labels.length === 0 ? null : `intervals: ${labels.join(' / ')}`;
}

/**
 * The column of what is compared, and each variant's value in it: the rate, the mean, or the quantile a
 * `statistic: pNN` metric compares (its difference and lift are that quantile's, so the column says p95).
 */
function compared(metric: MetricAnalysis): [string, (v: VariantAnalysis) => Num] {
  if (metric.kind === 'proportion') return ['rate', (v) => v.mean];
  const statistic = QUANTILES.find((k) => k === metric.statistic);
  if (statistic === undefined) return ['mean', (v) => v.mean];
  return [statistic, (v) => v.quantiles?.[statistic] ?? null];
}

/** Better, worse, guardrail failed or not significant, as the dashboard's chip says it. */
function mark(metric: MetricAnalysis, v: VariantAnalysis): string {
  if (metric.role === 'guardrail' && v.guardrail?.status === 'failed') return '✗ guardrail failed';
  if (!v.significant) return 'not significant';
  if (v.better) return '✓ better';
  if (v.worse) return '✗ worse';
  return '• significant (no direction)';
}

/** 'correction   BH on latency_ms, rating: p-values and intervals adjusted', when one is in use. */
function correctionLine(a: Analysis): string {
  if (!corrected(a)) return '';
  const family = a.metrics.filter((m) => m.corrected && !m.noVariation).map((m) => m.name);
  const name = CORRECTION_WORDS[a.correction] ?? a.correction;
  if (family.length === 0) return `correction    ${name}: no metric shown is in its family\n`;
  return `correction    ${name} on ${family.join(', ')}: p-values and intervals adjusted\n`;
}

/** The check on what was randomized: users in sticky experiments, calls otherwise (older servers: calls). */
function srmLine(a: Analysis): string {
  const tested = `${a.srm.unit === 'user' ? 'users' : 'calls'} ${counts(a.srm.counts ?? a.exposures)}`;
  const { chiSquare, pValue, mismatch } = a.srm;
  if (pValue === null) return `sample ratio  not checked: ${tested}\n`;
  const test = `chi-square ${Number((chiSquare ?? 0).toPrecision(3))}, p ${pValue < 1e-4 ? '' : '= '}${formatP(pValue)}`;
  if (mismatch) {
    return (
      `sample ratio  MISMATCH (${test}): ${tested} do not match the traffic split; assignment or logging ` +
      'is broken, and no effect can be trusted until it is explained\n'
    );
  }
  return `sample ratio  ok (${test}): ${tested}\n`;
}

function counts(byVariant: Record<string, number>): string {
  const entries = Object.entries(byVariant);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${formatCount(n)}`).join(', ');
}

function alpha(value: string): number {
  const a = Number(value);
  if (value.trim() === '' || !(a > 0 && a < 0.5))
    throw new InvalidArgumentError('expected a number between 0 and 0.5, such as 0.05');
  return a;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n > 0 && Number.isFinite(n)))
    throw new InvalidArgumentError('expected a number above 0');
  return n;
}
