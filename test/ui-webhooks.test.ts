// The webhooks page (issue 27, admin only) in headless Chromium against a real server and a real
// receiver: add an endpoint (the secret shown once), send it a test event, read its deliveries, delete
// it; a read key sees no such page. Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertNoConsoleErrors, openDashboard, screenshot } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

const API_KEY = 'ui-webhooks-root-key-0123456789abcd';
const ui = dashboardRun(API_KEY, { setup: setUp });
let receiver: Receiver;
const call = ui.call;

/** The file's data, written once the server answers. */
async function setUp(): Promise<void> {
  receiver = await startReceiver([200]);
}

after(async () => {
  await receiver?.close();
});

test('an admin adds an endpoint, tests it, reads its deliveries and deletes it', async () => {
  for (const width of [1280, 390]) {
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width, hash: '#/webhooks' });
    await page.getByTestId('webhooks-page').waitFor();
    await page.getByTestId('webhook-url-input').fill(receiver.url);
    await page.getByTestId('webhook-events-input').fill('experiment.*');
    await page.getByTestId('webhook-add').click();
    const secretNote = page.getByTestId('webhook-secret');
    await secretNote.waitFor();
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec((await secretNote.textContent()) ?? '')?.[0];
    assert.ok(secret, 'the secret is shown once created');
    const listed = await call<{ webhooks: Array<{ id: string; url: string; events: string[] }> }>(
      'GET',
      '/webhooks',
    );
    assert.equal(listed.webhooks.length, 1);
    assert.deepEqual(listed.webhooks[0]!.events, ['experiment.*']);
    const card = page.getByTestId('webhook');
    assert.equal((await card.getByTestId('webhook-url').textContent())?.trim(), receiver.url);

    const before = receiver.received.length;
    await card.getByTestId('webhook-test').click();
    await card.getByTestId('webhook-note').waitFor();
    const got = await receiver.waitFor(before + 1);
    const last = got.at(-1)!;
    const payload = new Webhook(secret).verify(last.body, last.headers as Record<string, string>) as {
      type: string;
    };
    assert.equal(payload.type, 'webhook.test');
    // Deliveries: reload until the test event shows delivered.
    const delivered = card.locator('[data-testid="delivery"][data-status="delivered"]');
    for (let i = 0; i < 50 && (await delivered.count()) === 0; i++) {
      await card.getByTestId('deliveries-reload').click();
      await page.waitForTimeout(100);
    }
    assert.equal(await delivered.count(), 1);
    assert.match((await delivered.textContent()) ?? '', /webhook\.test.*delivered.*1.*200/);
    await screenshot(page, `webhooks-${width}`);

    page.once('dialog', (d) => d.accept());
    await card.getByTestId('webhook-delete').click();
    await page.getByTestId('no-webhooks').waitFor();
    assert.deepEqual((await call<{ webhooks: unknown[] }>('GET', '/webhooks')).webhooks, []);
    assertNoConsoleErrors(page);
    await page.context().close();
  }
});

test('a read key has no webhooks link and the page says admin only', async () => {
  const reader = await call<{ key: string }>('POST', '/keys', { name: 'viewer', scopes: ['read'] });
  const page = await openDashboard(ui.browser, ui.base, { key: reader.key, width: 1280, hash: '#/webhooks' });
  await page.getByTestId('webhooks-admin-only').waitFor();
  assert.equal(await page.getByTestId('nav-webhooks').count(), 0);
  assertNoConsoleErrors(page);
  await page.context().close();
});
