// Ratio metrics, caps and covariates (issue 33 items 9-11) on the dashboard, in headless Chromium against a
// real server: an experiment declaring one of each, with 300 users' calls, shows the ratio's label, the cap
// used and what it capped (in all and per variant), the covariate's variance reduction and, per treatment,
// the unadjusted effect and p-value labelled "unadjusted", every number as GET /analysis says it; then the
// form declares the three, saves them as the API stores them and shows them again when edited.
import assert from 'node:assert/strict';
import { test } from 'node:test';
// @ts-expect-error: the dashboard is plain JavaScript (no build step), without type declarations
import * as pageFormat from '../dashboard/format.js';
import type { MetricAnalysis } from '../src/stats/analysis-schema.js';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { seedDerived } from './helpers/derived-data.js';

const API_KEY = 'ui-derived-root-key-0123456789abcdef';
const SLUG = 'derived-metrics';

// The page's own rounding, so the texts compare exactly.
const { formatCount, formatLift, formatP, formatValue } = pageFormat as Record<
  'formatCount' | 'formatLift' | 'formatP' | 'formatValue',
  (x: number | null | undefined) => string
>;

const ui = dashboardRun(API_KEY);
const call = ui.call;

const text = async (l: { innerText(): Promise<string> }) => (await l.innerText()).replace(/\s+/g, ' ').trim();

test('the scorecard shows a ratio, a cap and an adjustment as the analysis answers them', async () => {
  await seedDerived(call, SLUG);
  const analysis = await call('GET', `/experiment/${SLUG}/analysis`);
  const metric = (name: string): MetricAnalysis =>
    analysis.metrics.find((m: MetricAnalysis) => m.name === name);
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: `#/experiment/${SLUG}` });
  try {
    await page.getByTestId('scorecard').waitFor();

    const ratioRow = page.getByTestId('metric-row-cost_per_success');
    assert.equal(await text(ratioRow.getByTestId('metric-label')), 'cost_usd per success, users as units');
    assert.equal(await ratioRow.getByTestId('cap').count(), 0);

    // The cap: the value used (p90 of the users' means per call), the users it capped, 10% of them.
    const cost = metric('cost_usd');
    const cap = cost.cap!;
    assert.equal(cap.percentile, 90);
    assert.ok(Math.abs(cap.share! - 0.1) < 0.02, `share ${cap.share}`);
    const costRow = page.getByTestId('metric-row-cost_usd');
    assert.equal(
      await text(costRow.getByTestId('cap')),
      `capped at ${formatValue(cap.value)} (p90): ${Math.round(cap.units!)} of 300 users, ${Number((cap.share! * 100).toFixed(1))}%`,
    );
    assert.match(
      await text(costRow.getByTestId('metric-label')),
      new RegExp(`capped at ${formatValue(cap.value)}$`),
    );
    for (const v of cost.variants) {
      const shown = await text(costRow.getByTestId(`cell-cost_usd-${v.key}`).getByTestId('capped'));
      assert.equal(
        shown,
        `capped: ${formatCount(Math.round(v.capped!.units!))} users, ${Number((v.capped!.share! * 100).toFixed(1))}%`,
      );
    }

    // The adjustment: the variance it removed, the adjusted reading in the cell, the unadjusted one beside it.
    const latency = metric('latency_ms');
    const adjustment = latency.adjustment!;
    assert.ok(adjustment.adjusted && adjustment.varianceReduction! > 0.5);
    const latencyRow = page.getByTestId('metric-row-latency_ms');
    assert.equal(
      await text(latencyRow.getByTestId('adjustment')),
      `adjusted on input_tokens: variance −${Math.round(adjustment.varianceReduction! * 100)}%`,
    );
    const [A, B] = latency.variants;
    const control = latencyRow.getByTestId('cell-latency_ms-A');
    assert.equal(
      await text(control.getByTestId('unadjusted')),
      `unadjusted: mean ${formatValue(A!.unadjusted!.mean)}`,
    );
    const treatment = latencyRow.getByTestId('cell-latency_ms-B');
    assert.equal(await text(treatment.getByTestId('lift')), formatLift(B!.relative!.estimate));
    assert.equal(await text(treatment.getByTestId('pvalue')), formatP(B!.pValue!));
    const before = B!.unadjusted!;
    const [lo, hi] = before.relative!.ci;
    assert.equal(
      await text(treatment.getByTestId('unadjusted')),
      `unadjusted: ${formatLift(before.relative!.estimate)} [${formatLift(lo)}, ${formatLift(hi)}], ${formatP(before.pValue!)} (mean ${formatValue(before.mean)})`,
    );
    assert.ok(before.pValue! > B!.pValue!, 'the adjustment narrows the comparison');
    // Metrics without a definition show none of it.
    assert.equal(await page.getByTestId('metric-row-success').getByTestId('unadjusted').count(), 0);
    await screenshot(page, 'derived-scorecard-1280');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
  // A phone: the same lines, stacked in the cells.
  const phone = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    width: 390,
    hash: `#/experiment/${SLUG}`,
  });
  try {
    const row = phone.getByTestId('metric-row-latency_ms');
    await row.getByTestId('adjustment').waitFor();
    assert.ok(await row.getByTestId('cell-latency_ms-B').getByTestId('unadjusted').isVisible());
    assert.ok(await phone.getByTestId('metric-row-cost_usd').getByTestId('cap').isVisible());
    await screenshot(phone, 'derived-scorecard-390');
    assertNoConsoleErrors(phone);
  } finally {
    await phone.context().close();
  }
});

