// `agentsplit runs list <slug>` and `agentsplit runs compare <run> [--fail-if <rule>]` (issue 40): an
// experiment's offline runs, and one run's paired comparison read for people, with a CI gate: each
// --fail-if rule is checked against every variant but the control, and a failed one exits 2 (an error
// reaching or reading the server exits 1, as every command).
import type { Command } from 'commander';
import {
  formatCount,
  formatDifference,
  formatDifferenceInterval,
  formatP,
  formatValue,
} from '../../answers/format.js';
import {
  comparisonMark,
  type RunComparison,
  type RunComparisonMetric,
} from '../../answers/run-comparison.js';
import { checkGate, type GateCheck, parseGateRule } from '../../core/run-gate.js';
import { CliError } from './api.js';
import { experimentPath } from './experiments.js';
import { commaList, session } from './session.js';
import { details, table } from './table.js';

/** Exit code of a gate that failed (1 stays "could not ask"). */
export const GATE_FAILED = 2;

interface Run {
  id: string;
  dataset: string;
  version: number;
  variants: string[];
  trials: number;
  items: number;
  createdAt: string;
}

interface CompareOptions {
  control?: string;
  alpha?: string;
  metric?: string[];
  failIf?: string[];
}

export function registerRuns(program: Command): void {
  const runs = program
    .command('runs')
    .description(
      "an experiment's offline runs over a dataset, and their paired comparison (needs a read key)",
    );

  runs
    .command('list')
    .description("an experiment's offline runs, newest first (every page)")
    .argument('<slug>', "the experiment's slug")
    .action(async (slug: string, _options: object, command: Command) => {
      const { api, json, out } = session(command);
      const listed: Run[] = [];
      let cursor: string | null = null;
      do {
        const path: string = `${experimentPath(slug)}/runs?limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const { value } = await api.json<{ runs: Run[]; nextCursor: string | null }>('GET', path);
        listed.push(...value.runs);
        cursor = value.nextCursor;
      } while (cursor !== null);
      if (json) return out(`${JSON.stringify({ runs: listed, nextCursor: null })}\n`);
      if (listed.length === 0) return out(`no offline runs of ${slug} yet\n`);
      const rows = listed.map((r) => [
        r.id,
        `${r.dataset} v${r.version}`,
        r.variants.join(', '),
        String(r.trials),
        formatCount(r.items),
        r.createdAt,
      ]);
      out(table(['run', 'dataset', 'variants', 'trials', 'items', 'created'], rows));
    });

  runs
    .command('compare')
    .description("a run's variants compared item by item against the control; --fail-if makes it a CI gate")
    .argument('<run>', "the run's id")
    .option('--control <key>', "the variant the others are compared with (default: the run's first)")
    .option('--alpha <a>', 'significance level (default: 0.05)')
    .option(
      '--metric <names>',
      'only these metrics (comma-separated, or the option repeated)',
      (value: string, previous: string[] = []) => [...previous, ...commaList(value)],
    )
    .option(
      '--fail-if <rule>',
      "exit 2 when a variant breaks the rule: '<metric> worse than -2%', '<metric> worse than -2 points', " +
        "'<metric> worse than -50' (its units) or '<metric> significantly worse'; repeatable",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addHelpText(
      'after',
      '\nExamples:\n  agentsplit runs compare 019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b\n' +
        "  agentsplit runs compare $RUN --fail-if 'correct worse than -2%' --fail-if 'latency_ms significantly worse'\n" +
        '\nExit codes: 0 compared (every rule passed), 2 a rule failed, 1 the comparison could not be read.\n',
    )
    .action(async (id: string, options: CompareOptions, command: Command) => {
      const { api, json, out } = session(command);
      // Rules are read before the request: a typo fails at once, not after a comparison.
      const rules = (options.failIf ?? []).map((text) => {
        try {
          return parseGateRule(text);
        } catch (err) {
          throw new CliError((err as Error).message);
        }
      });
      const query = new URLSearchParams();
      if (options.control) query.set('control', options.control);
      if (options.alpha) query.set('alpha', options.alpha);
      if (options.metric?.length) query.set('metrics', [...new Set(options.metric)].join(','));
      const path = `/runs/${encodeURIComponent(id)}/comparison${query.size > 0 ? `?${query}` : ''}`;
      const { value, text } = await api.json<RunComparison>('GET', path);
      let checks: GateCheck[];
      try {
        checks = checkGate(rules, value.metrics, value.control);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      out(json ? `${text}\n` : report(value));
      if (checks.length > 0 && !json) out(`\n${checks.map((c) => `gate: ${c.line}\n`).join('')}`);
      const failed = checks.filter((c) => c.failed);
      if (failed.length > 0) {
        throw new CliError(
          `gate failed: ${failed.map((c) => `${c.variant} breaks '${c.rule}'`).join('; ')}`,
          GATE_FAILED,
        );
      }
    });
}

/** The verdict, what was compared, then one table per metric (a row per variant against the control). */
export function report(c: RunComparison): string {
  const parts = [`verdict: ${c.verdict.summary}\n`];
  parts.push(
    details([
      ['run', `${c.run.id} (${c.run.experiment})`],
      [
        'dataset',
        `${c.run.dataset} version ${c.run.version}, ${formatCount(c.items)} items in every variant`,
      ],
      ['variants', c.variants.map((v) => `${v.key} ${formatCount(v.results)} results`).join(', ')],
      ['trials', String(c.run.trials)],
      ['control', c.control],
    ]),
  );
  if (c.metrics.length === 0)
    parts.push('\nno metrics yet: results logged with runId, itemId and trial appear here\n');
  for (const metric of c.metrics) parts.push(`\n${scorecard(metric, c)}`);
  if (c.changed.length > 0)
    parts.push(`\n${c.changed.length} items changed most (the dashboard shows both outputs)\n`);
  return parts.join('');
}

function scorecard(metric: RunComparisonMetric, c: RunComparison): string {
  const direction =
    metric.direction === null
      ? 'no direction declared'
      : metric.direction === 'increase'
        ? 'higher is better'
        : 'lower is better';
  const rows = metric.comparisons.map((v) => [
    v.variant,
    formatCount(v.items),
    formatValue(v.control.mean, metric.kind),
    formatValue(v.treatment.mean, metric.kind),
    `${formatDifference(v.difference.estimate, metric.kind)} ${formatDifferenceInterval(v.difference.ci ?? undefined, metric.kind)}`,
    formatP(v.adjustedPValue),
    formatP(v.wilcoxon?.pValue),
    `${v.wins}/${v.ties}/${v.losses}`,
    comparisonMark(v),
  ]);
  const lines = [
    `${metric.name} (${metric.kind === 'proportion' ? 'share true' : 'mean'} of each item's trials; ${direction}; paired t, Holm-adjusted)\n`,
    table(
      [
        'variant',
        'items',
        `control ${c.control}`,
        'treatment',
        `difference vs ${c.control}`,
        'p',
        'wilcoxon p',
        'w/t/l',
        'significance',
      ],
      rows,
    ),
  ];
  for (const v of metric.comparisons) {
    const notes = [
      v.bootstrap ? `bootstrap ${formatDifferenceInterval(v.bootstrap.ci, metric.kind)}` : null,
      v.mcnemar
        ? `McNemar p ${formatP(v.mcnemar.pValue)} (${v.mcnemar.b} / ${v.mcnemar.c} discordant)`
        : null,
      v.variance
        ? `variance ${Math.round(v.variance.generation * 100)}% generations / ${Math.round(v.variance.items * 100)}% items`
        : null,
      v.itemsNeeded !== null
        ? `about ${formatCount(v.itemsNeeded)} items for this difference at 80% power`
        : null,
      v.unpaired > 0 ? `${formatCount(v.unpaired)} items answered by one variant only, left out` : null,
    ].filter((x) => x !== null);
    if (notes.length > 0) lines.push(`  ${v.variant}: ${notes.join('; ')}\n`);
  }
  return lines.join('');
}
