// The dashboard's reading pages (issue 16) in headless Chromium against a real server: a real-looking
// experiment (two prompts, 2,000 users with latency, cost, tokens, success and a judge score); the page's
// numbers are compared with GET /analysis (and /timeseries) under each method and control; what was
// exposed shows in the unit randomized (users with their calls beside them, or calls) on the page, the
// variant cards and the list; a sample-ratio mismatch shows its banner; the results page pages, filters, opens a result, shows flagged results and
// exports CSV and NDJSON. Screenshots of every page at 1280 and 390 px go to test/artifacts/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import type { Analysis, MetricAnalysis, VariantAnalysis } from '../src/stats/analysis-schema.js';
import {
  ARTIFACTS_DIR,
  assertNoConsoleErrors,
  openDashboard,
  screenshot,
  waitUntil,
} from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { seededRandom } from './helpers/random.js';
import { type Definition, drawUsers, planTraffic } from './helpers/traffic.js';

const API_KEY = 'ui-experiment-root-key-0123456789';
const ui = dashboardRun(API_KEY, { setup: setUp });
const SLUG = 'support-prompt';
const USERS = 2000;
const WIDTHS = [1280, 390];

let readKey: string;
/** When the flagged results were logged (after everything else). */
let flaggedSince: string;

const call = ui.call;

/** A seeded generator, so every run draws the same traffic. */
function generator(seed: number) {
  let s = seed;
  const uniform = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const normal = () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

async function seedExperiment(): Promise<void> {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'Support answer prompt',
    description: 'Does a shorter, step-by-step prompt answer as well, for less?',
    status: 'running',
    assignment: 'sticky',
    variants: [
      {
        key: 'A',
        payload: { model: 'gpt-4o-mini', prompt: 'You are a helpful support assistant. Answer fully.' },
        trafficPercent: 50,
      },
      {
        key: 'B',
        payload: { model: 'gpt-4o-mini', prompt: 'Answer in two sentences, then offer one next step.' },
        trafficPercent: 50,
      },
    ],
    metrics: [
      { name: 'success', direction: 'increase', role: 'primary', minimumDetectableEffect: 0.05 },
      { name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.02 },
      { name: 'latency_ms', direction: 'decrease', role: 'secondary', statistic: 'p90' },
      { name: 'judge_score', direction: 'increase', role: 'secondary' },
    ],
  });
  const { uniform, normal } = generator(7);
  const results: unknown[] = [];
  for (let start = 0; start < USERS; start += 25) {
    const ids = Array.from({ length: Math.min(25, USERS - start) }, (_, i) => `user-${start + i}`);
    const assigned = await Promise.all(
      ids.map((userId) =>
        call<{ variant: string; assignmentId: string }>('POST', `/experiment/${SLUG}/assign`, { userId }),
      ),
    );
    assigned.forEach((a, i) => {
      const b = a.variant === 'B';
      const tokens = Math.max(20, Math.round((b ? 160 : 230) + 40 * normal()));
      results.push({
        variantKey: a.variant,
        userId: ids[i],
        assignmentId: a.assignmentId,
        input: { question: `Where is order #${1000 + start + i}?` },
        output: { answer: b ? 'It ships today. Want tracking by email?' : 'It will ship today.' },
        context: { plan: (start + i) % 3 ? 'free' : 'pro' },
        metrics: {
          success: uniform() < (b ? 0.74 : 0.68),
          tokens,
          latency_ms: Math.round((b ? 820 : 910) + 180 * normal()),
          cost_usd: Math.round(tokens * 12.5) / 1e6,
          judge_score: Math.max(0, Math.min(1, (b ? 0.8 : 0.78) + 0.12 * normal())),
          // The same everywhere: one plain line, nothing to compare.
          retries: 0,
        },
      });
    });
  }
  for (let i = 0; i < results.length; i += 1000) {
    await call('POST', `/experiment/${SLUG}/logs`, { results: results.slice(i, i + 1000) });
  }
  // Flagged, a second later: a key that names no variant, and an assignment issued for A logged as B.
  await new Promise((r) => setTimeout(r, 1100));
  const first = await call('GET', `/experiment/${SLUG}/results?limit=1`);
  const forA = first.results[0].variantKey === 'A' ? first.results[0] : null;
  await call('POST', `/experiment/${SLUG}/log`, {
    variantKey: 'C',
    userId: 'user-x',
    metrics: { success: true },
  });
  const mismatch = forA ?? (await call('GET', `/experiment/${SLUG}/results?variant=A&limit=1`)).results[0];
  await call('POST', `/experiment/${SLUG}/log`, {
    variantKey: 'B',
    userId: mismatch.userId,
    assignmentId: mismatch.assignmentId,
    metrics: { success: false },
  });
  const flagged = await call('GET', `/experiment/${SLUG}/results?variant=C`);
  flaggedSince = flagged.results[0].createdAt;
}