test('the form declares a ratio, a cap and a covariate, and shows them when edited', async () => {
  const slug = 'derived-form';
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new' });
  try {
    await page.getByTestId('experiment-form').waitFor();
    await page.getByLabel('Slug', { exact: true }).fill(slug);
    const add = async (i: number, name: string, derived: string) => {
      await page.getByTestId('add-metric').click();
      const row = page.getByTestId(`metric-row-${i}`);
      await row.getByTestId('metric-name').fill(name);
      await row.getByTestId('metric-direction').selectOption('decrease');
      await row.getByTestId('metric-role').selectOption('secondary');
      await row.getByTestId('metric-derived').selectOption(derived);
      return row;
    };
    const ratio = await add(0, 'cost_per_success', 'ratio');
    await ratio.getByTestId('metric-numerator').fill('cost_usd');
    await ratio.getByTestId('metric-denominator').fill('cost_per_success');
    const capped = await add(1, 'cost_usd', 'cap-percentile');
    await capped.getByTestId('metric-cap').fill('100');
    const adjusted = await add(2, 'latency_ms', 'covariate');

    // The form's own checks: a ratio of itself, a percentile of 100, a covariate not named yet.
    await page.getByTestId('save').click();
    assert.deepEqual(await ratio.locator('.field-error').allInnerTexts(), [
      "Another metric than 'cost_per_success' itself",
    ]);
    assert.deepEqual(await capped.locator('.field-error').allInnerTexts(), [
      'A percentile above 0 and below 100 (99)',
    ]);
    assert.deepEqual(await adjusted.locator('.field-error').allInnerTexts(), [
      'The name results log that metric under',
    ]);
    assert.equal(
      (await fetch(`${ui.base}/experiment/${slug}`, { headers: { 'x-api-key': API_KEY } })).status,
      404,
    );

    await ratio.getByTestId('metric-denominator').fill('success');
    await capped.getByTestId('metric-cap').fill('99');
    await adjusted.getByTestId('metric-covariate').fill('input_tokens');
    await screenshot(page, 'derived-form-1280');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();
    const declared = [
      {
        name: 'cost_per_success',
        direction: 'decrease',
        role: 'secondary',
        numerator: 'cost_usd',
        denominator: 'success',
      },
      { name: 'cost_usd', direction: 'decrease', role: 'secondary', cap: { percentile: 99 } },
      { name: 'latency_ms', direction: 'decrease', role: 'secondary', covariate: 'input_tokens' },
    ];
    assert.deepEqual((await call('GET', `/experiment/${slug}`)).metrics, declared);

    // Edit: the stored definitions show as saved; a cap changed to a fixed value is saved as one.
    await page.getByTestId('tab-edit').click();
    await page.getByTestId('experiment-form').waitFor();
    const row = (i: number) => page.getByTestId(`metric-row-${i}`);
    assert.equal(await row(0).getByTestId('metric-derived').inputValue(), 'ratio');
    assert.equal(await row(0).getByTestId('metric-numerator').inputValue(), 'cost_usd');
    assert.equal(await row(0).getByTestId('metric-denominator').inputValue(), 'success');
    assert.equal(await row(1).getByTestId('metric-derived').inputValue(), 'cap-percentile');
    assert.equal(await row(1).getByTestId('metric-cap').inputValue(), '99');
    assert.equal(await row(2).getByTestId('metric-covariate').inputValue(), 'input_tokens');
    await row(1).getByTestId('metric-derived').selectOption('cap-value');
    await row(1).getByTestId('metric-cap').fill('0.05');
    await row(2).getByTestId('metric-derived').selectOption('');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();
    assert.deepEqual((await call('GET', `/experiment/${slug}`)).metrics, [
      declared[0],
      { name: 'cost_usd', direction: 'decrease', role: 'secondary', cap: { value: 0.05 } },
      { name: 'latency_ms', direction: 'decrease', role: 'secondary' },
    ]);
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});
