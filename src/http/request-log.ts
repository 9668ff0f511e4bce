// What is logged about each request, for every transport alike (ADR 0013): one line shape
// {reqId, method, url, status, ms}; an access line only at debug; failures, database outages and slow
// requests at any level.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { UnavailableError } from '../core/errors.js';
import type { Metrics } from '../metrics.js';

export interface RequestLog {
  /** The request's id: the caller's x-request-id when sane, else a process prefix and a counter. */
  id(req: IncomingMessage): string;
  /**
   * Called once a request is answered; `err` is what made a 5xx, `route` the pattern of the route that
   * took it (`/experiment/:slug/assign`; none when no route matched).
   */
  answered(
    req: IncomingMessage,
    reqId: string | undefined,
    status: number,
    ms: number,
    err?: unknown,
    route?: string,
  ): void;
}

export interface RequestLogOptions {
  /** Requests slower than this are logged at warn whatever the level. */
  slowMs: number;
  /** Counts every answer by route, method and status, and its latency (the same for both transports). */
  metrics?: Pick<Metrics, 'answered' | 'databaseError'>;
  /** Never written (the root key): redacted wherever it appears, like anything shaped as a managed key. */
  secrets?: readonly string[];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Query parameters whose values must never reach a log (a key sent in the URL by mistake). */
const SECRET_PARAM = /key|token|secret|password|auth|credential/i;
/**
 * A managed key (`ask_` and 43 base64url characters), or 16 or more characters of one: fewer leave more
 * than 160 of its 256 bits unknown. Shorter runs stay readable (slugs may begin with `ask_`).
 */
const KEY_SHAPE = 'ask_[A-Za-z0-9_-]{16,}';
const REDACTED = '[redacted]';

/** Replaces every secret in a text (or returns the text as it is). */
export type Redact = (text: string) => string;

/**
 * What looks like a managed key becomes `ask_[redacted]`, and each of `secrets` (the root key) becomes
 * `[redacted]`, also where it is percent-encoded or escaped in JSON text (a whole log line).
 */
export function secretRedactor(secrets: readonly string[] = []): Redact {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
    try {
      forms.add(encodeURIComponent(secret));
    } catch {} // a lone surrogate: no percent-encoded form
  }
  const literal = [...forms]
    .sort((a, b) => b.length - a.length)
    .map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp([KEY_SHAPE, ...literal].join('|'), 'g');
  return (text) =>
    text.replace(pattern, (found) => (found.startsWith('ask_') ? `ask_${REDACTED}` : REDACTED));
}

const redactKeys = secretRedactor();

/** Each way a piece of a URL may be read: as sent, percent-decoded, and with `+` as a space. */
function readings(piece: string): string[] {
  const found: string[] = [];
  for (const text of [piece, piece.replace(/\+/g, ' ')]) {
    try {
      found.push(decodeURIComponent(text));
    } catch {}
  }
  return found;
}

/** A path segment or query name or value: secrets in it redacted, or all of it when one is encoded. */
function redactPiece(piece: string, redact: Redact): string {
  const shown = redact(piece);
  if (!piece.includes('%') && !piece.includes('+')) return shown;
  return readings(piece).some((text) => redact(text) !== text) ? REDACTED : shown;
}

/**
 * The URL with secrets redacted: the values of secret-looking query parameters, and anything that looks
 * like a managed key or is one of the redactor's secrets (the root key), in the path or the query,
 * percent-encoded or not.
 */
export function redactUrl(sent: string, redact: Redact = redactKeys): string {
  // First as a whole (a secret may hold a '/', '&' or '='), then piece by piece (encoded ones).
  const url = redact(sent);
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const shownPath = path.includes('%')
    ? path
        .split('/')
        .map((p) => redactPiece(p, redact))
        .join('/')
    : redact(path);
  if (q === -1) return shownPath;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      if (readings(name).some((decoded) => SECRET_PARAM.test(decoded)) || SECRET_PARAM.test(name)) {
        return `${redactPiece(name, redact)}=${REDACTED}`;
      }
      const shownName = redactPiece(name, redact);
      return eq === -1 ? shownName : `${shownName}=${redactPiece(pair.slice(eq + 1), redact)}`;
    });
  return `${shownPath}?${params.join('&')}`;
}

/** An error to log: as it is, or (when its message or stack holds a secret) a copy with them redacted. */
function redactError(err: unknown, redact: Redact): unknown {
  if (!(err instanceof Error)) return err;
  const message = redact(err.message);
  const stack = err.stack === undefined ? undefined : redact(err.stack);
  if (message === err.message && stack === err.stack) return err;
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message, stack, ...(code === undefined ? {} : { code }) };
}

export function createRequestLog(log: Logger, options: RequestLogOptions): RequestLog {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  // A database outage fails every write: one warning a second, with how many were answered 503 meanwhile.
  let lastOutageLine = 0;
  let outageCount = 0;
  const redact = secretRedactor(options.secrets);

  // An id that holds a key is not the caller's to keep: it is replaced, like one that is not sane.
  const id = (req: IncomingMessage): string => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given) && redact(given) === given
      ? given
      : `${prefix}-${(++counter).toString(36)}`;
  };

  const line = (req: IncomingMessage, reqId: string | undefined, status: number, ms: number) => ({
    reqId: reqId ?? id(req),
    method: req.method,
    url: redactUrl(req.url ?? '', redact),
    status,
    ms: Math.round(ms * 100) / 100,
  });

  return {
    id,
    answered(req, reqId, status, ms, err, route) {
      options.metrics?.answered(route, req.method, status, ms);
      if (status >= 500) {
        if (err instanceof UnavailableError) {
          options.metrics?.databaseError('request');
          outageCount++;
          const now = Date.now();
          if (now - lastOutageLine < 1000) return;
          lastOutageLine = now;
          log.warn(
            {
              ...line(req, reqId, status, ms),
              err: redactError(err.cause ?? err, redact),
              unavailableAnswers: outageCount,
            },
            'database unavailable: answered 503',
          );
          outageCount = 0;
        } else
          log.error({ ...line(req, reqId, status, ms), err: redactError(err, redact) }, 'request failed');
        return;
      }
      if (ms > options.slowMs) log.warn(line(req, reqId, status, ms), 'slow request');
      else if (log.isLevelEnabled('debug')) log.debug(line(req, reqId, status, ms), 'request');
    },
  };
}