/** Waits until every exposure is written (in the background) so the page and the test read the same. */
async function settled(slug: string, total: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const a = await call('GET', `/experiment/${slug}/analysis`);
    if (Object.values(a.exposures as Record<string, number>).reduce((x, y) => x + y, 0) >= total) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`exposures of ${slug} never reached ${total}`);
}

/** A displayed number ("+4.3%", "1,003", "0.7787", "73.4%") and half a unit of its last digit. */
function readNumber(text: string): { value: number; tolerance: number } {
  const m = /([+-]?)([\d,]*\.?\d+(?:e[+-]?\d+)?)(%?)/.exec(text.replace('−', '-'));
  assert.ok(m, `no number in ${JSON.stringify(text)}`);
  const digits = m[2]!.replaceAll(',', '');
  const decimals = /e/.test(digits) ? 0 : (digits.split('.')[1]?.length ?? 0);
  const scale = m[3] ? 0.01 : 1;
  const raw = Number(digits) * (m[1] === '-' ? -1 : 1);
  const exponent = /e([+-]?\d+)/.exec(digits);
  const unit = exponent
    ? 10 ** (Number(exponent[1]) - (digits.split('e')[0]!.split('.')[1]?.length ?? 0))
    : 10 ** -decimals;
  return { value: raw * scale, tolerance: (unit / 2) * scale + 1e-12 };
}

function assertShows(text: string, expected: number, what: string): void {
  const { value, tolerance } = readNumber(text);
  assert.ok(
    Math.abs(value - expected) <= tolerance,
    `${what}: the page shows ${text} (${value}), the API ${expected} (±${tolerance})`,
  );
}

async function text(scope: Locator, testid: string): Promise<string> {
  return (await scope.getByTestId(testid).innerText()).trim();
}

const QUANTILES = ['p50', 'p90', 'p95', 'p99'] as const;
const CORRECTION_SHORT: Record<string, string> = { holm: 'Holm', bh: 'BH' };

/** A metric's heading: its label, the threshold of a guardrail, the corrected chip. */
async function compareMetricHead(row: Locator, metric: MetricAnalysis, correction: string): Promise<void> {
  const what = `${metric.name} heading`;
  assert.equal(await text(row, 'metric-label'), metric.label, `${what}: the label`);
  assert.doesNotMatch(await row.locator('th').innerText(), /mean per user/, what);
  const threshold = row.getByTestId('threshold');
  if (metric.role === 'guardrail') {
    const shown = await text(row, 'threshold');
    assertShows(/threshold ([\d.]+%)/.exec(shown)![1]!, metric.threshold!, `${what}: threshold`);
  } else assert.equal(await threshold.count(), 0, what);
  const chip = row.getByTestId('corrected');
  if (metric.corrected && correction !== 'none') {
    assert.equal(await text(row, 'corrected'), `${CORRECTION_SHORT[correction]}-adjusted`, what);
  } else assert.equal(await chip.count(), 0, what);
}

/** Quantiles are shown exactly where the analysis has them (numeric metrics, once the store sends them). */
async function compareQuantiles(
  cell: Locator,
  metric: MetricAnalysis,
  v: VariantAnalysis,
  what: string,
): Promise<void> {
  const shown = cell.getByTestId('quantiles');
  const q = metric.kind === 'proportion' ? undefined : v.quantiles;
  const present = q ? QUANTILES.filter((k) => q[k] !== null && q[k] !== undefined) : [];
  if (present.length === 0) {
    assert.equal(await shown.count(), 0, `${what}: no quantiles`);
    return;
  }
  for (const k of present) {
    const t = await text(cell, `quantile-${k}`);
    assert.ok(t.startsWith(`${k} `), `${what}: ${t}`);
    assertShows(t.slice(k.length + 1), q![k]!, `${what} ${k}`);
  }
}

