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
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Query parameters whose values must never reach a log (a key sent in the URL by mistake). */
const SECRET_PARAM = /key|token|secret|password/i;

/** The URL with the values of secret-looking query parameters replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {}
      return SECRET_PARAM.test(decoded) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

export function createRequestLog(log: Logger, options: RequestLogOptions): RequestLog {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  // A database outage fails every write: one warning a second, with how many were answered 503 meanwhile.
  let lastOutageLine = 0;
  let outageCount = 0;

  const id = (req: IncomingMessage): string => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given)
      ? given
      : `${prefix}-${(++counter).toString(36)}`;
  };

  const line = (req: IncomingMessage, reqId: string | undefined, status: number, ms: number) => ({
    reqId: reqId ?? id(req),
    method: req.method,
    url: redactUrl(req.url ?? ''),
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
            { ...line(req, reqId, status, ms), err: err.cause ?? err, unavailableAnswers: outageCount },
            'database unavailable: answered 503',
          );
          outageCount = 0;
        } else log.error({ ...line(req, reqId, status, ms), err }, 'request failed');
        return;
      }
      if (ms > options.slowMs) log.warn(line(req, reqId, status, ms), 'slow request');
      else if (log.isLevelEnabled('debug')) log.debug(line(req, reqId, status, ms), 'request');
    },
  };
}
