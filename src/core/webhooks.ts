// Webhooks (issue 27 item 3): which events an endpoint hears of, what a delivery posts (Standard Webhooks,
// https://www.standardwebhooks.com, or a Slack message), its signature, and what an answer means. Pure.
import { createHmac } from 'node:crypto';
import { egressRefusal } from './egress.js';
import { ValidationError } from './errors.js';
import type { ChangeEvent } from './events.js';
import { parseTypeFilter } from './events.js';

export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** The event of POST /webhooks/:id/test: delivered to that endpoint only, never fanned out. */
export const TEST_EVENT_TYPE = 'webhook.test';
export const SECRET_PREFIX = 'whsec_';

/** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE's default): after the last, the delivery failed. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** Whether an endpoint subscribed to `events` hears of an event of `type`. */
export function subscribed(events: readonly string[], type: string): boolean {
  if (type === TEST_EVENT_TYPE) return false;
  return events.some((e) => {
    if (e === '*') return true;
    const filter = parseTypeFilter(e);
    if (filter === undefined) return false;
    return 'exact' in filter ? filter.exact === type : type.startsWith(filter.prefix);
  });
}

/** Checks an `events` list: each `*`, a type (experiment.updated) or a prefix (experiment.*). */
export function checkEvents(events: readonly string[]): void {
  for (const e of events) {
    if (e !== '*' && parseTypeFilter(e) === undefined) {
      throw new ValidationError(`events: '${e}' is not an event type, a prefix ending in .*, or *`);
    }
  }
}

/**
 * A webhook URL: http(s) only; with `denyPrivate`, a literal address that is not global unicast is refused
 * here (core/egress.ts). A name is checked where it matters, when connecting (what it resolves to then:
 * webhook-delivery.ts).
 */
export function checkWebhookUrl(text: string, denyPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(`url must be an absolute http or https URL; got '${text}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(`url must use http or https; got '${url.protocol.replace(':', '')}'`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refusal = denyPrivate ? egressRefusal(host) : undefined;
  if (refusal !== undefined) {
    throw new ValidationError(
      `url's host ${refusal}, not a global address, which WEBHOOK_DENY_PRIVATE refuses`,
    );
  }
  return url.toString();
}

/** The Standard Webhooks signature header's value: `v1,<base64 HMAC-SHA256 of id.timestamp.body>`. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The secrets that sign at `now` (ms): the current one, and the one a rotation replaced until its grace ends. */
export function signingSecrets(
  w: { secret: string; previousSecret: string | null; previousSecretUntil: string | null },
  now: number,
): string[] {
  const previousSigns =
    w.previousSecret !== null && w.previousSecretUntil !== null && Date.parse(w.previousSecretUntil) > now;
  return previousSigns ? [w.secret, w.previousSecret!] : [w.secret];
}

/** webhook-signature with one `v1,<sig>` per secret, space-separated (Standard Webhooks accepts any one). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets.map((secret) => sign(secret, id, timestamp, body)).join(' ');
}

/** A sentence for people (Slack): what happened, and who did it. */
export function describeEvent(e: ChangeEvent): string {
  const who =
    e.actor.kind === 'monitor'
      ? 'the guardrail monitor'
      : e.actor.kind === 'schedule'
        ? "the rollout's schedule"
        : `key '${e.actor.name}'`;
  const exp = e.experiment === null ? '' : ` '${e.experiment}'`;
  const d = e.data;
  switch (e.type) {
    case 'experiment.created':
      return `Experiment${exp} was created by ${who}.`;
    case 'experiment.updated':
      return `Experiment${exp} was updated by ${who} (${Object.keys(Object(d.after)).join(', ')}).`;
    case 'experiment.status_changed':
      return `Experiment${exp} went from ${String(d.from)} to ${String(d.to)} (by ${who}).`;
    case 'experiment.deleted':
      return `Experiment${exp} was deleted by ${who}.`;
    case 'key.created':
      return `API key '${String(d.name)}' was created by ${who}.`;
    case 'key.revoked':
      return `API key '${String(d.name)}' was revoked by ${who}.`;
    case 'webhook.secret_rotated':
      return `The signing secret of webhook ${String(d.id)} was rotated by ${who}.`;
    case 'webhook.delivery_retried':
      return `Event ${String(d.eventId)} (${String(d.type)}) is sent again to ${String(d.url)}, as ${who} asked.`;
    case TEST_EVENT_TYPE:
      return `A test event from agentsplit, sent by ${who}.`;
    default:
      if (e.type.startsWith('rollout.')) {
        const what = e.type.slice('rollout.'.length).replace('_', ' ');
        const why = typeof d.reason === 'string' ? `: ${d.reason}` : '';
        return `The rollout of ${String(d.variant)} on${exp} ${what} at ${String(d.percent)}% (by ${who})${why}.`;
      }
      return `${e.type}${exp ? ` on${exp}` : ''} (by ${who}).`;
  }
}

/** The body a delivery posts: Standard Webhooks' `{type, timestamp, data}` (data: the whole event), or Slack's. */
export function deliveryBody(format: WebhookFormat, e: ChangeEvent): string {
  if (format === 'slack') return JSON.stringify({ text: describeEvent(e) });
  return JSON.stringify({ type: e.type, timestamp: e.at, data: e });
}

/** What an attempt's outcome makes of its delivery. */
export type AttemptOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; afterSeconds: number }
  | { kind: 'failed'; disable: boolean };

/**
 * `status`: the answer's HTTP status, or undefined for no answer (timeout, refused connection).
 * `attempts`: attempts made, this one included.
 */
export function outcomeOf(
  status: number | undefined,
  attempts: number,
  schedule: readonly number[],
): AttemptOutcome {
  if (status !== undefined && status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) return { kind: 'failed', disable: true };
  const wait = schedule[attempts - 1];
  return wait === undefined ? { kind: 'failed', disable: false } : { kind: 'retry', afterSeconds: wait };
}