/** The guardrail's status against its threshold: 'Guardrail passed: could be 1.2% worse (90% Welch t interval); threshold 2%'. */
async function compareGuardrail(
  cell: Locator,
  metric: MetricAnalysis,
  v: VariantAnalysis,
  what: string,
): Promise<void> {
  const line = cell.getByTestId('guardrail');
  if (!v.guardrail) {
    assert.equal(await line.count(), 0, what);
    return;
  }
  const g = v.guardrail;
  assert.equal(await line.getAttribute('data-status'), g.status, `${what}: guardrail status`);
  const shown = await line.innerText();
  const m = new RegExp(
    `^Guardrail ${g.status}: (could be|at worst) ([\\d.]+%) (worse|better) \\(([\\d.]+)% ([\\w ]+)\\); threshold ([\\d.]+%)$`,
  ).exec(shown.trim());
  assert.ok(m, `${what}: ${shown}`);
  // The worse end, on the worse side (positive) or the better side (negative), as the metric's direction reads.
  assert.notEqual(g.bound, null, `${what}: a bound`);
  const bound = g.bound as number;
  const worse = metric.direction === 'increase' ? -bound : bound;
  assert.equal(m[1], worse > 0 ? 'could be' : 'at worst', `${what}: ${shown}`);
  assert.equal(m[3], worse > 0 ? 'worse' : 'better', `${what}: ${shown}`);
  assertShows(m[2]!, Math.abs(bound), `${what}: guardrail bound`);
  // The guardrail's own interval is named: its test at level 1 − 2·alpha (issue 33).
  const test = (g as { test?: { method: string; level: number } }).test!;
  assert.equal(Number(m[4]), Number((test.level * 100).toPrecision(3)), `${what}: ${shown}`);
  assert.match(m[5]!, test.method === 'welch' ? /^Welch t interval$/ : /\w/, `${what}: ${shown}`);
  assertShows(m[6]!, g.threshold, `${what}: guardrail threshold`);
}

/** Every scorecard number against the API's analysis with the same options. */
async function compareScorecard(page: Page, query: string): Promise<void> {
  const analysis = await call('GET', `/experiment/${SLUG}/analysis?${query}`);
  // The page keeps the last numbers while the next load runs: wait for the ones with these options.
  const { method, alpha, control } = analysis;
  const correction = method === 'bayesian' ? 'none' : analysis.correction;
  await page
    .locator(
      `[data-testid="scorecard"][data-method="${method}"][data-alpha="${alpha}"][data-control="${control}"][data-correction="${correction}"]`,
    )
    .waitFor();
  // The default correction (BH over secondary metrics) and an asked-for BH carry the same attributes: the
  // note, which names the family, tells when the page shows the asked-for one.
  await retrying(() => compareCorrectionNote(page, analysis));
  assert.equal(await text(page.locator('body'), 'verdict-summary'), analysis.verdict.summary);
  assert.equal(await page.getByTestId('verdict').getAttribute('data-status'), analysis.verdict.status);
  await compareExposed(page, analysis);
  await compareSrmLine(page, analysis);
  await compareCorrectionNote(page, analysis);
  const rows = page.getByTestId('scorecard').locator('tbody > tr');
  assert.equal(await rows.count(), analysis.metrics.length);
  // Primary first.
  assert.equal(await rows.first().getAttribute('data-testid'), 'metric-row-success');
  for (const metric of analysis.metrics) {
    const row = page.getByTestId(`metric-row-${metric.name}`);
    await compareMetricHead(row, metric, correction);
    if (metric.noVariation) {
      // One plain line: no effect, no interval, no p-value.
      const line = await text(row, 'no-variation');
      assert.match(line, /^No variation: every value is /, metric.name);
      assertShows(/every value is (\S+)/.exec(line)![1]!, metric.variants[0].mean, `${metric.name} value`);
      for (const id of ['lift', 'ci', 'pvalue', 'chance', 'significance']) {
        assert.equal(await row.getByTestId(id).count(), 0, `${metric.name}: no ${id}`);
      }
      continue;
    }
    assert.equal(await row.getByTestId('no-variation').count(), 0, metric.name);
    for (const v of metric.variants) {
      const cell = row.getByTestId(`cell-${metric.name}-${v.key}`);
      const what = `${metric.name}/${v.key} (${query})`;
      assert.equal(readNumber(await text(cell, 'n')).value, v.n, `${what} n`);
      assertShows(await text(cell, 'mean'), v.mean, `${what} mean`);
      await compareQuantiles(cell, metric, v, what);
      if (v.key === analysis.control) continue;
      assertShows(await text(cell, 'lift'), v.relative.estimate, `${what} lift`);
      const [lo, hi] = (await text(cell, 'ci')).replace(/^\[|\]$/g, '').split(', ');
      assertShows(lo!, v.relative.ci[0], `${what} lower bound`);
      assertShows(hi!, v.relative.ci[1], `${what} upper bound`);
      // The interval names the test that produced it (issue 33).
      const test = v.test as { method: string; level: number };
      const named = await text(cell, 'interval-test');
      if (test.method === 'known') assert.match(named, /^exact/, what);
      else assert.ok(named.startsWith(`${Number((test.level * 100).toPrecision(3))}% `), `${what}: ${named}`);
      if (analysis.method === 'bayesian') {
        if (v.chanceToWin === null) assert.match(await text(cell, 'chance'), /needs a direction/);
        else assertShows(await text(cell, 'chance'), v.chanceToWin, `${what} chance to win`);
      } else {
        // pValue decides: marked adjusted exactly when the metric is in the correction's family (issue 33).
        const shown = cell.getByTestId('pvalue');
        const adjusted = Boolean(metric.corrected) && correction !== 'none';
        assert.equal(await shown.getAttribute('data-adjusted'), String(adjusted), what);
        const expected = v.pValue ?? v.absolute.pValue;
        const p = (await shown.innerText()).trim();
        if (adjusted) assert.match(p, new RegExp(`\\(${CORRECTION_SHORT[correction]}-adjusted\\)$`), what);
        else assert.doesNotMatch(p, /adjusted/, what);
        if (expected < 0.0001) assert.match(p, /p < 0\.0001/, what);
        else assertShows(p, expected, `${what} p-value`);
      }
      const word = await text(cell, 'significance');
      const expected =
        metric.role === 'guardrail' && v.guardrail?.status === 'failed'
          ? 'Guardrail failed'
          : !v.significant
            ? 'Not significant'
            : v.better
              ? 'Better'
              : v.worse
                ? 'Worse'
                : 'Significant';
      assert.equal(word, expected, `${what} significance`);
      await compareGuardrail(cell, metric, v, what);
      if (metric.role === 'guardrail') assert.ok(v.guardrail, `${what}: the API sends a guardrail status`);
      const hint = cell.getByTestId('more-units');
      if (v.moreUnits === null || v.moreUnits === undefined) assert.equal(await hint.count(), 0, what);
      else assertShows(await hint.innerText(), v.moreUnits, `${what} more units`);
    }
  }
}

