// `agentsplit analyze <slug>`: GET /experiment/:slug/analysis, read for people: the verdict first, then a
// scorecard per metric (primary first, then guardrails, secondary and undeclared metrics), the
// sample-ratio check and the warnings. --json prints the API's answer as is.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { experimentPath, positiveInteger } from './experiments.js';
import {
  formatChance,
  formatCount,
  formatDifference,
  formatDifferenceInterval,
  formatLift,
  formatLiftInterval,
  formatP,
  formatValue,
} from './format.js';
import { commaList, session } from './session.js';
import { table } from './table.js';

type Num = number | null;

interface Effect {
  estimate: Num;
  ci: [Num, Num];
  stdError: Num;
  pValue: Num;
}

interface VariantAnalysis {
  key: string;
  n: number;
  mean: Num;
  stdDev: Num;
  absolute?: Effect;
  relative?: Effect;
  adjustedPValue?: Num;
  chanceToWin?: Num;
  better?: boolean | null;
  worse?: boolean | null;
  guardrail?: { status: 'passed' | 'failed' | 'inconclusive'; threshold: number; bound: Num };
  moreUnits?: Num;
  significant?: boolean;
}

interface MetricAnalysis {
  name: string;
  kind: string;
  direction: string | null;
  role: string | null;
  unit: string;
  sided: string;
  minimumDetectableEffect: Num;
  variants: VariantAnalysis[];
}

export interface Analysis {
  slug: string;
  control: string;
  method: string;
  alpha: number;
  sided: string;
  correction: string;
  version: number | null;
  versions: number[];
  unit: string;
  verdict: { status: string; variant?: string; metric?: string; summary: string };
  results?: Record<string, number>;
  exposures: Record<string, number>;
  srm: { chiSquare: Num; pValue: Num; mismatch: boolean };
  metrics: MetricAnalysis[];
  warnings: string[];
}

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
        'adjust the p-values of every metric × treatment together (default: none; not for bayesian)',
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
  const correction = a.correction !== 'none' && a.method !== 'bayesian' ? `, ${a.correction} correction` : '';
  parts.push(
    `${a.slug}: ${a.method}, ${SIDED_WORDS[a.sided] ?? a.sided}, ${level} ${INTERVAL_WORDS[a.method] ?? ''} ` +
      `intervals${correction}; control ${a.control}; per ${a.unit}; ${versions}\n`,
  );
  const metrics = orderMetrics(a.metrics);
  if (metrics.length === 0) parts.push('\nno metrics yet: results logged with metrics appear here\n');
  for (const metric of metrics) parts.push(`\n${scorecard(metric, a)}`);
  parts.push(`\n${srmLine(a)}`);
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

/** One metric: a heading line, then one row per variant, then how many more units it needs, if known. */
function scorecard(metric: MetricAnalysis, a: Analysis): string {
  const about = [
    metric.role,
    `${metric.kind} per ${metric.unit}`,
    metric.direction ? DIRECTION_WORDS[metric.direction] : 'no direction declared',
  ].filter(Boolean);
  const bayesian = a.method === 'bayesian';
  const adjusted = metric.variants.some((v) => v.adjustedPValue !== undefined);
  const evidence = bayesian ? 'chance better' : adjusted ? `p (${a.correction})` : 'p-value';
  const rows = metric.variants.map((v) => {
    if (v.key === a.control || !v.absolute) {
      return [v.key, formatCount(v.n), formatValue(v.mean, metric.kind), 'control', '', '', ''];
    }
    const difference = `${formatDifference(v.absolute.estimate, metric.kind)} ${formatDifferenceInterval(v.absolute.ci, metric.kind)}`;
    const lift = v.relative ? `${formatLift(v.relative.estimate)} ${formatLiftInterval(v.relative.ci)}` : '—';
    const shown = bayesian
      ? metric.direction
        ? formatChance(v.chanceToWin)
        : '— (no direction)'
      : formatP(v.adjustedPValue !== undefined ? v.adjustedPValue : v.absolute.pValue);
    return [
      v.key,
      formatCount(v.n),
      formatValue(v.mean, metric.kind),
      difference,
      lift,
      shown,
      mark(metric, v),
    ];
  });
  const lines = [
    `${metric.name} (${about.join(', ')})\n`,
    table(
      [
        'variant',
        'n',
        metric.kind === 'proportion' ? 'rate' : 'mean',
        `difference vs ${a.control}`,
        'lift',
        evidence,
        'significance',
      ],
      rows,
    ),
  ];
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

/** Better, worse, harmful or not significant, as the dashboard's chip says it. */
function mark(metric: MetricAnalysis, v: VariantAnalysis): string {
  if (metric.role === 'guardrail' && v.guardrail?.status === 'failed') return '✗ harmful (guardrail failed)';
  if (!v.significant) return 'not significant';
  if (v.better) return '✓ better';
  if (v.worse) return '✗ worse';
  return '• significant (no direction)';
}

function srmLine(a: Analysis): string {
  const exposures = `exposures ${counts(a.exposures)}`;
  const { chiSquare, pValue, mismatch } = a.srm;
  if (pValue === null) return `sample ratio  not checked: ${exposures}\n`;
  const test = `chi-square ${Number((chiSquare ?? 0).toPrecision(3))}, p ${pValue < 1e-4 ? '' : '= '}${formatP(pValue)}`;
  if (mismatch) {
    return (
      `sample ratio  MISMATCH (${test}): ${exposures} do not match the traffic split; assignment or logging ` +
      'is broken, and no effect can be trusted until it is explained\n'
    );
  }
  return `sample ratio  ok (${test}): ${exposures}\n`;
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
