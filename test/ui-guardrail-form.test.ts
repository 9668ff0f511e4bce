// The guardrail monitor's settings in the experiment form (issue 27 item 4) in headless Chromium against a
// real server: guardrailAction and minimumUnits are saved on create and on edit, and read back through the
// API; a minimumUnits below 1 is refused next to its field, nothing sent. With the monitor running every
// second, the experiment page's history says the monitor's pause and why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-guardrail-form-root-key-0123456789';
const ui = dashboardRun(API_KEY, { env: { MONITOR_INTERVAL_SECONDS: '1' } });
const SLUG = 'guarded-prompt';

const call = ui.call;

test('guardrailAction and minimumUnits: defaults shown, saved on create and edit, read back', async () => {
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: '#/new' });
  try {
    await page.getByTestId('experiment-form').waitFor();
    await page.getByLabel('Slug', { exact: true }).fill(SLUG);
    const action = page.getByTestId('field-guardrailAction');
    const units = page.getByTestId('field-minimumUnits');
    assert.equal(await action.inputValue(), 'notify');
    assert.equal(await units.inputValue(), '100');
    assert.match(await page.locator('#guardrailAction-hint').innerText(), /pause also pauses the experiment/);

    // Below 1: refused next to the field, nothing sent.
    await units.fill('0');
    await page.getByTestId('save').click();
    assert.match(await page.getByTestId('error-minimumUnits').innerText(), /at least 1/);
    assert.equal(await units.getAttribute('aria-invalid'), 'true');
    assert.equal(
      (await fetch(`${ui.base}/experiment/${SLUG}`, { headers: { 'x-api-key': API_KEY } })).status,
      404,
    );

    await action.selectOption('pause');
    await units.fill('250');
    await screenshot(page, 'guardrail-form-1280');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();
    const created = await call('GET', `/experiment/${SLUG}`);
    assert.equal(created.guardrailAction, 'pause');
    assert.equal(created.minimumUnits, 250);

    // Edit: the stored values show, and changes are saved again.
    await page.getByTestId('tab-edit').click();
    await page.getByTestId('experiment-form').waitFor();
    assert.equal(await page.getByTestId('field-guardrailAction').inputValue(), 'pause');
    assert.equal(await page.getByTestId('field-minimumUnits').inputValue(), '250');
    await page.getByTestId('field-guardrailAction').selectOption('notify');
    await page.getByTestId('field-minimumUnits').fill('40');
    await page.getByTestId('save').click();
    await page.getByTestId('experiment-overview').waitFor();
    const saved = await call('GET', `/experiment/${SLUG}`);
    assert.equal(saved.guardrailAction, 'notify');
    assert.equal(saved.minimumUnits, 40);
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

test("the history shows the monitor's pause with its reason", async () => {
  const slug = 'costly-prompt';
  await call('POST', '/experiments', {
    slug,
    status: 'running',
    guardrailAction: 'pause',
    minimumUnits: 20,
    variants: [
      { key: 'A', payload: { prompt: 'a' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'b' }, trafficPercent: 50 },
    ],
    metrics: [{ name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 }],
  });
  const results = [];
  for (let i = 0; i < 200; i++) {
    for (const key of ['A', 'B']) {
      results.push({ variantKey: key, metrics: { cost_usd: (1 + (i % 10) / 10) * (key === 'B' ? 1.3 : 1) } });
    }
  }
  await call('POST', `/experiment/${slug}/logs`, { results });
  const deadline = Date.now() + 30_000;
  while ((await call('GET', `/experiment/${slug}`)).status !== 'paused') {
    assert.ok(Date.now() < deadline, 'the monitor did not pause the experiment');
    await new Promise((r) => setTimeout(r, 200));
  }
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, hash: `#/experiment/${slug}` });
  try {
    const paused = page.locator('[data-testid="history-event"][data-type="experiment.status_changed"]');
    await paused.waitFor();
    assert.match(
      await paused.innerText(),
      /^Paused by the guardrail monitor at .+: cost_usd guardrail failed: B fails the cost_usd guardrail: cost_usd is 30(\.\d)?% higher/,
    );
    const failed = page.locator('[data-testid="history-event"][data-type="guardrail.failed"]');
    assert.match(await failed.innerText(), /^Guardrail cost_usd failed, found by the guardrail monitor at /);
    await page.getByTestId('history').scrollIntoViewIfNeeded();
    await screenshot(page, 'guardrail-history-1280');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});
