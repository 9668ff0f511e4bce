import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ROOT_ACTOR } from './events.js';
import {
  checkWebhookUrl,
  deliveryBody,
  describeEvent,
  outcomeOf,
  sign,
  signatureHeader,
  signingSecrets,
  subscribed,
} from './webhooks.js';

const EVENT = {
  id: '019ac1f2-5b3e-7c41-9a2d-3f8e0b6c4d21',
  type: 'experiment.status_changed',
  at: '2026-03-01T12:00:00.000Z',
  actor: ROOT_ACTOR,
  experiment: 'checkout',
  data: { from: 'running', to: 'paused' },
};

test('the signature is what standardwebhooks verifies; a changed body or another secret fails', () => {
  const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const body = deliveryBody('standard', EVENT);
  const ts = Math.floor(Date.now() / 1000);
  const headers = {
    'webhook-id': EVENT.id,
    'webhook-timestamp': String(ts),
    'webhook-signature': sign(secret, EVENT.id, ts, body),
  };
  assert.deepEqual(new Webhook(secret).verify(body, headers), {
    type: EVENT.type,
    timestamp: EVENT.at,
    data: EVENT,
  });
  assert.throws(() => new Webhook(secret).verify(body.replace('paused', 'running'), headers));
  assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 8).toString('base64')}`).verify(body, headers));
});

test('subscriptions: *, exact types, prefixes; webhook.test is never fanned out', () => {
  assert.ok(subscribed(['*'], 'key.created'));
  assert.ok(subscribed(['experiment.*'], 'experiment.updated'));
  assert.ok(!subscribed(['experiment.*'], 'key.created'));
  assert.ok(subscribed(['key.revoked'], 'key.revoked'));
  assert.ok(!subscribed(['key.revoked'], 'key.created'));
  assert.ok(!subscribed(['*'], 'webhook.test'));
});

test('with denyPrivate a literal non-global host is refused, naming why (core/egress.test.ts: every form)', () => {
  assert.throws(() => checkWebhookUrl('http://[::1]:8080/x', true), /::1 is loopback.*WEBHOOK_DENY_PRIVATE/);
  assert.throws(() => checkWebhookUrl('http://[::127.0.0.1]/x', true), /127\.0\.0\.1 \(loopback\)/);
  assert.equal(checkWebhookUrl('http://[::1]:8080/x', false), 'http://[::1]:8080/x');
  assert.equal(checkWebhookUrl('https://8.8.8.8/x', true), 'https://8.8.8.8/x');
  assert.equal(checkWebhookUrl('https://hooks.example.com/x', true), 'https://hooks.example.com/x');
  assert.throws(() => checkWebhookUrl('file:///etc/passwd', false), /http or https/);
});

test('outcomes: 2xx delivered, 410 failed and disabled, else retried on the schedule then failed', () => {
  assert.deepEqual(outcomeOf(204, 1, [5]), { kind: 'delivered' });
  assert.deepEqual(outcomeOf(410, 1, [5]), { kind: 'failed', disable: true });
  assert.deepEqual(outcomeOf(500, 1, [5, 300]), { kind: 'retry', afterSeconds: 5 });
  assert.deepEqual(outcomeOf(undefined, 2, [5, 300]), { kind: 'retry', afterSeconds: 300 });
  assert.deepEqual(outcomeOf(301, 3, [5, 300]), { kind: 'failed', disable: false });
});

test('the Slack sentence names the change and who made it', () => {
  assert.equal(describeEvent(EVENT), "Experiment 'checkout' went from running to paused (by key 'root').");
  assert.deepEqual(JSON.parse(deliveryBody('slack', EVENT)), { text: describeEvent(EVENT) });
  const retried = {
    ...EVENT,
    type: 'webhook.delivery_retried',
    experiment: null,
    data: { id: 'w1', url: 'https://hooks.example.com/a', eventId: 'e1', type: 'experiment.created' },
  };
  assert.equal(
    describeEvent(retried),
    "Event e1 (experiment.created) is sent again to https://hooks.example.com/a, as key 'root' asked.",
  );
  const rotated = {
    ...retried,
    type: 'webhook.secret_rotated',
    data: { id: 'w1', previousSecretUntil: null },
  };
  assert.equal(describeEvent(rotated), "The signing secret of webhook w1 was rotated by key 'root'.");
});

test('a rotated-out secret signs beside the new one until its grace period ends', () => {
  const old = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
  const current = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
  const w = { secret: current, previousSecret: old, previousSecretUntil: '2026-03-02T12:00:00.000Z' };
  const before = Date.parse('2026-03-02T11:59:59.000Z');
  assert.deepEqual(signingSecrets(w, before), [current, old]);
  assert.deepEqual(signingSecrets(w, Date.parse(w.previousSecretUntil)), [current]);
  assert.deepEqual(signingSecrets({ secret: current, previousSecret: null, previousSecretUntil: null }, 0), [
    current,
  ]);
  const body = deliveryBody('standard', EVENT);
  const ts = Math.floor(Date.now() / 1000);
  const during = {
    'webhook-id': EVENT.id,
    'webhook-timestamp': String(ts),
    'webhook-signature': signatureHeader(signingSecrets(w, before), EVENT.id, ts, body),
  };
  for (const s of [old, current]) new Webhook(s).verify(body, during);
  const afterGrace = {
    ...during,
    'webhook-signature': signatureHeader(
      signingSecrets(w, Date.parse('2026-03-03T00:00:00Z')),
      EVENT.id,
      ts,
      body,
    ),
  };
  new Webhook(current).verify(body, afterGrace);
  assert.throws(() => new Webhook(old).verify(body, afterGrace));
});
