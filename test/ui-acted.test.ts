// What acted, first (issue 36 item 3) in headless Chromium against a real server (monitor every second,
// one webhook retry at once), at 1400 and 390 px: an experiment the guardrail monitor paused opens with a
// banner naming the monitor, when, and the guardrail (metric, interval, threshold); one a key completed
// names the key and its note. The webhooks page shows each endpoint's health (a receiver answering 500,
// a host that does not resolve) with the error in words, edits the description, and disables/enables.
// No overflow, no console errors.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  assertNoConsoleErrors,
  assertNoOverflow,
  openDashboard,
  screenshot,
  waitUntil,
} from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

const API_KEY = 'ui-acted-root-key-0123456789abcdef';
const ui = dashboardRun(API_KEY, {
  env: { MONITOR_INTERVAL_SECONDS: '1', WEBHOOK_RETRY_SCHEDULE: '0' },
  setup: setUp,
});
let receiver: Receiver;
const call = ui.call;

/** The file's data, written once the server answers. */
async function setUp(): Promise<void> {
  receiver = await startReceiver([500]);
}

after(async () => {
  await receiver?.close();
});

/** A running experiment whose cost guardrail (5%) B breaks by 30%: the monitor pauses it within seconds. */
async function harmful(slug: string): Promise<void> {
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
  const seen = { A: 0, B: 0 };
  const results: unknown[] = [];
  for (let u = 0; u < 300; u++) {
    const a = await call('POST', `/experiment/${slug}/assign`, { userId: `user-${u}` });
    const key = a.variant as 'A' | 'B';
    const i = seen[key]++;
    const cost = (1 + (i % 10) / 10) * (key === 'B' ? 1.3 : 1);
    results.push({ variantKey: key, assignmentId: a.assignmentId, metrics: { cost_usd: cost } });
  }
  await call('POST', `/experiment/${slug}/logs`, { results });
}

async function statusOf(slug: string): Promise<string> {
  return (await call('GET', `/experiment/${slug}`)).status;
}

