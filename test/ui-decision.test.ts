// Completing an experiment from its page with a decision (issue 36, item 5), in headless Chromium against a
// real server: the Complete confirmation asks what ships and why, sends it with the PATCH; the page's head
// says "shipped B: …" with its date, and the experiments list says "shipped B" on the row. No console errors.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { makeTempDir, removeTempDir } from './helpers/app.js';
import { assertNoConsoleErrors, launchBrowser, openDashboard, screenshot } from './helpers/browser.js';
import { jsonCall } from './helpers/call.js';
import { type ServerProcess, startServer } from './helpers/server.js';

const API_KEY = 'ui-decision-root-key-0123456789abcdef';
const dir = makeTempDir();
let server: ServerProcess;
let base: string;
let browser: Browser;
const call = jsonCall(() => base, API_KEY);

const variants = [
  { key: 'A', payload: { prompt: 'helpful' }, trafficPercent: 50 },
  { key: 'B', payload: { prompt: 'concise' }, trafficPercent: 50 },
];

before(async () => {
  server = await startServer({ API_KEY, DATABASE_URL: `sqlite:${join(dir, 'ui.db')}` });
  base = server.baseUrl;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  removeTempDir(dir);
});

test('Complete asks what ships and why; the page and the list show the decision', async () => {
  await call('POST', '/experiments', { slug: 'shipped', name: 'Shipped', status: 'running', variants });
  await call('POST', '/experiments', { slug: 'nothing', name: 'Nothing', status: 'running', variants });
  await call('PATCH', '/experiment/nothing', { status: 'completed', decision: { variant: 'none' } });
  const page = await openDashboard(browser, base, { key: API_KEY, hash: '#/experiment/shipped' });
  try {
    await page.getByTestId('status-completed').click();
    const select = page.getByTestId('decision-variant');
    const options = await select
      .locator('option')
      .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
    assert.deepEqual(options, ['', 'A', 'B', 'none']);
    await select.selectOption('B');
    await page.getByTestId('decision-note-input').fill('as good, 30% cheaper');
    assert.equal((await call('GET', '/experiment/shipped')).status, 'running', 'nothing before confirming');
    await page.getByTestId('confirm-status').click();

    await page.getByTestId('decision').waitFor();
    assert.equal(await page.getByTestId('decision-what').innerText(), 'shipped B');
    assert.equal(await page.getByTestId('decision-note').innerText(), 'as good, 30% cheaper');
    const stored = await call('GET', '/experiment/shipped');
    assert.equal(stored.status, 'completed');
    assert.deepEqual([stored.decision.variant, stored.decision.note], ['B', 'as good, 30% cheaper']);
    assert.match(await page.getByTestId('decision').innerText(), /decided \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    // The history tells it with the status change.
    await page.getByText('status running → completed, shipped B: as good, 30% cheaper').waitFor();
    await screenshot(page, 'experiment-decision-1280');

    await page.goto(`${base}/ui/#/`);
    const row = (slug: string) => page.locator(`[data-testid="experiment-row"][data-slug="${slug}"]`);
    await row('shipped').getByTestId('row-decision').waitFor();
    assert.equal(await row('shipped').getByTestId('row-decision').innerText(), 'shipped B');
    assert.equal(await row('nothing').getByTestId('row-decision').innerText(), 'no change shipped');
    await screenshot(page, 'experiments-decision-1280');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});
