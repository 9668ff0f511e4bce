// The webhook worker (issue 27 item 3): claims due deliveries from the database (each attempt is made by
// the one instance that claimed it), posts them signed as Standard Webhooks (or as a Slack message),
// and writes back the outcome: 2xx delivered, else retried on the schedule, then failed; 410 disables.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { egressRefusal } from '../core/egress.js';
import { isoNow } from '../core/ids.js';
import { deliveryBody, outcomeOf, signatureHeader, signingSecrets } from '../core/webhooks.js';
import type { DueDelivery, WebhookStore } from '../store/sql-webhooks.js';

/** Deliveries claimed per round. */
const CLAIM_BATCH = 50;

export interface WebhookDeliveryOptions {
  store: Pick<WebhookStore, 'claimDue' | 'recordAttempt'>;
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[];
  /** An attempt without an answer within this many ms is a failed attempt (WEBHOOK_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** WEBHOOK_DENY_PRIVATE: refuse to connect to any address that is not global unicast (core/egress.ts). */
  denyPrivate: boolean;
  /** How often due deliveries are looked for (ms); a committed event also starts a round at once. */
  pollMs: number;
  /** Names this instance's claims. */
  token: string;
  onAttempt?: (outcome: 'delivered' | 'retried' | 'failed') => void;
  onError?: (err: unknown) => void;
}

/**
 * Resolves as usual, but refuses a name when any address it resolves to is not global (checked at connect
 * time, on the addresses the socket will use: a name cannot pass at create and point inward later).
 */
const publicOnly: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (err, address: string | LookupAddress[], family?: number) => {
    if (err) return callback(err, address as string, family);
    const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
    const refusal = all.map(egressRefusal).find((r) => r !== undefined);
    if (refusal !== undefined) {
      return callback(
        Object.assign(new Error(`${hostname} resolves to ${refusal}`), { code: 'EPRIVATE' }),
        address as string,
        family,
      );
    }
    callback(null, address as string, family);
  });
};

/** An attempt's answer: the HTTP status, or none; and why it failed, in words (null: a 2xx). */
export interface PostResult {
  status: number | undefined;
  error: string | null;
}

/** Words for a failed connection: the system's code and message (getaddrinfo ENOTFOUND host, …). */
export function errorText(err: unknown, timeoutMs: number): string {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'ETIMEDOUT_ATTEMPT') return `no answer within ${Math.round(timeoutMs / 100) / 10} s`;
  const message = String(e?.message ?? err);
  if (e?.code === 'ECONNREFUSED') return `connection refused (${message})`;
  if (e?.code === 'EPRIVATE') return `refused by WEBHOOK_DENY_PRIVATE: ${message}`;
  if (typeof e?.code === 'string' && /CERT|SSL|TLS/.test(e.code)) return `TLS: ${message} (${e.code})`;
  return message.slice(0, 500);
}

/** Posts `body`; answers the HTTP status, or none with the reason (refused, timed out, private, DNS). */
export function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  denyPrivate: boolean,
): Promise<PostResult> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  // A literal address is never looked up, so the lookup hook does not see it: judged here.
  const literal = denyPrivate && isIP(host) !== 0 ? egressRefusal(host) : undefined;
  if (literal !== undefined) {
    return Promise.resolve({
      status: undefined,
      error: `refused by WEBHOOK_DENY_PRIVATE: ${host} ${literal}`,
    });
  }
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    let failure: string | null = null;
    const done = (status: number | undefined) => {
      if (settled) return;
      settled = true;
      const ok = status !== undefined && status >= 200 && status < 300;
      const error = ok ? null : status !== undefined ? `HTTP ${status}` : (failure ?? 'no answer');
      resolve({ status, error });
    };
    const req = send(
      u,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        lookup: denyPrivate ? publicOnly : undefined,
      },
      (res) => {
        // The status is the answer; the body is read and dropped, within the same deadline.
        done(res.statusCode);
        res.resume();
        res.on('close', () => clearTimeout(deadline));
      },
    );
    // One deadline for the whole attempt (connect, answer, body), not an idle timeout.
    const deadline = setTimeout(
      () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT_ATTEMPT' })),
      timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(deadline);
      failure ??= errorText(err, timeoutMs);
      done(undefined);
    });
    req.on('close', () => {
      if (!settled) clearTimeout(deadline);
      done(undefined);
    });
    req.end(body);
  });
}

export class WebhookDelivery {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly o: WebhookDeliveryOptions) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), this.o.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Starts a round now (or right after the one running). */
  kick(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((err) => this.o.onError?.(err))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Stops claiming; waits for the attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
  }

  private async round(): Promise<void> {
    const now = Date.now();
    // The claim outlives the attempt's timeout: no other instance takes it while it may still be answered.
    const until = isoNow(now + this.o.timeoutMs + 5000);
    const due = await this.o.store.claimDue(this.o.token, isoNow(now), until, CLAIM_BATCH);
    await Promise.all(due.map((d) => this.attempt(d)));
    if (due.length === CLAIM_BATCH) this.again = true;
  }

  private async attempt(d: DueDelivery): Promise<void> {
    const body = deliveryBody(d.webhook.format, d.event);
    const now = Date.now();
    const timestamp = Math.floor(now / 1000);
    const secrets = signingSecrets(d.webhook, now);
    const headers: Record<string, string> = {
      'webhook-id': d.event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, d.event.id, timestamp, body),
      'user-agent': 'agentsplit-webhooks',
    };
    const { status, error } = await post(d.webhook.url, body, headers, this.o.timeoutMs, this.o.denyPrivate);
    const outcome = outcomeOf(status, d.attempts + 1, this.o.schedule);
    const at = Date.now();
    await this.o.store.recordAttempt(
      { webhookId: d.webhook.id, eventId: d.event.id, token: this.o.token },
      {
        status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        responseStatus: status ?? null,
        error,
        at: isoNow(at),
        nextAttemptAt: outcome.kind === 'retry' ? isoNow(at + outcome.afterSeconds * 1000) : null,
        deliveredAt: outcome.kind === 'delivered' ? isoNow(at) : null,
        disable: outcome.kind === 'failed' && outcome.disable,
      },
    );
    this.o.onAttempt?.(outcome.kind === 'retry' ? 'retried' : outcome.kind);
  }
}
