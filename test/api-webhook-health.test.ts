// Webhook health (issue 36 item 3) through the real server: a description and `enabled` at create and by
// PATCH (a disabled endpoint is queued no deliveries), each delivery's error in words (HTTP status,
// refused, timeout, a host that does not resolve), and the endpoint's last attempt (when, ok/failing, why).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  makeTempDir,
  removeTempDir,
  SKIP_BACKEND,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './helpers/app.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';

interface Delivery {
  eventId: string;
  status: string;
  attempts: number;
  lastResponseStatus: number | null;
  lastError: string | null;
}

interface Hook {
  id: string;
  description: string | null;
  enabled: boolean;
  lastDeliveryAt: string | null;
  lastStatus: 'ok' | 'failing' | null;
  lastError: string | null;
}

const dir = makeTempDir();
let rt: TestRuntime;
const receivers: Receiver[] = [];

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'webhook-health', {
    webhooks: { retrySchedule: [0.2], pollMs: 100, timeoutMs: 1000 },
  });
});

after(async () => {
  await rt?.close();
  for (const r of receivers) await r.close();
  removeTempDir(dir);
});

async function receiver(statuses?: number[]): Promise<Receiver> {
  const r = await startReceiver(statuses);
  receivers.push(r);
  return r;
}

async function create(body: Record<string, unknown>): Promise<Hook> {
  const res = await rt.api.post('/webhooks', { events: ['experiment.created'], ...body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function hook(id: string): Promise<Hook> {
  const res = await rt.api.get(`/webhooks/${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function deliveries(id: string): Promise<Delivery[]> {
  return (await rt.api.get(`/webhooks/${id}/deliveries`)).json().deliveries;
}

/** Polls until the newest delivery is settled (delivered or failed). */
async function settled(id: string): Promise<Delivery> {
  for (let i = 0; i < 150; i++) {
    const [d] = await deliveries(id);
    if (d !== undefined && d.status !== 'pending') return d;
    await sleep(100);
  }
  throw new Error(`no settled delivery: ${JSON.stringify(await deliveries(id))}`);
}

describe('webhook health', { skip: SKIP_BACKEND }, () => {
  test('a new endpoint has a description, is enabled, and has no health yet', async () => {
    const r = await receiver();
    const h = await create({ url: r.url, description: 'release channel' });
    assert.equal(h.description, 'release channel');
    assert.equal(h.enabled, true);
    assert.deepEqual([h.lastDeliveryAt, h.lastStatus, h.lastError], [null, null, null]);
    await rt.api.delete(`/webhooks/${h.id}`);
  });

  test('created disabled: no deliveries; enabled by PATCH: delivered, health ok', async () => {
    const r = await receiver([204]);
    const h = await create({ url: r.url, enabled: false });
    assert.equal(h.enabled, false);
    await rt.api.createExperiment({ slug: uniqueSlug('quiet') });
    await sleep(500);
    assert.equal((await deliveries(h.id)).length, 0);
    assert.equal(r.received.length, 0);
    const patched = await rt.api.patch(`/webhooks/${h.id}`, { enabled: true, description: 'now on' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().enabled, true);
    assert.equal(patched.json().description, 'now on');
    await rt.api.createExperiment({ slug: uniqueSlug('heard') });
    const d = await settled(h.id);
    assert.equal(d.status, 'delivered');
    assert.equal(d.lastError, null);
    const after = await hook(h.id);
    assert.equal(after.lastStatus, 'ok');
    assert.equal(after.lastError, null);
    assert.ok(
      after.lastDeliveryAt !== null && Date.parse(after.lastDeliveryAt) > Date.parse(h.lastDeliveryAt ?? '0'),
    );
    const off = await rt.api.patch(`/webhooks/${h.id}`, { enabled: false });
    assert.equal(off.json().enabled, false);
    await rt.api.createExperiment({ slug: uniqueSlug('off') });
    await sleep(500);
    assert.equal((await deliveries(h.id)).length, 1);
    await rt.api.delete(`/webhooks/${h.id}`);
  });

  test('an answer of 500: the delivery and the endpoint say HTTP 500, failing', async () => {
    const r = await receiver([500]);
    const h = await create({ url: r.url });
    await rt.api.createExperiment({ slug: uniqueSlug('five-hundred') });
    const d = await settled(h.id);
    assert.equal(d.status, 'failed');
    assert.equal(d.lastResponseStatus, 500);
    assert.equal(d.lastError, 'HTTP 500');
    const after = await hook(h.id);
    assert.equal(after.lastStatus, 'failing');
    assert.equal(after.lastError, 'HTTP 500');
    assert.ok(after.lastDeliveryAt !== null);
    await rt.api.delete(`/webhooks/${h.id}`);
  });

  test('a host that does not resolve: the error names it (getaddrinfo)', async () => {
    const h = await create({ url: 'http://no-such-host.invalid/hook' });
    await rt.api.createExperiment({ slug: uniqueSlug('nxdomain') });
    const d = await settled(h.id);
    assert.equal(d.status, 'failed');
    assert.equal(d.lastResponseStatus, null);
    assert.match(d.lastError ?? '', /^getaddrinfo \w+ no-such-host\.invalid$/);
    const after = await hook(h.id);
    assert.equal(after.lastStatus, 'failing');
    assert.equal(after.lastError, d.lastError);
    await rt.api.delete(`/webhooks/${h.id}`);
  });

  test('a refused connection and a receiver that never answers say so', async () => {
    const closed = await receiver();
    const url = closed.url;
    await closed.close();
    const refused = await create({ url });
    const hanging = await receiver([0]);
    const silent = await create({ url: hanging.url });
    await rt.api.createExperiment({ slug: uniqueSlug('refused-or-silent') });
    assert.match((await settled(refused.id)).lastError ?? '', /^connection refused \(connect ECONNREFUSED /);
    assert.equal((await settled(silent.id)).lastError, 'no answer within 1 s');
    assert.equal((await hook(silent.id)).lastError, 'no answer within 1 s');
    await rt.api.delete(`/webhooks/${refused.id}`);
    await rt.api.delete(`/webhooks/${silent.id}`);
  });
});
