// The fast transport: the routes declared `fast` (assign, log, logs) answered on node:http directly,
// ahead of Fastify's router (ADR 0005), at every log level.
//
// Fastify's per-request machinery (routing, hooks, the reply object, the body parser's async scope)
// costs more than an assignment does. This transport takes only requests whose headers are plainly
// well-formed (a fast route, the right key, JSON, a content-length within the limit) and hands everything
// else to Fastify untouched. What it does with a body is what Fastify does, through the same functions:
// parseJsonBody, the route's validator and serializer, errorAnswer, and the request log.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../core/keys.js';
import type { RateLimits } from '../services/rate-limits.js';
import { type Authenticate, refusal } from './auth.js';
import { parseJsonBody } from './body.js';
import type { CompiledRoute } from './compile.js';
import { errorAnswer, errorBody, invalidBody } from './errors.js';
import { IDEMPOTENCY_HEADER } from './idempotency.js';
import { createOutbox } from './outbox.js';
import { setLimitHeaders, tooManyMessage } from './rate-limit.js';
import type { RequestLog } from './request-log.js';
import { JsonText } from './route.js';

export interface FastTransportDeps {
  routes: CompiledRoute[];
  /** Who presents an x-api-key (null: not a key; Fastify then answers 401). */
  authenticate: Authenticate;
  bodyLimit: number;
  /** Longest path parameter Fastify accepts (longer ones are Fastify's to refuse). */
  maxParamLength: number;
  log: RequestLog;
  /** Writing an answer threw (its connection is then dropped). */
  onWriteError: (err: unknown) => void;
  /** CORS is on: requests with an Origin header are left to Fastify, which adds the CORS headers. */
  corsEnabled?: boolean;
  /** Per-key rate limits (ADR 0017): counted here for the requests this transport takes. */
  rateLimits?: RateLimits;
}

/** Returns true when it took the request (and will answer it); false leaves it to Fastify. */
export type FastTransport = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Content types taken as they are; any other spelling goes to Fastify, which judges it. */
const JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
const LENGTH = /^[1-9][0-9]{0,8}$/;

type Match = readonly [CompiledRoute, Readonly<Record<string, string>>] | null;

interface Matcher {
  compiled: CompiledRoute;
  /** The path's segments: a string to match as is, or null for a parameter. */
  segments: Array<string | null>;
  names: string[];
}

function matcher(compiled: CompiledRoute): Matcher {
  const parts = compiled.route.url.split('/');
  return {
    compiled,
    segments: parts.map((p) => (p.startsWith(':') ? null : p)),
    names: parts.filter((p) => p.startsWith(':')).map((p) => p.slice(1)),
  };
}

