// Webhooks (issue 27 item 3) through the real server, with a real receiver on 127.0.0.1: endpoints are
// admin-only, their changes are in the history, deliveries are signed as Standard Webhooks (verified by
// the standardwebhooks package), retried with the same webhook-id until a 2xx and never again after it,
// failed after the schedule, and a 410 disables the endpoint.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import {
  API_KEY,
  assertError,
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
  type: string;
  status: string;
  attempts: number;
  lastResponseStatus: number | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

const dir = makeTempDir();
let rt: TestRuntime;
const receivers: Receiver[] = [];

before(async () => {
  if (SKIP_BACKEND) return;
  rt = await startTestRuntime(dir, 'webhooks', {
    webhooks: { retrySchedule: [0.2, 0.2, 0.2], pollMs: 100, timeoutMs: 1000 },
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

async function createWebhook(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await rt.api.post('/webhooks', body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function deliveries(id: string): Promise<Delivery[]> {
  const res = await rt.api.get(`/webhooks/${id}/deliveries`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().deliveries;
}

/** Polls the deliveries until `done` holds of them. */
async function deliveriesWhen(id: string, done: (d: Delivery[]) => boolean): Promise<Delivery[]> {
  for (let i = 0; i < 200; i++) {
    const d = await deliveries(id);
    if (done(d)) return d;
    await sleep(100);
  }
  throw new Error(
    `deliveries of ${id} never reached the expected state: ${JSON.stringify(await deliveries(id))}`,
  );
}

describe('webhooks', { skip: SKIP_BACKEND }, () => {
  test('admin only: a read key gets 403, no key 401', async () => {
    const res = await rt.api.post('/keys', { name: 'viewer', scopes: ['read'] });
    const read = res.json().key as string;
    assertError(await rt.api.get('/webhooks', read), 403);
    assertError(await rt.api.post('/webhooks', { url: 'https://example.com/h' }, read), 403);
    assertError(await rt.api.get('/webhooks', null), 401);
  });

  test('create shows the secret once; list and read never; bad input is 400, unknown ids 404', async () => {
    const created = await createWebhook({ url: 'https://example.com/a', description: 'release channel' });
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.ok(Buffer.from(created.secret.slice(6), 'base64').length >= 24);
    const one = await rt.api.get(`/webhooks/${created.id}`);
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().secret, undefined);
    assert.deepEqual(one.json().events, ['*']);
    assert.equal(one.json().format, 'standard');
    const list = await rt.api.get('/webhooks');
    assert.ok(list.json().webhooks.some((w: { id: string }) => w.id === created.id));
    assert.ok(!list.body.includes(created.secret));
    assertError(await rt.api.post('/webhooks', { url: 'ftp://example.com/x' }), 400, /http or https/);
    assertError(await rt.api.post('/webhooks', { url: 'not a url' }), 400, /absolute/);
    assertError(await rt.api.post('/webhooks', { url: 'https://x.test', events: ['no spaces'] }), 400);
    assertError(await rt.api.post('/webhooks', { url: 'https://x.test', format: 'teams' }), 400);
    assertError(await rt.api.get('/webhooks/nope'), 404, /no webhook/);
    assertError(await rt.api.patch('/webhooks/nope', { enabled: false }), 404);
    assertError(await rt.api.delete('/webhooks/nope'), 404);
    const patched = await rt.api.patch(`/webhooks/${created.id}`, { url: 'https://example.com/b' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().url, 'https://example.com/b');
    assert.equal((await rt.api.delete(`/webhooks/${created.id}`)).statusCode, 204);
    assertError(await rt.api.get(`/webhooks/${created.id}`), 404);
    // The history: created, updated (before/after), deleted, each with its actor; never the secret.
    const history = await rt.api.get('/events?type=webhook.*&limit=100');
    const mine = history
      .json()
      .events.filter((e: { data: { id?: string } }) => e.data.id === created.id) as Array<{
      type: string;
      actor: unknown;
      data: Record<string, unknown>;
    }>;
    assert.deepEqual(
      mine.map((e) => e.type),
      ['webhook.created', 'webhook.updated', 'webhook.deleted'],
    );
    for (const e of mine) assert.deepEqual(e.actor, { kind: 'key', id: 'root', name: 'root' });
    assert.deepEqual(mine[1]!.data.after, { url: 'https://example.com/b' });
    assert.ok(!history.body.includes(created.secret));
  });

  test('a delivery is signed (standardwebhooks verifies it, and refuses a changed body)', async () => {
    const r = await receiver([204]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    const slug = uniqueSlug('signed');
    await rt.api.createExperiment({ slug });
    const [got] = await r.waitFor(1);
    const wh = new Webhook(hook.secret);
    const payload = wh.verify(got!.body, got!.headers as Record<string, string>) as {
      type: string;
      timestamp: string;
      data: { id: string; experiment: string; actor: unknown };
    };
    assert.equal(payload.type, 'experiment.created');
    assert.equal(payload.data.experiment, slug);
    assert.equal(payload.data.id, got!.headers['webhook-id']);
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.throws(() =>
      wh.verify(got!.body.replace(slug, `${slug}-x`), got!.headers as Record<string, string>),
    );
    assert.throws(() =>
      new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(
        got!.body,
        got!.headers as Record<string, string>,
      ),
    );
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'delivered');
    assert.equal(d!.eventId, payload.data.id);
    assert.equal(d!.attempts, 1);
    assert.equal(d!.lastResponseStatus, 204);
    assert.equal(d!.nextAttemptAt, null);
    assert.ok(d!.deliveredAt !== null);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('500 twice: the third attempt carries the same webhook-id, and nothing comes after the 2xx', async () => {
    const r = await receiver([500, 500, 200]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('retried') });
    const got = await r.waitFor(3);
    const ids = new Set(got.map((g) => g.headers['webhook-id']));
    assert.equal(ids.size, 1);
    const wh = new Webhook(hook.secret);
    for (const g of got) wh.verify(g.body, g.headers as Record<string, string>);
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'delivered');
    assert.equal(d!.attempts, 3);
    assert.equal(d!.lastResponseStatus, 200);
    // Longer than the schedule's remaining attempts would take: none comes.
    await sleep(1500);
    assert.equal(r.received.length, 3);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('an endpoint that never answers 2xx is tried once and on each step of the schedule, then failed', async () => {
    const r = await receiver([503]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('failing') });
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'failed');
    assert.equal(d!.attempts, 4);
    assert.equal(d!.lastResponseStatus, 503);
    assert.equal(r.received.length, 4);
    await sleep(800);
    assert.equal(r.received.length, 4);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('a refused connection is retried too', async () => {
    const r = await receiver([200]);
    const url = r.url;
    await r.close();
    const hook = await createWebhook({ url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('refused') });
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'failed');
    assert.equal(d!.attempts, 4);
    assert.equal(d!.lastResponseStatus, null);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('an endpoint that never answers times out (WEBHOOK_TIMEOUT_SECONDS) and is retried, then failed', async () => {
    const r = await receiver([0]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('hanging') });
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'failed');
    assert.equal(d!.attempts, 4);
    assert.equal(d!.lastResponseStatus, null);
    assert.equal(r.received.length, 4);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('410 Gone disables the endpoint: no further deliveries', async () => {
    const r = await receiver([410]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('gone') });
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'failed');
    assert.equal(d!.attempts, 1);
    assert.equal(d!.lastResponseStatus, 410);
    assert.equal((await rt.api.get(`/webhooks/${hook.id}`)).json().enabled, false);
    await rt.api.createExperiment({ slug: uniqueSlug('gone-again') });
    await sleep(800);
    assert.equal(r.received.length, 1);
    assert.equal((await deliveries(hook.id)).length, 1);
    assertError(await rt.api.post(`/webhooks/${hook.id}/test`, {}), 409, /disabled/);
    const enabled = await rt.api.patch(`/webhooks/${hook.id}`, { enabled: true });
    assert.equal(enabled.json().enabled, true);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('POST /webhooks/:id/test sends webhook.test to that endpoint only', async () => {
    const target = await receiver([200]);
    const other = await receiver([200]);
    const hook = await createWebhook({ url: target.url, events: ['key.created'] });
    const everything = await createWebhook({ url: other.url, events: ['*'] });
    const res = await rt.api.post(`/webhooks/${hook.id}/test`, {});
    assert.equal(res.statusCode, 202, res.body);
    const { eventId } = res.json();
    const [got] = await target.waitFor(1);
    assert.equal(got!.headers['webhook-id'], eventId);
    const payload = new Webhook(hook.secret).verify(got!.body, got!.headers as Record<string, string>) as {
      type: string;
    };
    assert.equal(payload.type, 'webhook.test');
    await deliveriesWhen(hook.id, (ds) => ds.some((d) => d.eventId === eventId && d.status === 'delivered'));
    await sleep(500);
    assert.ok(!other.received.some((g) => g.headers['webhook-id'] === eventId));
    assertError(await rt.api.post('/webhooks/nope/test', {}), 404);
    await rt.api.delete(`/webhooks/${hook.id}`);
    await rt.api.delete(`/webhooks/${everything.id}`);
  });

  test('format slack posts {"text": a sentence}', async () => {
    const r = await receiver([200]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.status_changed'], format: 'slack' });
    const slug = uniqueSlug('slack');
    await rt.api.createExperiment({ slug, status: 'draft' });
    await rt.api.setStatus(slug, 'running');
    const [got] = await r.waitFor(1);
    await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'delivered');
    assert.deepEqual(JSON.parse(got!.body), {
      text: `Experiment '${slug}' went from draft to running (by key 'root').`,
    });
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('rotating the secret: both old and new verify during the grace period, then only the new', async () => {
    const r = await receiver([200]);
    const hook = await createWebhook({ url: r.url, events: ['key.revoked'] });
    const rotated = await rt.api.post(`/webhooks/${hook.id}/secret/rotate`, {});
    assert.equal(rotated.statusCode, 200, rotated.body);
    const { secret, previousSecretUntil } = rotated.json() as { secret: string; previousSecretUntil: string };
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.notEqual(secret, hook.secret);
    // The default grace period: 24 h from now.
    const grace = Date.parse(previousSecretUntil) - Date.now();
    assert.ok(grace > 23.9 * 3600_000 && grace <= 24 * 3600_000, previousSecretUntil);
    const read = await rt.api.get(`/webhooks/${hook.id}`);
    assert.equal(read.json().previousSecretUntil, previousSecretUntil);
    assert.ok(!read.body.includes(secret) && !read.body.includes(hook.secret));

    const { eventId } = (await rt.api.post(`/webhooks/${hook.id}/test`, {})).json();
    const [got] = await r.waitFor(1);
    assert.equal(got!.headers['webhook-id'], eventId);
    assert.equal(String(got!.headers['webhook-signature']).split(' ').length, 2);
    const headers = got!.headers as Record<string, string>;
    for (const s of [hook.secret, secret]) {
      assert.equal((new Webhook(s).verify(got!.body, headers) as { type: string }).type, 'webhook.test');
    }

    // Rotated again with no grace: only the newest secret signs; both older ones fail.
    const again = await rt.api.post(`/webhooks/${hook.id}/secret/rotate?graceSeconds=0`, {});
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().previousSecretUntil, null);
    const newest = again.json().secret as string;
    await rt.api.post(`/webhooks/${hook.id}/test`, {});
    const [, second] = await r.waitFor(2);
    const headers2 = second!.headers as Record<string, string>;
    assert.equal(headers2['webhook-signature']!.split(' ').length, 1);
    new Webhook(newest).verify(second!.body, headers2);
    for (const s of [hook.secret, secret]) assert.throws(() => new Webhook(s).verify(second!.body, headers2));

    assertError(await rt.api.post('/webhooks/nope/secret/rotate', {}), 404, /no webhook/);
    assertError(await rt.api.post(`/webhooks/${hook.id}/secret/rotate?graceSeconds=-1`, {}), 400);
    assertError(await rt.api.post(`/webhooks/${hook.id}/secret/rotate?graceSeconds=604801`, {}), 400);
    // The history: who rotated, until when the old secret signs; never a secret.
    const history = await rt.api.get('/events?type=webhook.secret_rotated&limit=100');
    const mine = history.json().events.filter((e: { data: { id: string } }) => e.data.id === hook.id);
    assert.deepEqual(
      mine.map((e: { data: unknown }) => e.data),
      [
        { id: hook.id, previousSecretUntil },
        { id: hook.id, previousSecretUntil: null },
      ],
    );
    for (const s of [hook.secret, secret, newest]) assert.ok(!history.body.includes(s));
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('POST /webhooks/:id/deliveries/:eventId/retry sends a failed (or delivered) event again', async () => {
    // Fails its 4 attempts (503), then answers 200 to whatever comes after.
    const r = await receiver([503, 503, 503, 503, 200]);
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('replayed') });
    const [failed] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'failed');
    assert.equal(failed!.attempts, 4);
    const retried = await rt.api.post(`/webhooks/${hook.id}/deliveries/${failed!.eventId}/retry`, {});
    assert.equal(retried.statusCode, 202, retried.body);
    assert.equal(retried.json().eventId, failed!.eventId);
    assert.equal(retried.json().status, 'pending');
    assert.equal(retried.json().attempts, 0);
    const [d] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'delivered');
    assert.equal(d!.attempts, 1);
    assert.equal(d!.lastResponseStatus, 200);
    assert.equal(r.received.length, 5);
    // Any delivery: a delivered one is sent once more, with the same webhook-id.
    const again = await rt.api.post(`/webhooks/${hook.id}/deliveries/${d!.eventId}/retry`, {});
    assert.equal(again.statusCode, 202, again.body);
    await r.waitFor(6);
    assert.equal(new Set(r.received.map((g) => g.headers['webhook-id'])).size, 1);
    await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'delivered');
    assertError(await rt.api.post(`/webhooks/${hook.id}/deliveries/nope/retry`, {}), 404, /no delivery/);
    assertError(await rt.api.post(`/webhooks/nope/deliveries/${d!.eventId}/retry`, {}), 404, /no webhook/);
    await rt.api.patch(`/webhooks/${hook.id}`, { enabled: false });
    assertError(
      await rt.api.post(`/webhooks/${hook.id}/deliveries/${d!.eventId}/retry`, {}),
      409,
      /disabled/,
    );
    // The history: each retry made, with its actor; none for the refused ones (404, 409).
    const history = await rt.api.get('/events?type=webhook.delivery_retried&limit=100');
    assert.equal(history.statusCode, 200, history.body);
    const mine = history.json().events.filter((e: { data: { id: string } }) => e.data.id === hook.id);
    assert.deepEqual(
      mine.map((e: { actor: unknown; data: unknown }) => [e.actor, e.data]),
      [1, 2].map(() => [
        { kind: 'key', id: 'root', name: 'root' },
        { id: hook.id, url: r.url, eventId: d!.eventId, type: 'experiment.created' },
      ]),
    );
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('a retry and a rotation are recorded with the key that asked (a managed admin key)', async () => {
    const r = await receiver([503, 503, 503, 503, 200]);
    const created = await rt.api.post('/keys', { name: 'hook-operator', scopes: ['admin'] });
    assert.equal(created.statusCode, 201, created.body);
    const { key, id: keyId } = created.json() as { key: string; id: string };
    const hook = await createWebhook({ url: r.url, events: ['experiment.created'] });
    await rt.api.createExperiment({ slug: uniqueSlug('operator') });
    // Failed: no attempt under way that a retry would meet (409).
    const [first] = await deliveriesWhen(hook.id, (ds) => ds[0]?.status === 'failed');
    const retried = await rt.api.post(`/webhooks/${hook.id}/deliveries/${first!.eventId}/retry`, {}, key);
    assert.equal(retried.statusCode, 202, retried.body);
    const rotated = await rt.api.post(`/webhooks/${hook.id}/secret/rotate?graceSeconds=60`, {}, key);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const history = await rt.api.get('/events?type=webhook.*&limit=100');
    const mine = history
      .json()
      .events.filter((e: { data: { id?: string } }) => e.data.id === hook.id) as Array<{
      type: string;
      actor: unknown;
      data: Record<string, unknown>;
    }>;
    const operator = { kind: 'key', id: keyId, name: 'hook-operator' };
    assert.deepEqual(
      mine.map((e) => [e.type, e.actor]),
      [
        ['webhook.created', { kind: 'key', id: 'root', name: 'root' }],
        ['webhook.delivery_retried', operator],
        ['webhook.secret_rotated', operator],
      ],
    );
    assert.equal(mine[1]!.data.eventId, first!.eventId);
    assert.equal(mine[2]!.data.previousSecretUntil, rotated.json().previousSecretUntil);
    assert.ok(!history.body.includes(rotated.json().secret));
    // The event types GET /events documents include both.
    const docs = await rt.api.get('/openapi.json', null);
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /webhook\.delivery_retried/);
    assert.match(docs.body, /webhook\.secret_rotated/);
    await rt.api.delete(`/webhooks/${hook.id}`);
  });

  test('/metrics counts delivery attempts by outcome', async () => {
    const res = await rt.api.get('/metrics');
    assert.equal(res.statusCode, 200);
    const count = (outcome: string) =>
      Number(
        new RegExp(`agentsplit_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)`).exec(
          res.body,
        )?.[1],
      );
    assert.ok(count('delivered') >= 4, res.body);
    assert.ok(count('retried') >= 2);
    assert.ok(count('failed') >= 3);
  });
});

describe('WEBHOOK_DENY_PRIVATE', { skip: SKIP_BACKEND }, () => {
  test('refuses every non-global URL host at create and change, and names that resolve to one at delivery', async () => {
    const guarded = await startTestRuntime(dir, 'webhooks-private', {
      webhooks: { denyPrivate: true, retrySchedule: [], pollMs: 100 },
    });
    try {
      // The campaign's forms (issue 34): each 400 naming the range, and the embedded IPv4 where there is one.
      for (const [url, why] of [
        ['http://127.0.0.1:9/x', /127\.0\.0\.1 is loopback/],
        ['http://10.1.2.3/x', /private/],
        ['http://[::1]/x', /loopback/],
        ['http://169.254.169.254/x', /linkLocal/],
        ['http://[64:ff9b::a9fe:a9fe]/x', /NAT64 \(rfc6052\) of 169\.254\.169\.254 \(linkLocal\)/],
        ['http://[::127.0.0.1]/x', /IPv4-compatible of 127\.0\.0\.1 \(loopback\)/],
        ['http://[::ffff:169.254.169.254]/x', /IPv4-mapped of 169\.254\.169\.254/],
        ['http://[2002:a9fe:a9fe::]/x', /6to4 of 169\.254\.169\.254/],
        ['http://[2001::1]/x', /Teredo/],
        ['http://[fec0::1]/x', /deprecatedSiteLocal/],
        ['http://192.0.0.1/x', /reserved/],
        ['http://192.0.2.1/x', /reserved/],
        ['http://198.18.0.1/x', /reserved/],
        ['http://224.0.0.1/x', /multicast/],
        ['http://240.0.0.1/x', /reserved/],
        ['http://0x7f.1/x', /loopback/],
      ] as const) {
        assertError(await guarded.api.post('/webhooks', { url }, API_KEY), 400, why);
      }
      const patched = await guarded.api.post(
        '/webhooks',
        // Never delivered to (deleted before any event it hears of): tests connect to loopback only.
        { url: 'https://hooks.example.com/x', events: ['key.revoked'] },
        API_KEY,
      );
      assert.equal(patched.statusCode, 201, patched.body);
      const patchId = patched.json().id as string;
      assertError(
        await guarded.api.patch(`/webhooks/${patchId}`, { url: 'http://[::1]/x' }),
        400,
        /loopback/,
      );
      await guarded.api.delete(`/webhooks/${patchId}`);
      // A name is checked for what it resolves to when connecting: localhost is loopback, refused then.
      const r = await receiver([200]);
      const port = new URL(r.url).port;
      const res = await guarded.api.post('/webhooks', {
        url: `http://localhost:${port}/x`,
        events: ['experiment.created'],
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      await guarded.api.createExperiment({ slug: uniqueSlug('private') });
      for (let i = 0; i < 100; i++) {
        const d = (await guarded.api.get(`/webhooks/${id}/deliveries`)).json().deliveries;
        if (d[0]?.status === 'failed') break;
        await sleep(100);
      }
      const [d] = (await guarded.api.get(`/webhooks/${id}/deliveries`)).json().deliveries;
      assert.equal(d.status, 'failed');
      assert.equal(r.received.length, 0);
    } finally {
      await guarded.close();
    }
  });
});
