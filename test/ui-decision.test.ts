// Completing an experiment from its page with a decision (issue 36, item 5), in headless Chromium at 1400 and 390 px against a
// real server: the Complete confirmation asks what ships and why, sends it with the PATCH; the page's head
// says "shipped B: …" with its date, and the experiments list says "shipped B" on the row. No console errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-decision-root-key-0123456789abcdef';
const ui = dashboardRun(API_KEY);
const call = ui.call;

const variants = [
  { key: 'A', payload: { prompt: 'helpful' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'concise' }, trafficPercent: 50 },
];

for (const width of [1400, 390]) {
  const shipped = `shipped-${width}`;
  const nothing = `nothing-${width}`;
  test(`Complete asks what ships and why; the page and the list show the decision (${width} px)`, async () => {
    await call('POST', '/experiments', { slug: shipped, name: 'Shipped', status: 'running', variants });
    await call('POST', '/experiments', { slug: nothing, name: 'Nothing', status: 'running', variants });
    await call('PATCH', `/experiment/${nothing}`, { status: 'completed', decision: { variant: 'none' } });
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: `#/experiment/${shipped}`,
    });
    try {
      await page.getByTestId('status-completed').click();
      const select = page.getByTestId('decision-variant');
      const options = await select
        .locator('option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
      assert.deepEqual(options, ['', 'A', 'B', 'none']);
      await select.selectOption('B');
      await page.getByTestId('decision-note-input').fill('as good, 30% cheaper');
      assert.equal(
        (await call('GET', `/experiment/${shipped}`)).status,
        'running',
        'nothing before confirming',
      );
      await page.getByTestId('confirm-status').click();

      await page.getByTestId('decision').waitFor();
      assert.equal(await page.getByTestId('decision-what').innerText(), 'shipped B');
      assert.equal(await page.getByTestId('decision-note').innerText(), 'as good, 30% cheaper');
      const stored = await call('GET', `/experiment/${shipped}`);
      assert.equal(stored.status, 'completed');
      assert.deepEqual([stored.decision.variant, stored.decision.note], ['B', 'as good, 30% cheaper']);
      assert.match(await page.getByTestId('decision').innerText(), /decided \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
      // The history tells it with the status change.
      await page.getByText('status running → completed, shipped B: as good, 30% cheaper').waitFor();
      await screenshot(page, `experiment-decision-${width}`);

      await page.goto(`${ui.base}/ui/#/`);
      const row = (slug: string) => page.locator(`[data-testid="experiment-row"][data-slug="${slug}"]`);
      await row(shipped).getByTestId('row-decision').waitFor();
      assert.equal(await row(shipped).getByTestId('row-decision').innerText(), 'shipped B');
      assert.equal(await row(nothing).getByTestId('row-decision').innerText(), 'no change shipped');
      await screenshot(page, `experiments-decision-${width}`);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
}
