// The webhooks page's actions of issue 34 in headless Chromium, against a real server and a real receiver
// on 127.0.0.1: "Retry" on a delivery that was given up makes a new attempt (the receiver fails twice,
// then answers 200), and "Rotate secret" asks for a grace period, shows the new secret once, and the API
// then reports the rotation (previousSecretUntil, the history, deliveries signed with both secrets).
// Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { assertNoConsoleErrors, openDashboard, screenshot, waitUntil } from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

const API_KEY = 'ui-webhook-actions-root-key-0123456789';
// One retry, at once: a delivery the receiver refuses twice is given up (failed) within a second or two.
const ui = dashboardRun(API_KEY, { env: { WEBHOOK_RETRY_SCHEDULE: '0' } });
const ROOT = { kind: 'key', id: 'root', name: 'root' };
const receivers: Receiver[] = [];
const call = ui.call;

/** What these tests read of a delivery. */
interface Delivery {
  status: string;
  attempts: number;
  lastResponseStatus: number | null;
}

interface HistoryEvent {
  type: string;
  actor: unknown;
  data: Record<string, unknown>;
}

after(async () => {
  for (const r of receivers) await r.close();
});

async function receiver(statuses: number[]): Promise<Receiver> {
  const r = await startReceiver(statuses);
  receivers.push(r);
  return r;
}

async function addWebhook(url: string): Promise<{ id: string; secret: string }> {
  return call('POST', '/webhooks', { url, events: ['experiment.created'] });
}

async function deliveries(id: string): Promise<Delivery[]> {
  return (await call<{ deliveries: Delivery[] }>('GET', `/webhooks/${id}/deliveries`)).deliveries;
}

async function history(type: string, id: string): Promise<HistoryEvent[]> {
  const { events } = await call<{ events: HistoryEvent[] }>('GET', `/events?type=${type}&limit=100`);
  return events.filter((e) => e.data.id === id);
}

/** The card of the endpoint `id`. */
function card(page: Page, id: string) {
  return page.locator(`[data-testid="webhook"][data-id="${id}"]`);
}

/**
 * An endpoint whose receiver answers `statuses` in turn, and a test event sent to it and given up after
 * its two attempts (WEBHOOK_RETRY_SCHEDULE=0), as the API reports it.
 */
async function givenUp(statuses: number[]) {
  const r = await receiver(statuses);
  const hook = await addWebhook(r.url);
  const { eventId } = await call<{ eventId: string }>('POST', `/webhooks/${hook.id}/test`);
  await r.waitFor(2);
  for (let i = 0; i < 100 && (await deliveries(hook.id))[0]?.status !== 'failed'; i++) await sleep(100);
  assert.equal((await deliveries(hook.id))[0]?.status, 'failed');
  return { r, hook, eventId };
}

test('Retry on a given-up delivery makes a new attempt, which the receiver now answers 200', async () => {
  const { r, hook, eventId } = await givenUp([500, 500, 200]);
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width: 1280, hash: '#/webhooks' });
  try {
    const endpoint = card(page, hook.id);
    await endpoint.getByTestId('webhook-deliveries').click();
    const failed = endpoint.locator('[data-testid="delivery"][data-status="failed"]');
    await failed.waitFor();
    // Only a failed delivery has the button.
    assert.equal(await endpoint.getByTestId('delivery-retry').count(), 1);
    await failed.getByTestId('delivery-retry').click();
    await endpoint.getByTestId('retry-note').waitFor();
    assert.match((await endpoint.getByTestId('retry-note').textContent()) ?? '', /webhook\.test.*due again/);
    // The new attempt: the receiver's third request, the same webhook-id, verified with the secret.
    const got = await r.waitFor(3);
    assert.equal(got.length, 3);
    assert.equal(got[2]!.headers['webhook-id'], eventId);
    new Webhook(hook.secret).verify(got[2]!.body, got[2]!.headers as Record<string, string>);
    // The page reads the pending delivery again by itself until it is delivered.
    const delivered = endpoint.locator('[data-testid="delivery"][data-status="delivered"]');
    await delivered.waitFor({ timeout: 15_000 });
    assert.match((await delivered.textContent()) ?? '', /webhook\.test.*delivered.*1.*200/);
    assert.equal(await endpoint.getByTestId('delivery-retry').count(), 0);
    const [d] = await deliveries(hook.id);
    assert.deepEqual([d!.status, d!.attempts, d!.lastResponseStatus], ['delivered', 1, 200]);
    // The history records who asked.
    const retried = await history('webhook.delivery_retried', hook.id);
    assert.deepEqual(
      retried.map((e) => [e.actor, e.data.eventId]),
      [[ROOT, eventId]],
    );
    await screenshot(page, 'webhook-retry-1280');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

test('a disabled endpoint offers no retry', async () => {
  const { hook } = await givenUp([500]);
  await call('PATCH', `/webhooks/${hook.id}`, { enabled: false });
  const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width: 1280, hash: '#/webhooks' });
  try {
    const endpoint = card(page, hook.id);
    await endpoint.getByTestId('webhook-deliveries').click();
    const button = endpoint.getByTestId('delivery-retry');
    await button.waitFor();
    assert.equal(await button.isDisabled(), true);
    assert.equal(await button.getAttribute('title'), 'Enable the endpoint first');
    assertNoConsoleErrors(page);
  } finally {
    await page.context().close();
  }
});