test('a monitor pause and a key completion open with who, when and why', async () => {
  await harmful('acted-paused');
  for (let i = 0; i < 200 && (await statusOf('acted-paused')) !== 'paused'; i++) await sleep(100);
  assert.equal(await statusOf('acted-paused'), 'paused');
  await call('POST', '/experiments', {
    slug: 'acted-done',
    status: 'running',
    variants: [
      { key: 'A', payload: {}, trafficPercent: 50 },
      { key: 'B', payload: {}, trafficPercent: 50 },
    ],
  });
  await call('PATCH', '/experiment/acted-done', {
    status: 'completed',
    decision: { variant: 'B', note: 'as good, cheaper' },
  });
  for (const width of [1400, 390]) {
    const page = await openDashboard(ui.browser, ui.base, {
      key: API_KEY,
      width,
      hash: '#/experiment/acted-paused',
    });
    const banner = page.getByTestId('status-banner');
    await banner.waitFor();
    assert.equal(await banner.getAttribute('data-actor'), 'monitor');
    const text = await banner.innerText();
    assert.match(text, /Paused by the guardrail monitor/);
    assert.match(text, /\d+ (s|min) ago/);
    assert.match(text, /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    const why = await page.getByTestId('status-why').innerText();
    assert.match(why, /cost_usd: B vs A/);
    assert.match(why, /\d+(\.\d)?% [\w -]+ \[[+−-]?\d+(\.\d)?%, [+−-]?\d+(\.\d)?%\]|\(≥|\(≤/);
    assert.match(why, /threshold 5%/);
    // The banner is above the tabs, the history still at the bottom.
    const [bannerY, historyY] = await Promise.all([
      banner.boundingBox().then((b) => b!.y),
      page
        .getByTestId('history')
        .boundingBox()
        .then((b) => b!.y),
    ]);
    assert.ok(bannerY < historyY);
    await assertNoOverflow(page, `paused at ${width}`);
    await screenshot(page, `acted-paused-${width}`);

    await page.goto(`${ui.base}/ui/#/experiment/acted-done`);
    await waitUntil(
      page,
      async () =>
        /Completed by root/.test(
          (await page
            .getByTestId('status-banner')
            .innerText()
            .catch(() => '')) ?? '',
        ),
      'the completed banner',
    );
    assert.equal(await page.getByTestId('status-banner').getAttribute('data-actor'), 'key');
    assert.match(await page.getByTestId('status-why').innerText(), /B.*as good, cheaper/);
    await assertNoOverflow(page, `completed at ${width}`);
    assertNoConsoleErrors(page);
    await page.context().close();
  }
});

test('a running experiment has no banner', async () => {
  await call('POST', '/experiments', {
    slug: 'acted-running',
    status: 'running',
    variants: [
      { key: 'A', payload: {}, trafficPercent: 50 },
      { key: 'B', payload: {}, trafficPercent: 50 },
    ],
  });
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    hash: '#/experiment/acted-running',
  });
  await page.getByTestId('history-event').first().waitFor();
  assert.equal(await page.getByTestId('status-banner').count(), 0);
  assertNoConsoleErrors(page);
  await page.context().close();
});

test('the webhooks page: health with the error, description, and the enable switch', async () => {
  const failing = await call('POST', '/webhooks', {
    url: receiver.url,
    events: ['webhook.test'],
    description: 'ops channel',
  });
  const nowhere = await call('POST', '/webhooks', { url: 'http://no-such-host.invalid/hook' });
  await call('POST', `/webhooks/${failing.id}/test`, {});
  await call('POST', `/webhooks/${nowhere.id}/test`, {});
  const failed = async (id: string) =>
    (await call('GET', `/webhooks/${id}/deliveries`)).deliveries[0]?.status === 'failed';
  for (let i = 0; i < 100 && !((await failed(failing.id)) && (await failed(nowhere.id))); i++)
    await sleep(100);
  for (const width of [1400, 390]) {
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width, hash: '#/webhooks' });
    await page.getByTestId('webhooks-page').waitFor();
    const one = page.locator(`[data-testid="webhook"][data-id="${failing.id}"]`);
    const two = page.locator(`[data-testid="webhook"][data-id="${nowhere.id}"]`);
    await one.getByTestId('webhook-health').waitFor();
    assert.equal(await one.getByTestId('webhook-health').getAttribute('data-status'), 'failing');
    assert.equal(await one.getByTestId('webhook-last-error').innerText(), 'HTTP 500');
    assert.match(await one.getByTestId('webhook-description').innerText(), /^ops channel/);
    assert.match(
      await two.getByTestId('webhook-last-error').innerText(),
      /^getaddrinfo \w+ no-such-host\.invalid$/,
    );
    // Deliveries show their error.
    await two.getByTestId('webhook-deliveries').click();
    assert.match(
      await two.getByTestId('delivery-error').first().innerText(),
      /getaddrinfo \w+ no-such-host\.invalid/,
    );
    await assertNoOverflow(page, `webhooks at ${width}`);
    await screenshot(page, `acted-webhooks-${width}`);

    // Edit the description.
    await one.getByTestId('webhook-describe').click();
    await one.getByTestId('webhook-description-input').fill(`ops channel ${width}`);
    await one.getByTestId('webhook-description-save').click();
    await waitUntil(
      page,
      async () =>
        (await one
          .getByTestId('webhook-description')
          .innerText()
          .catch(() => '')) === `ops channel ${width}`,
      'the new description',
    );
    assert.equal((await call('GET', `/webhooks/${failing.id}`)).description, `ops channel ${width}`);

    // Disable, then enable again.
    const toggle = one.getByTestId('webhook-enabled');
    assert.equal(await toggle.isChecked(), true);
    await toggle.click();
    await one.getByTestId('webhook-disabled').waitFor();
    assert.equal((await call('GET', `/webhooks/${failing.id}`)).enabled, false);
    assert.equal(await one.getByTestId('webhook-test').isDisabled(), true);
    await one.getByTestId('webhook-enabled').click();
    await waitUntil(
      page,
      async () => (await one.getByTestId('webhook-disabled').count()) === 0,
      'enabled again',
    );
    assert.equal((await call('GET', `/webhooks/${failing.id}`)).enabled, true);
    await assertNoOverflow(page, `webhooks after the switch at ${width}`);
    assertNoConsoleErrors(page);
    await page.context().close();
  }
});
