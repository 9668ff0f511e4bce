// The metric rows of the experiment form (issue 26) in headless Chromium against a real server: a new metric
// has no default direction or role (adding cost_usd without touching the selects once saved it as "higher is
// better, primary", a reversed verdict), so saving is refused, naming the metric, until both are chosen; a
// guardrail's threshold and a metric's statistic are saved and read back through the API, and edited again.
// The assignment select explains random vs sticky.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-metric-form-root-key-0123456789';
const SLUG = 'cheaper-model';

const ui = dashboardRun(API_KEY);
const call = ui.call;

async function status(path: string): Promise<number> {
  return (await fetch(`${ui.base}${path}`, { headers: { 'x-api-key': API_KEY } })).status;
}

test('a metric without a chosen direction or role is not saved; threshold and statistic round-trip', async () => {
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new' });
  try {
    await page.getByTestId('experiment-form').waitFor();
    await page.getByLabel('Slug', { exact: true }).fill(SLUG);

    // random vs sticky is explained next to the choice, sticky suggested for agents and conversations.
    const hint = await page.locator('#assignment-hint').innerText();
    assert.match(hint, /random: every assign call draws a variant by weight/);
    assert.match(hint, /sticky: the same userId always gets the same variant.*agents and conversations/);

    // A new metric starts on "choose…" for both selects.
    await page.getByTestId('add-metric').click();
    const cost = page.getByTestId('metric-row-0');
    await cost.getByTestId('metric-name').fill('cost_usd');
    assert.equal(await cost.getByTestId('metric-direction').inputValue(), '');
    assert.equal(await cost.getByTestId('metric-role').inputValue(), '');
    assert.equal(await cost.getByTestId('metric-direction').locator('option:checked').innerText(), 'choose…');

    await page.getByTestId('save').click();
    const summary = page.getByTestId('error-metrics');
    assert.match(await summary.innerText(), /Not saved: choose "Better when" and "Role" for 'cost_usd'/);
    assert.equal(await cost.getByTestId('metric-direction').getAttribute('aria-invalid'), 'true');
    assert.equal(await cost.getByTestId('metric-role').getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await cost.locator('.field-error').allInnerTexts(), [
      'Choose higher or lower',
      'Choose a role',
    ]);
    // The first unchosen select has the focus, so the keyboard lands where the choice is missing.
    assert.equal(
      await page.evaluate("document.activeElement?.getAttribute('data-testid')"),
      'metric-direction',
    );
    assert.equal(await status(`/experiment/${SLUG}`), 404, 'nothing was sent');
    await screenshot(page, 'metric-form-refused-1280');

    // Choosing only the direction is not enough: the role is named as still missing.
    await cost.getByTestId('metric-direction').selectOption('decrease');
    assert.equal(await cost.getByTestId('metric-direction').getAttribute('aria-invalid'), 'false');
    await page.getByTestId('save').click();
    assert.deepEqual(await cost.locator('.field-error').allInnerTexts(), ['Choose a role']);
    assert.match(await summary.innerText(), /for 'cost_usd'\./);
    assert.equal(await status(`/experiment/${SLUG}`), 404, 'still nothing sent');

    // A second metric with no name yet is named by its position.
    await page.getByTestId('add-metric').click();
    assert.match(await summary.innerText(), /for 'cost_usd', metric 2\./);
    const success = page.getByTestId('metric-row-1');
    await success.getByTestId('metric-name').fill('success');
    await success.getByTestId('metric-direction').selectOption('increase');
    await success.getByTestId('metric-role').selectOption('primary');

    // The guardrail shows its tolerated loss; every metric its statistic.
    await cost.getByTestId('metric-role').selectOption('guardrail');
    assert.equal(
      await success.getByTestId('metric-threshold').count(),
      0,
      'only a guardrail has a threshold',
    );
    await cost.getByTestId('metric-threshold').fill('5');
    await cost.getByTestId('metric-statistic').selectOption('p95');
    assert.equal(await summary.count(), 0, 'the refusal goes once everything is chosen');
    await screenshot(page, 'metric-form-chosen-1280');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();

    const created = await call('GET', `/experiment/${SLUG}`);
    assert.deepEqual(created.metrics, [
      { name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05, statistic: 'p95' },
      { name: 'success', direction: 'increase', role: 'primary' },
    ]);

    // Edit: the stored values show as saved (percent, statistic), and changes are saved again.
    await page.getByTestId('tab-edit').click();
    await page.getByTestId('experiment-form').waitFor();
    const edited = page.getByTestId('metric-row-0');
    assert.equal(await edited.getByTestId('metric-threshold').inputValue(), '5');
    assert.equal(await edited.getByTestId('metric-statistic').inputValue(), 'p95');
    assert.equal(await edited.getByTestId('metric-direction').inputValue(), 'decrease');
    assert.equal(await edited.getByTestId('metric-role').inputValue(), 'guardrail');
    await edited.getByTestId('metric-threshold').fill('12.5');
    await edited.getByTestId('metric-statistic').selectOption('p99');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();
    const saved = await call('GET', `/experiment/${SLUG}`);
    assert.deepEqual(saved.metrics[0], {
      name: 'cost_usd',
      direction: 'decrease',
      role: 'guardrail',
      threshold: 0.125,
      statistic: 'p99',
    });
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});
