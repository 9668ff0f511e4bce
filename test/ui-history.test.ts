// The experiment page's history (issue 27) in headless Chromium against a real server: changes made by
// the root key and by a managed key appear as sentences, newest first, naming who made them and what
// changed, and match GET /experiment/:slug/events. Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { jsonCall } from './helpers/call.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-history-root-key-0123456789abcd';
const SLUG = 'history-prompt';

const ui = dashboardRun(API_KEY);
const call = ui.call;

const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d';

test('the experiment page shows who changed what, newest first, as the API records it', async () => {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'History prompt',
    variants: [
      { key: 'A', payload: { prompt: 'Answer fully.' }, trafficPercent: 50 },
      { key: 'B', payload: { prompt: 'Answer in two sentences.' }, trafficPercent: 50 },
    ],
  });
  const bot = await call<{ key: string }>('POST', '/keys', { name: 'release-bot', scopes: ['admin'] });
  const reader = await call<{ key: string }>('POST', '/keys', { name: 'viewer', scopes: ['read'] });
  const asBot = jsonCall(() => ui.base, bot.key);
  await asBot('PATCH', `/experiment/${SLUG}`, { status: 'running' });
  await asBot('PATCH', `/experiment/${SLUG}`, {
    name: 'Shorter answers',
    variants: [
      { key: 'A', payload: { prompt: 'Answer fully.' }, trafficPercent: 40 },
      { key: 'B', payload: { prompt: 'Answer in two sentences.' }, trafficPercent: 60 },
    ],
  });
  await asBot('PATCH', `/experiment/${SLUG}`, { status: 'paused' });
  const api = await call<{ events: Array<{ type: string }> }>('GET', `/experiment/${SLUG}/events`);
  assert.equal(api.events.length, 4);

  for (const width of [1280, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: reader.key,
      width,
      hash: `#/experiment/${SLUG}`,
    });
    const items = page.getByTestId('history-event');
    await items.first().waitFor();
    const texts = (await items.allTextContents()).map((t) => t.trim());
    const types = await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-type')));
    assert.deepEqual(types, api.events.map((e) => e.type).reverse(), 'newest first, every event the API has');
    const expected = [
      `^Updated by release-bot at ${TIME}: status running → paused$`,
      `^Updated by release-bot at ${TIME}: name 'History prompt' → 'Shorter answers'; variants \\(version 1 → 2\\)$`,
      `^Updated by release-bot at ${TIME}: status draft → running$`,
    ];
    assert.match(texts[0]!, new RegExp(expected[0]!));
    assert.match(texts[1]!, new RegExp(expected[1]!));
    assert.match(texts[2]!, new RegExp(expected[2]!));
    assert.match(texts[3]!, new RegExp(`^Created by root at ${TIME}$`));
    await page.getByTestId('history').scrollIntoViewIfNeeded();
    await screenshot(page, `history-${width}`);
    assertNoConsoleErrors(page);
    await page.context().close();
  }
});