/** The sample-ratio line: what was counted (users or calls) and the counts per variant. */
async function compareSrmLine(page: Page, analysis: Analysis): Promise<void> {
  const line = page.getByTestId('srm-line');
  const unit = analysis.srm.unit ?? 'call';
  assert.equal(await line.getAttribute('data-unit'), unit);
  const shown = await line.innerText();
  if (analysis.srm.pValue === null) {
    assert.match(shown, new RegExp(`not checked yet: no ${unit}s`));
    return;
  }
  assert.match(shown, new RegExp(`^Sample ratio, ${unit}s per variant: `), shown);
  const counts = (analysis.srm.counts ?? analysis.exposures) as Record<string, number>;
  for (const [key, n] of Object.entries(counts)) {
    assertShows(new RegExp(`\\b${key} ([\\d,]+)`).exec(shown)![1]!, n, `srm count of ${key}`);
  }
  assert.match(shown, analysis.srm.mismatch ? /MISMATCH/ : /as the weights ask/);
  if (analysis.srm.pValue >= 0.0001)
    assertShows(/p = ([\d.]+)/.exec(shown)![1]!, analysis.srm.pValue, 'srm p');
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * What was exposed, in the unit randomized, on the verdict line and each variant's card: users with their
 * calls beside them (sticky), or calls alone (random).
 */
async function compareExposed(page: Page, analysis: Analysis): Promise<void> {
  const { unit, counts } = analysis.exposed;
  const total = page.getByTestId('exposed-total');
  assert.equal(await total.getAttribute('data-unit'), unit);
  assertShows(await total.innerText(), sum(counts), `${unit}s exposed`);
  const calls = page.getByTestId('exposures-total');
  const line = await page.getByTestId('verdict').locator('p', { has: total }).innerText();
  if (unit === 'user') {
    assertShows(await calls.innerText(), sum(analysis.exposures), 'the calls beside the users');
    assert.match(line, / · exposed: [\d,]+ users? \([\d,]+ calls?\)$/, line);
  } else {
    assert.equal(await calls.count(), 0, 'random: the calls are the units, shown once');
    assert.match(line, / · exposed: [\d,]+ calls?$/, line);
  }
  for (const [key, n] of Object.entries(counts)) {
    const card = page.getByTestId(`variant-${key}`);
    const shown = card.getByTestId('variant-exposed');
    assert.equal(await shown.getAttribute('data-unit'), unit, key);
    assertShows(await shown.innerText(), n, `${unit}s exposed to ${key}`);
    const beside = card.getByTestId('variant-exposures');
    if (unit === 'user') assertShows(await beside.innerText(), analysis.exposures[key]!, `calls of ${key}`);
    else assert.equal(await beside.count(), 0, key);
  }
}

/** The experiments list's row: what was exposed, as on the experiment's page. */
async function compareListRow(page: Page, slug: string): Promise<void> {
  const analysis = (await call('GET', `/experiment/${slug}/analysis`)) as Analysis;
  const row = page.locator(`[data-testid="experiment-row"][data-slug="${slug}"]`);
  await row.getByTestId('verdict-badge').waitFor();
  const { unit, counts } = analysis.exposed;
  const shown = row.getByTestId('row-exposed');
  assert.equal(await shown.getAttribute('data-unit'), unit, slug);
  assertShows(await shown.innerText(), sum(counts), `${slug}: ${unit}s in the list`);
  const calls = row.getByTestId('row-exposures');
  if (unit === 'user')
    assertShows(await calls.innerText(), sum(analysis.exposures), `${slug}: calls in the list`);
  else assert.equal(await calls.count(), 0, slug);
  assert.match(
    await text(row, 'row-exposed-cell'),
    unit === 'user' ? /^[\d,]+ users? \([\d,]+ calls?\)$/ : /^[\d,]+ calls?$/,
  );
}

/** Runs `check` until it passes, for up to 15 s; then its last failure. */
async function retrying(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Which correction is in use, and on which metrics. */
async function compareCorrectionNote(page: Page, analysis: Analysis): Promise<void> {
  const note = page.getByTestId('correction-note');
  const shown = await note.innerText();
  if (analysis.method === 'bayesian') {
    assert.match(shown, /no p-values to correct/);
    return;
  }
  assert.equal(await note.getAttribute('data-correction'), analysis.correction);
  if (analysis.correction === 'none') {
    assert.match(shown, /^No multiple-comparison correction/);
    return;
  }
  const compared = analysis.metrics.filter((m) => !m.noVariation);
  const family = compared.filter((m) => m.corrected).map((m) => m.name);
  const alone = compared.filter((m) => !m.corrected).map((m) => m.name);
  const words = analysis.correction === 'bh' ? 'Benjamini–Hochberg \\(BH\\)' : 'Holm';
  if (family.length === 0) {
    assert.match(shown, new RegExp(`^${words} correction: no metric shown is in its family`));
    return;
  }
  const list = (names: string[]) => new Intl.ListFormat('en-US', { type: 'conjunction' }).format(names);
  assert.ok(
    shown.startsWith(
      `${analysis.correction === 'bh' ? 'Benjamini–Hochberg (BH)' : 'Holm'} correction across ${list(family)}: `,
    ),
    shown,
  );
  assert.match(shown, new RegExp(words));
  if (alone.length) assert.ok(shown.includes(`; ${list(alone)} `), shown);
}

/** The file's data, written once the server answers. */
async function setUp(): Promise<void> {
  readKey = (await call('POST', '/keys', { name: 'viewer', scopes: ['read'] })).key;
  await seedExperiment();
  await settled(SLUG, USERS);
}

describe('the experiment page in headless Chromium', () => {
  test("the scorecard shows the API's numbers: frequentist, bayesian, another control, another alpha", async () => {
    const page = await openDashboard(ui.browser, ui.base, { key: readKey, hash: `#/experiment/${SLUG}` });
    try {
      await page.getByTestId('scorecard').waitFor();
      await compareScorecard(page, '');
      await page.getByTestId('method').selectOption('bayesian');
      await compareScorecard(page, 'method=bayesian');
      await page.getByTestId('control').selectOption('B');
      await compareScorecard(page, 'method=bayesian&control=B');
      await page.getByTestId('method').selectOption('sequential');
      await page.getByTestId('alpha').selectOption('0.01');
      await compareScorecard(page, 'method=sequential&control=B&alpha=0.01');
      // Corrections asked for: BH and Holm across every metric but guardrails, the adjusted p-values shown.
      await page.getByTestId('correction').selectOption('bh');
      await compareScorecard(page, 'method=sequential&control=B&alpha=0.01&correction=bh');
      await page.getByTestId('method').selectOption('frequentist');
      await page.getByTestId('control').selectOption('A');
      await page.getByTestId('correction').selectOption('holm');
      await compareScorecard(page, 'method=frequentist&control=A&alpha=0.01&correction=holm');
      const holm = await call('GET', `/experiment/${SLUG}/analysis?alpha=0.01&correction=holm`);
      assert.ok(
        (holm as Analysis).metrics.some((m) => m.corrected),
        'a correction asked for has metrics in its family',
      );
      await page.getByTestId('correction').selectOption('none');
      await compareScorecard(page, 'method=frequentist&control=A&alpha=0.01&correction=none');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  for (const width of WIDTHS) {
    test(`overview, charts and the list at ${width} px; a read key sees no status button`, async () => {
      const page = await openDashboard(ui.browser, ui.base, {
        key: readKey,
        width,
        hash: `#/experiment/${SLUG}`,
      });
      try {
        await page.getByTestId('scorecard').waitFor();
        await page.getByTestId('variant-B').waitFor();
        assert.equal(await page.getByRole('group', { name: 'Change status' }).count(), 0);
        assert.equal(await page.getByTestId('tab-edit').count(), 0);
        assert.match(await text(page.locator('body'), 'verdict-summary'), /./);
        await screenshot(page, `experiment-overview-${width}`);

        await page.getByTestId('tab-charts').click();
        const charts = ['chart-exposures', 'chart-effect', 'chart-tradeoff'];
        for (const id of charts) await page.getByTestId(id).locator('canvas').waitFor();
        // A young experiment is charted minute by minute (issue 36), sticky as this one is.
        assert.equal(await page.getByTestId('interval').inputValue(), 'minute');
        const series = await call(
          'GET',
          `/experiment/${SLUG}/analysis/timeseries?metric=success&interval=minute`,
        );
        const hourly = await call(
          'GET',
          `/experiment/${SLUG}/analysis/timeseries?metric=success&interval=hour`,
        );
        assert.ok(series.periods.length >= hourly.periods.length, 'as many minutes as hours at least');
        assert.deepEqual(
          series.periods.at(-1).variants.map((v: { n: number }) => v.n),
          hourly.periods.at(-1).variants.map((v: { n: number }) => v.n),
          'the last minute reads as the last hour',
        );
        const last = series.periods.at(-1).variants.find((v: { key: string }) => v.key === 'B');
        const label = (await page.getByTestId('chart-effect').getAttribute('aria-label')) ?? '';
        assertShows(
          /now B: ([^,]+)/.exec(label)![1]!,
          last.relative.estimate,
          'the chart names its latest lift',
        );
        const exposures = (await page.getByTestId('chart-exposures').getAttribute('aria-label')) ?? '';
        const analysis = await call('GET', `/experiment/${SLUG}/analysis`);
        for (const [key, n] of Object.entries(analysis.exposures as Record<string, number>)) {
          assertShows(
            new RegExp(`${key} ([\\d,]+)`).exec(exposures)![1]!,
            n,
            `exposures of ${key} in the chart's text`,
          );
        }
        // The chart counts calls per period; a sticky experiment's distinct users are given as totals only.
        const caption = page.getByTestId('exposures-caption');
        assert.equal(await caption.getAttribute('data-unit'), analysis.exposed.unit);
        const users =
          /Distinct users exposed \(over the whole experiment, not per (?:minute|hour)\): (.+)\.$/.exec(
            (await caption.innerText()).trim(),
          );
        assert.ok(users, await caption.innerText());
        for (const [key, n] of Object.entries(analysis.exposed.counts as Record<string, number>)) {
          assertShows(
            new RegExp(`${key} ([\\d,]+)`).exec(users[1]!)![1]!,
            n,
            `users of ${key} in the caption`,
          );
        }
        // The series says its unit (users in a sticky experiment whose values all have a user, else calls).
        const unit = page.getByTestId('series-unit');
        assert.equal(await unit.getAttribute('data-unit'), series.unit);
        assert.match(await unit.innerText(), new RegExp(`^Unit: ${series.unit}s as units`));
        assert.match(label, new RegExp(`${series.unit}s as units`));
        assert.match(
          (await page.getByTestId('chart-tradeoff').getAttribute('aria-label')) ?? '',
          /success against cost_usd/,
        );
        await screenshot(page, `experiment-charts-${width}`);

        await page.goto(`${ui.base}/ui/#/`);
        const row = page.locator(`[data-testid="experiment-row"][data-slug="${SLUG}"]`);
        await row.getByTestId('verdict-badge').waitFor();
        // One call per user here: 2,000 users (2,000 calls).
        assertShows(await text(row, 'row-exposed'), USERS, 'users in the list');
        assertShows(await text(row, 'row-exposures'), USERS, 'calls in the list');
        await compareListRow(page, SLUG);
        await screenshot(page, `experiments-list-${width}`);
        assertNoConsoleErrors(page);
      } finally {
        await page.context().close();
      }
    });
  }

  test('a sample-ratio mismatch shows its banner and verdict', async () => {
    await call('POST', '/experiments', {
      slug: 'skewed',
      status: 'running',
      assignment: 'sticky',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
    });
    // Two in three of B's users never reach assign (as if B's code path crashed before it). The exposures
    // come as a locally evaluating client posts them; a user asking 200 times would be one unit.
    const { experiments } = (await call('GET', '/experiments/definitions')) as { experiments: Definition[] };
    let dropped = 0;
    const plan = planTraffic(
      experiments.find((d) => d.slug === 'skewed')!,
      drawUsers(seededRandom(7), 300, 'skew'),
      () => ({}),
      { keep: (v) => v === 0 || dropped++ % 3 === 0 },
    );
    for (let i = 0; i < plan.exposures.length; i += 1000) {
      await call('POST', '/exposures', { exposures: plan.exposures.slice(i, i + 1000) });
    }
    await settled('skewed', plan.exposures.length);
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/experiment/skewed' });
    try {
      await page.getByTestId('srm-banner').waitFor();
      assert.equal(await page.getByTestId('verdict').getAttribute('data-status'), 'sample-ratio-mismatch');
      const banner = await page.getByTestId('srm-banner').innerText();
      assert.match(banner, /Sample ratio mismatch/);
      // What was counted, with the counts tested.
      const analysis = (await call('GET', '/experiment/skewed/analysis')) as Analysis;
      const units = analysis.srm.unit === 'user' ? 'Users' : 'Calls';
      const counts = `${units} per variant: A ${analysis.srm.counts.A!.toLocaleString('en-US')}, B ${analysis.srm.counts.B!.toLocaleString('en-US')};`;
      assert.ok(banner.includes(counts), `${banner} names ${counts}`);
      assert.match(await page.getByTestId('srm-line').innerText(), /MISMATCH/);
      assert.equal(await page.getByTestId('srm-line').getAttribute('data-unit'), analysis.srm.unit);
      // Users who call 1 to 30 times: the page shows the users randomized, their calls beside them.
      assert.deepEqual(analysis.exposed, {
        unit: 'user',
        counts: { A: plan.sent.users[0], B: plan.sent.users[1] },
      });
      assert.deepEqual(analysis.exposures, { A: plan.sent.calls[0], B: plan.sent.calls[1] });
      assert.ok(plan.sent.calls[0]! > plan.sent.users[0]!, 'repeat users');
      await page.getByTestId('variant-B').getByTestId('variant-exposed').waitFor();
      await compareExposed(page, analysis);
      await screenshot(page, 'experiment-srm-1280');
      await page
        .getByTestId('variants')
        .screenshot({ path: join(ARTIFACTS_DIR, 'experiment-exposed-users-1280.png') });
      await page.goto(`${ui.base}/ui/#/`);
      await compareListRow(page, 'skewed');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});

describe('exposed in the unit randomized, in headless Chromium', () => {
  test('a random experiment shows calls, once, on its page, its cards and the list', async () => {
    await call('POST', '/experiments', {
      slug: 'per-call',
      status: 'running',
      variants: [
        { key: 'A', payload: {}, trafficPercent: 50 },
        { key: 'B', payload: {}, trafficPercent: 50 },
      ],
    });
    // Users calling 1 to 30 times, each call drawn afresh: the calls were randomized, so calls are counted.
    const { experiments } = (await call('GET', '/experiments/definitions')) as { experiments: Definition[] };
    const plan = planTraffic(
      experiments.find((d) => d.slug === 'per-call')!,
      drawUsers(seededRandom(9), 200, 'per-call'),
      () => ({}),
      { random: seededRandom(10) },
    );
    for (let i = 0; i < plan.exposures.length; i += 1000) {
      await call('POST', '/exposures', { exposures: plan.exposures.slice(i, i + 1000) });
    }
    await settled('per-call', plan.exposures.length);
    const analysis = (await call('GET', '/experiment/per-call/analysis')) as Analysis;
    assert.deepEqual(analysis.exposed, {
      unit: 'call',
      counts: { A: plan.sent.calls[0], B: plan.sent.calls[1] },
    });
    const page = await openDashboard(ui.browser, ui.base, { key: readKey, hash: '#/experiment/per-call' });
    try {
      await page.getByTestId('variant-B').getByTestId('variant-exposed').waitFor();
      await compareExposed(page, analysis);
      await page
        .getByTestId('variants')
        .screenshot({ path: join(ARTIFACTS_DIR, 'experiment-exposed-calls-1280.png') });
      await page.goto(`${ui.base}/ui/#/`);
      await compareListRow(page, 'per-call');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});

describe('the results page in headless Chromium', () => {
  for (const width of WIDTHS) {
    test(`pages, filters, expands a result and shows flagged ones (${width} px)`, async () => {
      const page = await openDashboard(ui.browser, ui.base, {
        key: readKey,
        width,
        hash: `#/experiment/${SLUG}/results`,
      });
      try {
        const rows = page.getByTestId('result-row');
        await rows.first().waitFor();
        // Newest first.
        const api = await call('GET', `/experiment/${SLUG}/results?limit=25&order=desc`);
        assert.equal(await rows.count(), 25);
        assert.equal(await rows.first().getAttribute('data-log-id'), api.results[0].logId);
        await page.getByTestId('next-page').click();
        await page.locator(`[data-log-id="${api.results[24].logId}"]`).waitFor({ state: 'detached' });
        const second = await call(
          'GET',
          `/experiment/${SLUG}/results?limit=25&order=desc&cursor=${api.nextCursor}`,
        );
        await page.locator(`[data-log-id="${second.results[0].logId}"]`).waitFor();
        await page.getByTestId('prev-page').click();
        await page.locator(`[data-log-id="${api.results[0].logId}"]`).waitFor();

        // Open the newest result with an input (the newest two are the flagged ones): its JSON.
        const opened = api.results.find((r: { input: unknown }) => r.input !== null);
        const openedRow = page.locator(`[data-testid="result-row"][data-log-id="${opened.logId}"]`);
        await openedRow.getByTestId('expand-result').click();
        const detail = page.getByTestId('result-detail');
        await detail.waitFor();
        assert.match(await detail.innerText(), new RegExp(opened.input.question.replace('?', '\\?')));
        assert.match(await detail.innerText(), new RegExp(opened.logId));
        assert.equal(await openedRow.getByTestId('expand-result').getAttribute('aria-expanded'), 'true');
        await screenshot(page, `experiment-results-${width}`);

        // From the time the flagged ones were logged: both, flagged.
        // In the browser's time zone; a string, since tsx would wrap a named function in a helper the page lacks.
        const local = await page.evaluate<string>(`(() => {
          const d = new Date(${JSON.stringify(flaggedSince)});
          const p = (n) => String(n).padStart(2, '0');
          return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' +
            p(d.getMinutes()) + ':' + p(d.getSeconds());
        })()`);
        await page.getByTestId('since').fill(local);
        await page.locator('[data-flagged="true"]').nth(1).waitFor();
        // Newest first, the flagged ones are on the page before the filter applies: wait for the filtered page.
        const unflagged = page.locator('[data-testid="result-row"][data-flagged="false"]');
        await waitUntil(page, async () => (await unflagged.count()) === 0, 'only flagged rows');
        assert.equal(await page.locator('[data-testid="result-row"][data-flagged="false"]').count(), 0);
        await page.getByTestId('flag-unknown').waitFor();
        assert.match(await page.getByTestId('flag-assigned').innerText(), /assigned A/);
        await screenshot(page, `experiment-results-flagged-${width}`);

        // Variant B only, from the start.
        await page.goto(`${ui.base}/ui/#/experiment/${SLUG}/results`);
        await page.getByTestId('variant-filter').selectOption('B');
        await page.waitForURL(/variant=B/);
        await page.locator('[data-testid="result-row"]').first().waitFor();
        const onlyB = await call('GET', `/experiment/${SLUG}/results?limit=25&order=desc&variant=B`);
        await page.locator(`[data-log-id="${onlyB.results[0].logId}"]`).waitFor();
        const variants = await page.getByTestId('result-row').getByTestId('result-variant').allInnerTexts();
        assert.deepEqual([...new Set(variants)], ['B']);
        assertNoConsoleErrors(page);
      } finally {
        await page.context().close();
      }
    });
  }

  test('CSV and NDJSON exports download every result, with the key', async () => {
    const page = await openDashboard(ui.browser, ui.base, {
      key: readKey,
      hash: `#/experiment/${SLUG}/results`,
    });
    try {
      await page.getByTestId('result-row').first().waitFor();
      const expected = await (
        await fetch(`${ui.base}/experiment/${SLUG}/results/export?format=csv`, {
          headers: { 'x-api-key': API_KEY },
        })
      ).text();
      for (const format of ['csv', 'ndjson']) {
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByTestId(`export-${format}`).click(),
        ]);
        assert.equal(download.suggestedFilename(), `${SLUG}-results.${format}`);
        const body = readFileSync((await download.path())!, 'utf8');
        const lines = body.split(/\r?\n/).filter(Boolean);
        if (format === 'csv') {
          assert.equal(body, expected, 'the same CSV as the API');
          assert.match(lines[0]!, /^logId,variantKey,/);
          assert.equal(lines.length, USERS + 2 + 1);
        } else {
          assert.equal(lines.length, USERS + 2);
          assert.equal(JSON.parse(lines[0]!).experimentVersion, 1);
        }
      }
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});