export function createFastTransport(deps: FastTransportDeps): FastTransport {
  const matchers = deps.routes.filter((c) => c.route.method === 'POST').map(matcher);
  const outbox = createOutbox(deps.onWriteError);

  /**
   * What each route URL seen lately matched: a service's clients call a handful of URLs (one per
   * experiment and route) over and over, so splitting each one again was garbage on every request.
   * Bounded: only short URLs that name a route are kept (anyone may send any URL before the key is
   * checked), and the map is emptied when full. The parameters are frozen, as every request to the URL
   * shares them.
   */
  const matched = new Map<string, Match>();
  const MATCHES_KEPT = 1024;
  const LONGEST_KEPT = 256;
  function match(url: string): Match {
    let found = matched.get(url);
    if (found === undefined) {
      found = matchOnce(url);
      if (found !== null && url.length <= LONGEST_KEPT) {
        if (matched.size >= MATCHES_KEPT) matched.clear();
        matched.set(url, found);
      }
    }
    return found;
  }

  /** The route and its parameters; null for anything else, including percent-encoded or over-long values. */
  function matchOnce(url: string): Match {
    const q = url.indexOf('?');
    const parts = (q === -1 ? url : url.slice(0, q)).split('/');
    for (const m of matchers) {
      if (m.segments.length !== parts.length) continue;
      const values: string[] = [];
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const want = m.segments[i];
        const part = parts[i]!;
        if (want === null) {
          ok = part.length > 0 && part.length <= deps.maxParamLength && !part.includes('%');
          values.push(part);
        } else ok = part === want;
      }
      if (!ok) continue;
      const params: Record<string, string> = {};
      m.names.forEach((name, i) => {
        params[name] = values[i]!;
      });
      return [m.compiled, Object.freeze(params)];
    }
    return null;
  }

  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    compiled: CompiledRoute,
    params: Record<string, string>,
    principal: Principal,
    bytes: Buffer,
    started: number,
  ): void {
    const fail = (err: unknown, later: boolean) => {
      const a = errorAnswer(err, deps.bodyLimit);
      if (later) outbox.write(res, a.status, a.body, a.retryAfter);
      else outbox.send(res, a.status, a.body, a.retryAfter);
      deps.log.answered(
        req,
        undefined,
        a.status,
        performance.now() - started,
        a.status >= 500 ? err : undefined,
        compiled.route.url,
      );
    };
    const succeed = (value: unknown, later: boolean) => {
      let text: string;
      try {
        text = value instanceof JsonText ? value.text : compiled.serialize(value);
      } catch (err) {
        fail(err, later);
        return;
      }
      // Answers settled by one commit already leave together, in one run of microtasks (ADR 0010).
      if (later) outbox.write(res, compiled.status, text);
      else outbox.send(res, compiled.status, text);
      deps.log.answered(
        req,
        undefined,
        compiled.status,
        performance.now() - started,
        undefined,
        compiled.route.url,
      );
    };
    let answer: unknown;
    let body: unknown;
    try {
      body = parseJsonBody(bytes);
    } catch (err) {
      // As Fastify does after a body parser's error: the connection closes with the answer.
      res.shouldKeepAlive = false;
      fail(err, false);
      return;
    }
    try {
      const validate = compiled.validateBody;
      if (validate !== undefined && !validate(body)) throw invalidBody(validate.errors);
      answer = compiled.route.handle({ params, query: undefined, body, principal } as never);
    } catch (err) {
      fail(err, false);
      return;
    }
    if (answer instanceof Promise)
      answer.then(
        (value) => succeed(value, true),
        (err) => fail(err, true),
      );
    else succeed(answer, false);
  }

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const found = match(req.url ?? '');
    if (found === null) return false;
    const headers = req.headers;
    if (deps.corsEnabled === true && headers.origin !== undefined) return false;
    const type = headers['content-type'];
    const length = headers['content-length'];
    // What the fast transport does not take, Fastify answers: a missing key (401) or scope (403), and
    // Idempotency-Keys (one implementation, ADR 0016).
    const principal = deps.authenticate(headers['x-api-key']);
    if (
      principal === null ||
      headers[IDEMPOTENCY_HEADER] !== undefined ||
      type === undefined ||
      !JSON_TYPES.has(type.toLowerCase()) ||
      length === undefined ||
      headers['transfer-encoding'] !== undefined ||
      !LENGTH.test(length) ||
      Number(length) > deps.bodyLimit
    ) {
      return false;
    }
    const [compiled, params] = found;
    if (refusal(principal, compiled.route, params) !== null) return false;
    const started = performance.now();
    // A key with a rate limit is counted here, once the request is this transport's (as Fastify counts
    // right after its auth hook), while the body arrives. Without a limit nothing more is done.
    const limit = deps.rateLimits === undefined ? 0 : deps.rateLimits.limitOf(principal);
    const counted = limit === 0 ? undefined : deps.rateLimits!.consume(principal, limit);
    const expected = Number(length);
    const read = () => {
      const chunks: Buffer[] = [];
      let received = 0;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        chunks.push(chunk);
      });
      req.on('end', () => {
        // Node's parser delivers exactly content-length bytes; anything else is a broken request.
        if (received !== expected) {
          outbox.send(
            res,
            400,
            JSON.stringify({ error: `body length ${received} does not match content-length ${expected}` }),
          );
          deps.log.answered(req, undefined, 400, performance.now() - started, undefined, compiled.route.url);
          return;
        }
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        if (counted === undefined) {
          respond(req, res, compiled, params, principal, bytes, started);
          return;
        }
        counted.then(
          (verdict) => {
            setLimitHeaders(res, verdict);
            if (verdict.allowed) respond(req, res, compiled, params, principal, bytes, started);
            else {
              outbox.send(res, 429, errorBody(tooManyMessage(verdict)), verdict.resetSeconds);
              const ms = performance.now() - started;
              deps.log.answered(req, undefined, 429, ms, undefined, compiled.route.url);
            }
          },
          () => respond(req, res, compiled, params, principal, bytes, started),
        );
      });
    };
    // A client that goes away mid-body is simply not answered; the socket is already gone.
    req.on('error', () => undefined);
    if (compiled.admission !== undefined) compiled.admission.admit(res, read);
    else read();
    return true;
  };
}
