// The dashboard on a phone (issue 36) in headless Chromium at 390 px against a real server: the header is
// one line, the results' Order select shows its whole text, the experiment form is one column, and every
// page route fits its width without a console error. At 1400 px the form's metric rows line up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertNoConsoleErrors, assertNoOverflow, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-narrow-root-key-0123456789abcdef';
const SLUG = 'narrow-checkout';
const ui = dashboardRun(API_KEY);
const call = ui.call;

let seeded = false;
async function seed(): Promise<void> {
  if (seeded) return;
  seeded = true;
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'A checkout prompt with a rather long name for a phone',
    status: 'running',
    variants: [
      { key: 'helpful', payload: { prompt: 'You are a helpful assistant.' }, trafficPercent: 50 },
      { key: 'concise', payload: { prompt: 'You are a concise assistant.' }, trafficPercent: 50 },
    ],
    metrics: [
      { name: 'rating', direction: 'increase', role: 'primary' },
      { name: 'cost_usd', direction: 'decrease', role: 'guardrail', threshold: 0.05 },
      { name: 'latency_ms', direction: 'decrease', role: 'secondary', statistic: 'p95' },
    ],
  });
  for (let i = 0; i < 24; i++) {
    const userId = `user-${i}`;
    const a = await call<{ variant: string }>('POST', `/experiment/${SLUG}/assign`, { userId });
    await call('POST', `/experiment/${SLUG}/log`, {
      variantKey: a.variant,
      userId,
      input: { question: `question number ${i} about an order` },
      output: { answer: `answer ${i}` },
      metrics: { rating: 1 + (i % 5), cost_usd: 0.01 * (1 + (i % 3)), latency_ms: 300 + 17 * i },
    });
  }
  await call('POST', '/webhooks', { url: 'https://hooks.example.com/agentsplit/a-long-path', events: ['*'] });
}

async function open(hash: string, width = 390): Promise<Page> {
  await seed();
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width, hash });
  await page.getByTestId('whoami').waitFor({ state: 'attached' });
  return page;
}

test('the header is one line at 390 px, its links reachable', async () => {
  const page = await open('#/');
  await page.getByTestId('experiments-page').waitFor();
  const [height, line] = (await page.evaluate(`(() => {
    const top = document.querySelector('header.top');
    const brand = top.querySelector('.brand');
    return [top.getBoundingClientRect().height, brand.getBoundingClientRect().height];
  })()`)) as [number, number];
  // One line: the header's height is its padding and one row of controls, under twice the brand's.
  assert.ok(height < 2 * line + 8, `the header is ${height} px tall for a ${line} px line`);
  const nav = page.getByTestId('nav-menu');
  await nav.click();
  await page.getByTestId('nav-keys').click();
  await page.getByTestId('keys-page').waitFor();
  assertNoConsoleErrors(page);
  await page.context().close();
});

test("the results page's Order select shows its whole text at 390 px", async () => {
  const page = await open(`#/experiment/${SLUG}/results`);
  const order = page.getByTestId('results-view');
  await order.waitFor();
  const views = (await order
    .locator('option')
    .evaluateAll((os) => os.map((o) => o.getAttribute('value') ?? ''))) as string[];
  for (const view of views) {
    await order.selectOption(view);
    const [scroll, client] = (await order.evaluate((s) => [s.scrollWidth, s.clientWidth])) as [
      number,
      number,
    ];
    assert.ok(scroll <= client, `Order '${view}': ${scroll} px of text in a ${client} px select`);
  }
  await assertNoOverflow(page, 'results');
  await screenshot(page, 'narrow-results-390');
  assertNoConsoleErrors(page);
  await page.context().close();
});

test('the experiment form is one column at 390 px, its metric rows a grid at 1400 px', async () => {
  const page = await open(`#/experiment/${SLUG}/edit`);
  await page.getByTestId('experiment-form').waitFor();
  const lefts = (await page
    .getByTestId('metric-row-0')
    .locator(':scope > .field')
    .evaluateAll((fs) => fs.map((f) => Math.round(f.getBoundingClientRect().left)))) as number[];
  assert.equal(new Set(lefts).size, 1, `one column: every field starts at the same x (${lefts.join(', ')})`);
  await assertNoOverflow(page, 'edit at 390 px');
  await screenshot(page, 'narrow-edit-390');
  assertNoConsoleErrors(page);
  await page.context().close();

  const wide = await open(`#/experiment/${SLUG}/edit`, 1400);
  await wide.getByTestId('experiment-form').waitFor();
  // The same field of every row starts at the same x: the rows are one grid, not ragged.
  const columns = (await wide.evaluate(`[...document.querySelectorAll('.metric-row')].map((r) =>
    [...r.querySelectorAll(':scope > .field')].slice(0, 6).map((f) => Math.round(f.getBoundingClientRect().left)).join(','))`)) as string[];
  assert.equal(columns.length, 3);
  assert.equal(new Set(columns).size, 1, `metric rows aligned: ${columns.join(' | ')}`);
  await screenshot(wide, 'narrow-edit-1400');
  assertNoConsoleErrors(wide);
  await wide.context().close();
});

test('every page fits 390 px without a console error', async () => {
  const routes: Array<[string, string]> = [
    ['#/', 'experiments-page'],
    [`#/experiment/${SLUG}`, 'experiment-overview'],
    [`#/experiment/${SLUG}/edit`, 'experiment-form'],
    [`#/experiment/${SLUG}/results`, 'results-view'],
    [`#/experiment/${SLUG}/charts`, 'interval'],
    ['#/new', 'create-page'],
    ['#/webhooks', 'webhooks-page'],
    ['#/keys', 'keys-page'],
  ];
  for (const [hash, testid] of routes) {
    const page = await open(hash);
    await page.getByTestId(testid).first().waitFor();
    await page.waitForLoadState('networkidle');
    if (hash === '#/new') {
      // Sticky by default, the usual choice for agents (the API's own default stays random).
      assert.equal(await page.getByTestId('field-assignment').inputValue(), 'sticky');
    }
    await assertNoOverflow(page, hash);
    // No list card is cut with an ellipsis: no element clips its text.
    const clipped = (await page.evaluate(`[...document.querySelectorAll('main *')].filter((e) =>
      getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth).length`)) as number;
    assert.equal(clipped, 0, `${hash}: ${clipped} elements cut with …`);
    await screenshot(page, `narrow${hash.replace(/[#/]+/g, '-')}`);
    assertNoConsoleErrors(page);
    await page.context().close();
  }
});
