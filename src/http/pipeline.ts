// The one request pipeline (ADR 0022): every request for a declared route, from the socket or from
// inject(), passes these stages in this order, each once:
//
//   1. early gates   closing (503), Host
//   2. route         the one router; Content-Encoding (only routes taking bytes take gzip); CORS (a
//                    preflight is answered here, before any key)
//   3. authenticate  x-api-key (or Authorization: Bearer) → principal; a failure is 429 while its address or
//                    key prefix is locked out, else exactly {"error":"Unauthorized"} (counted for the lockout)
//   4. authorize     the key's scope and experiments (403); unknown routes 404 (with a key)
//   5. rate limit    the key's limit (429, RateLimit headers)
//   6. body          admission, then Content-Type and the body limit (413), read (bytes: inflated)
//   7. parse, validate  JSON (UTF-8, depth), then params, body and query string by the route's schemas
//   8. idempotency   Idempotency-Key: replay, 409 in flight, 422 reused (ADR 0016)
//   9. handle, serialize or map the error (a route may shape its own error bodies), and the request log line
//
// Every answer is written by writer.ts, through the outbox: answers ready in the turn they were made
// in leave together at its end; answers that waited for a commit leave as they settle (ADR 0010).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { NotFoundError, ValidationError } from '../core/errors.js';
import type { IdempotencyRecord } from '../core/idempotency.js';
import { type Principal, ROOT } from '../core/keys.js';
import { lockoutSubject } from '../core/lockout-subject.js';
import type { IdempotencyService } from '../services/idempotency.js';
import type { RateLimits } from '../services/rate-limits.js';
import { type Authenticate, isPublicPath, presentedKey, refusal, UNAUTHORIZED } from './auth.js';
import { bodyKind, contentTypeProblem, parseJsonBody, readBody } from './body.js';
import { encodingTaken, takeBytes } from './bytes-body.js';
import type { ClientAddress } from './client-address.js';
import type { CompiledRoute } from './compile.js';
import type { Cors } from './cors.js';
import { errorAnswer, errorBody } from './errors.js';
import { IDEMPOTENCY_HEADER, runIdempotently } from './idempotency.js';
import { isRelayed } from './inject.js';
import { createOutbox } from './outbox.js';
import { isPreflight, limitHeaders, tooManyHeaders, tooManyMessage } from './rate-limit.js';
import type { RequestLog } from './request-log.js';
import type { RawBody, RouteFailure } from './route.js';
import { createRouter, type Found, pathOf } from './router.js';
import { bodyPending, invalid, serialize } from './serialize.js';
import type { Answer } from './writer.js';

export interface PipelineDeps {
  routes: CompiledRoute[];
  /** Who presents an x-api-key (null: nobody known). */
  authenticate: Authenticate;
  /** The live managed key's prefix a wrong key starts with (its failures are counted under it too). */
  livePrefixOf?: (presented: unknown) => string | undefined;
  /** Who the client is (TRUST_PROXY); absent: the socket's peer. */
  clientAddress?: ClientAddress;
  bodyLimit: number;
  /** Longest path parameter (longer: 404). */
  maxParamLength: number;
  log: RequestLog;
  idempotency: IdempotencyService;
  /** Per-key limits and the failed-authentication lockout (ADR 0017); absent: none. */
  rateLimits?: RateLimits;
  /** Absent: CORS off. */
  cors?: Cors;
  /** Writing an answer threw (its connection is then dropped). */
  onWriteError: (err: unknown) => void;
  /** True once the server is closing: requests get 503 with Retry-After, and the connection closes. */
  closing(): boolean;
  /** Public paths no route declares (the API documentation, the dashboard's files) are its to answer. */
  fallback?: (req: IncomingMessage, res: ServerResponse) => void;
}

export type Pipeline = (req: IncomingMessage, res: ServerResponse) => void;

/** Methods whose requests carry no body to read (Fastify's list, which this API kept). */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE']);

/** Content-Type spellings that need no further look (most clients send one of these). */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);