test('Rotate secret asks for a grace period, shows the new secret once, and the API reports the rotation', async () => {
  for (const width of [1280, 390]) {
    const r = await receiver([200]);
    const hook = await addWebhook(r.url);
    const page = await openDashboard(ui.browser, ui.base, { key: API_KEY, width, hash: '#/webhooks' });
    try {
      const endpoint = card(page, hook.id);
      await endpoint.getByTestId('webhook-rotate').click();
      const grace = endpoint.getByTestId('rotate-grace');
      assert.equal(await grace.inputValue(), '24');
      await grace.fill('2');
      const asked = Date.now();
      await endpoint.getByTestId('rotate-confirm').click();
      const note = endpoint.getByTestId('rotated-secret');
      await note.waitFor();
      const secret = (await note.getByTestId('secret-value').textContent())?.trim() ?? '';
      assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.notEqual(secret, hook.secret);
      assert.match((await note.textContent()) ?? '', /shown only now.*keeps signing beside it until/s);
      assert.equal(await endpoint.getByTestId('rotate-form').count(), 0);
      // The API: the grace period asked for (2 h), the event with its actor, never a secret.
      const read = await call<{ previousSecretUntil: string }>('GET', `/webhooks/${hook.id}`);
      const grace2h = Date.parse(read.previousSecretUntil) - asked;
      assert.ok(grace2h > 1.9 * 3600_000 && grace2h <= 2 * 3600_000 + 60_000, read.previousSecretUntil);
      const rotations = await history('webhook.secret_rotated', hook.id);
      assert.deepEqual(
        rotations.map((e) => [e.actor, e.data.previousSecretUntil]),
        [[ROOT, read.previousSecretUntil]],
      );
      // The card says until when the previous secret signs (the list was read again).
      await endpoint.getByTestId('previous-secret').waitFor();
      // A test event from the page is signed with both secrets.
      await endpoint.getByTestId('webhook-test').click();
      const [got] = await r.waitFor(1);
      for (const s of [secret, hook.secret]) {
        new Webhook(s).verify(got!.body, got!.headers as Record<string, string>);
      }
      await screenshot(page, `webhook-rotated-${width}`);

      // Rotated again with no grace: the previous secret stops signing at once, and the note says so.
      await endpoint.getByTestId('webhook-rotate').click();
      await endpoint.getByTestId('rotate-grace').fill('0');
      await endpoint.getByTestId('rotate-confirm').click();
      await waitUntil(
        page,
        async () => /no longer signs/.test((await note.textContent()) ?? ''),
        'the second rotation to be shown',
      );
      const newest = (await note.getByTestId('secret-value').textContent())?.trim() ?? '';
      assert.notEqual(newest, secret);
      assert.equal((await call('GET', `/webhooks/${hook.id}`)).previousSecretUntil, null);
      assert.equal(await endpoint.getByTestId('previous-secret').count(), 0);
      // A grace period over 7 days is refused by the form itself: nothing is sent, the secret stays.
      await endpoint.getByTestId('webhook-rotate').click();
      await endpoint.getByTestId('rotate-grace').fill('169');
      await endpoint.getByTestId('rotate-confirm').click();
      const tooLong = endpoint.getByTestId('rotate-grace');
      assert.equal(
        await tooLong.evaluate(
          (el) => (el as unknown as { validity: { rangeOverflow: boolean } }).validity.rangeOverflow,
        ),
        true,
      );
      assert.equal(await endpoint.getByTestId('rotate-form').count(), 1);
      assert.equal((await history('webhook.secret_rotated', hook.id)).length, 2);
      // (Taken last: a full-page screenshot between filling and clicking moved the button under the click.)
      await screenshot(page, `webhook-rotate-form-${width}`);
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  }
});