export function createPipeline(deps: PipelineDeps): Pipeline {
  const router = createRouter(deps.routes, deps.maxParamLength);
  const outbox = createOutbox(deps.onWriteError);
  const { bodyLimit, log, rateLimits } = deps;

  /**
   * The body limit of a request to this route: its own when it has one, except for chunked bodies, whose
   * declared sizes are checked against the server's limit before routing (node-adapter.ts); a route taking
   * bytes has its own for both (the adapter checks chunked ones against it too).
   */
  const limitOf = (found: Found | undefined, req: IncomingMessage): number => {
    const bytes = found?.compiled.route.bytes;
    if (bytes !== undefined) return bytes.limit;
    const own = found?.compiled.route.bodyLimit;
    if (own === undefined || req.headers['transfer-encoding'] !== undefined) return bodyLimit;
    return Math.max(own, bodyLimit);
  };

  return (req, res) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    /** Headers stages add to whatever answer comes (CORS, RateLimit). */
    let added: Record<string, string> | undefined;
    let routeUrl: string | undefined;
    /** The route once admitted past key, scope and rate limit: its own errors may take its shape. */
    let admitted: Found | undefined;

    /** Writes the answer (queued when made in this turn) and logs it; `err` is what made a 5xx. */
    const answer = (a: Answer, later: boolean, err?: unknown, logged = true): void => {
      if (added !== undefined) a.headers = a.headers === undefined ? added : { ...added, ...a.headers };
      if (a.close !== true && bodyPending(req)) a.close = true;
      if (later) outbox.writeNow(res, a);
      else outbox.queue(res, a);
      if (logged) log.answered(req, undefined, a.status, performance.now() - started, err, routeUrl);
    };
    const fail = (
      err: unknown,
      later: boolean,
      close = false,
      stage: RouteFailure['stage'] = 'handle',
    ): void => {
      const e = errorAnswer(err, limitOf(admitted, req));
      const headers = e.retryAfter === undefined ? undefined : { 'retry-after': String(e.retryAfter) };
      const shape = admitted?.compiled.route.errorBody;
      const shaped =
        shape === undefined
          ? e.body
          : shape({
              status: e.status,
              message: e.message,
              stage,
              error: err,
              params: admitted!.params,
              headers: req.headers,
            });
      const [type, body] = typeof shaped === 'string' ? [undefined, shaped] : [shaped.type, shaped.body];
      answer({ status: e.status, type, body, headers, close }, later, e.status >= 500 ? err : undefined);
    };

    // 1. Early gates: nothing about the key yet. Closing: refused before any other check
    // (even without a key), with close, so a load balancer retries it on another instance. Not a failure,
    // so no request line: "shutting down" is logged once.
    if (deps.closing()) {
      const message = 'the service is shutting down; retry on another instance';
      answer(
        { status: 503, body: errorBody(message), headers: { 'retry-after': '1' }, close: true },
        false,
        undefined,
        false,
      );
      return;
    }
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      answer({ status: 400, body: errorBody('the Host header is required in HTTP/1.1'), close: true }, false);
      return;
    }
    // 2. The route, and CORS.
    const found = router.find(method, url);
    // A compressed body would be read as JSON text and refused as malformed, or worse, accepted: say
    // what is wrong instead (this API takes bodies uncompressed; routes taking bytes may take gzip).
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && !encodingTaken(encoding, found?.compiled.route.bytes)) {
      const message = `Content-Encoding '${encoding.slice(0, 40)}' is not supported: send the body uncompressed`;
      answer({ status: 415, body: errorBody(message), close: true }, false);
      return;
    }
    if (found === null && deps.fallback !== undefined && isPublicPath(url)) {
      deps.fallback(req, res);
      return;
    }
    const route = found ?? undefined;
    routeUrl = route?.compiled.route.url;
    if (deps.cors !== undefined) {
      const cors = deps.cors(method, req.headers);
      added = cors.headers;
      if (cors.preflight) {
        answer({ status: 204, headers: { 'content-length': '0' } }, false);
        return;
      }
    }

    // 3. Authenticate. The key is checked first, so a valid key is served whatever others failed from its
    // address (issue 34). A failure, while its address or its key prefix is locked out, is refused 429 (and
    // not counted); else it counts toward both lockouts before its 401 leaves (so the next failure already
    // sees a refusal). A browser's preflight is no guess at a key: neither refused nor counted.
    let principal: Principal = ROOT;
    const open = route?.compiled.route.scope === 'public' || (route === undefined && isPublicPath(url));
    if (!open) {
      const presented = presentedKey(req.headers);
      const who = deps.authenticate(presented);
      if (who === null) {
        if (rateLimits === undefined || isPreflight(method, req.headers)) {
          answer({ status: 401, body: UNAUTHORIZED }, false);
          return;
        }
        // Counted per /64 for IPv6 (core/lockout-subject.ts).
        const client = lockoutSubject(
          deps.clientAddress === undefined ? req.socket?.remoteAddress : deps.clientAddress(req),
        );
        const prefix = deps.livePrefixOf?.(presented);
        const refused = rateLimits.refusedFailure(client, prefix);
        if (refused !== null) {
          const headers = tooManyHeaders(refused);
          answer({ status: 429, body: errorBody(tooManyMessage(refused)), headers, close: true }, false);
          return;
        }
        const unauthorized = () => answer({ status: 401, body: UNAUTHORIZED }, true);
        rateLimits.failedAuthentication(client, prefix).then(unauthorized, unauthorized);
        return;
      }
      principal = who;
    }

    // 4. Authorize.
    if (route === undefined) {
      answer({ status: 404, body: errorBody(`no route ${method} ${pathOf(url)}`) }, false);
      return;
    }
    if (route.unfit !== undefined) {
      // Refused in the route's own shape (OFREP's failure body on its routes).
      admitted = route;
      const unfit =
        route.unfit === 'bad-url'
          ? new ValidationError('the URL is not valid percent-encoding')
          : new NotFoundError('no experiment with a slug that long');
      fail(unfit, false, false, 'url');
      return;
    }
    const problem = refusal(principal, route.compiled.route, route.params);
    if (problem !== null) {
      answer({ status: 403, body: errorBody(problem) }, false);
      return;
    }

    // 5. Rate limit: asked only when the key has one (not for relayed requests: their outer one counted).
    const limit = rateLimits === undefined || open || isRelayed(req) ? 0 : rateLimits.limitOf(principal);
    if (limit === 0) {
      admit(route, principal, false);
      return;
    }
    rateLimits!.consume(principal, limit).then(
      (decision) => {
        if (decision.allowed) {
          added = { ...added, ...limitHeaders(decision) };
          admit(route, principal, true);
          return;
        }
        const headers = tooManyHeaders(decision);
        answer({ status: 429, body: errorBody(tooManyMessage(decision)), headers }, true);
      },
      // Counting never fails (Redis errors fall back to memory); if it did, the request is served.
      () => admit(route, principal, true),
    );

    // 6. The body: heavy routes wait for a slot before theirs is read.
    function admit(found: Found, principal: Principal, later: boolean): void {
      admitted = found;
      const admission = found.compiled.admission;
      if (admission === undefined) takeBody(found, principal, later);
      else admission.admit(res, () => takeBody(found, principal, later));
    }

    function takeBody(found: Found, principal: Principal, later: boolean): void {
      if (BODYLESS.has(method)) {
        handle(found, principal, undefined, later);
        return;
      }
      const bytes = found.compiled.route.bytes;
      if (bytes !== undefined) {
        takeBytes(req, bytes, (err, raw) => {
          if (err !== null) fail(err, false, true, 'body');
          else handle(found, principal, undefined, false, raw);
        });
        return;
      }
      const kind = bodyKind(req.headers);
      if (kind === 'none') handle(found, principal, undefined, later);
      else if (kind === 'malformed')
        fail(new ValidationError('Content-Type must be application/json'), later, false, 'body');
      else if (kind === 'refused') {
        fail(new ValidationError(contentTypeProblem(req.headers['content-type'])!), later, true, 'body');
      } else {
        // Called from the request's events: answers made there leave with the others of this I/O phase.
        readBody(req, limitOf(found, req), (err, bytes) => {
          if (err !== null) fail(err, false, true, 'body');
          else handle(found, principal, bytes, false);
        });
      }
    }

    // 7–9. Parse, validate, idempotency, handle, serialize.
    function handle(
      found: Found,
      principal: Principal,
      bytes: Buffer | undefined,
      later: boolean,
      raw?: RawBody,
    ): void {
      const { compiled } = found;
      let body: unknown;
      if (bytes !== undefined) {
        try {
          const type = req.headers['content-type']!;
          const problem = PLAIN_JSON.has(type) ? null : contentTypeProblem(type);
          if (problem !== null) throw new ValidationError(problem);
          body = parseJsonBody(bytes);
        } catch (err) {
          // As after any body parser's error: the connection closes with the answer.
          fail(err, later, true, 'body');
          return;
        }
      }
      let value: unknown;
      let stage: RouteFailure['stage'] = 'validation';
      try {
        // As Fastify validated: params, then the body, then the query string; an absent part as null.
        const params = { ...found.params };
        const holder = { params, body, query: parseQuery(url.slice(pathOf(url).length + 1)) };
        const vp = compiled.validateParams;
        if (vp !== undefined && !vp(holder.params ?? null)) throw invalid('params', vp);
        const vb = compiled.validateBody;
        if (vb !== undefined && !vb(holder.body ?? null)) throw invalid('body', vb);
        const vq = compiled.validateQuery;
        if (vq !== undefined && !vq(holder.query)) throw invalid('querystring', vq);
        stage = 'handle';
        const run = (record?: (answer: unknown) => IdempotencyRecord) =>
          compiled.route.handle({
            params,
            query: holder.query,
            body,
            principal,
            headers: req.headers,
            idempotency: record,
            raw,
          } as never);
        if (compiled.route.idempotent === true && req.headers[IDEMPOTENCY_HEADER] !== undefined) {
          value = runIdempotently(
            deps.idempotency,
            { method, url, headers: req.headers, body: bytes },
            compiled,
            principal,
            async (record) => run(record),
          ).then((r) => ('replay' in r ? r.replay : serialize(req, compiled, r.value)));
        } else {
          const ran = run();
          if (ran instanceof Promise) {
            // One hop from the handler's settling to the answer (a commit settles many at once).
            ran.then(
              (v) => {
                let a: Answer | Promise<Answer>;
                try {
                  a = serialize(req, compiled, v);
                } catch (err) {
                  fail(err, true);
                  return;
                }
                if (a instanceof Promise)
                  a.then(
                    (x) => answer(x, true),
                    (err) => fail(err, true),
                  );
                else answer(a, true);
              },
              (err) => fail(err, true),
            );
            return;
          }
          value = serialize(req, compiled, ran);
        }
      } catch (err) {
        fail(err, later, false, stage);
        return;
      }
      if (value instanceof Promise) {
        value.then(
          (a: Answer) => answer(a, true),
          (err) => fail(err, true),
        );
      } else answer(value as Answer, later);
    }
  };
}
