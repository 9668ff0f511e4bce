// buildApp(deps): the route declarations, both transports registered from them, auth, error mapping,
// request logs and the OpenAPI document; no env, no port.
import {
  createServer,
  type IncomingMessage,
  type ServerOptions,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { type Duplex, PassThrough } from 'node:stream';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import pino, { type Logger } from 'pino';
import { analysisRoutes } from './http/analysis.js';
import { assignRoutes } from './http/assign.js';
import { createAuthHook } from './http/auth.js';
import { bodyTooLarge, chunkWatch, watchChunkedBody } from './http/chunked-limit.js';
import { compileRoute } from './http/compile.js';
import { corsOptions } from './http/cors.js';
import { registerDashboard } from './http/dashboard.js';
import { errorBody } from './http/errors.js';
import { experimentRoutes } from './http/experiments.js';
import { createFastTransport, type FastTransport } from './http/fast-transport.js';
import {
  createClientErrorHandler,
  createFrameworkErrorHandler,
  registerErrorHandling,
  registerJsonBodies,
  registerRoutes,
} from './http/fastify-transport.js';
import { healthRoutes } from './http/health.js';
import { keyRoutes } from './http/keys.js';
import { localEvaluationRoutes } from './http/local-evaluation.js';
import { metricsRoutes } from './http/metrics.js';
import { createFailedAuthHook, createKeyLimitHook, refusedAddressAnswer } from './http/rate-limit.js';
import { createRequestLog } from './http/request-log.js';
import { resultRoutes } from './http/results.js';
import { nameSchemas } from './http/schemas.js';
import { DOCS_CSP, SECURITY_HEADERS, securityHeadersHook } from './http/security-headers.js';
import { timeseriesRoutes } from './http/timeseries.js';
import { createValidatorCompiler } from './http/validation.js';
import type { Metrics } from './metrics.js';
import type { AnalysisService } from './services/analysis.js';
import type { Assign } from './services/assignments.js';
import type { ExperimentCache } from './services/experiment-cache.js';
import type { ExperimentService } from './services/experiments.js';
import type { ExposureService } from './services/exposures.js';
import type { FeedbackService } from './services/feedback.js';
import type { IdempotencyService } from './services/idempotency.js';
import type { KeyService } from './services/keys.js';
import type { RateLimits } from './services/rate-limits.js';
import type { ResultService } from './services/results.js';
import type { TimeseriesService } from './services/timeseries.js';
import type { Store } from './store/store.js';

export interface AppDeps {
  /** Who presents an x-api-key: the root key (API_KEY) and managed keys. */
  keys: KeyService;
  idempotency: IdempotencyService;
  experiments: ExperimentService;
  assign: Assign;
  /** What clients that assign in-process read (the running experiments) and write (their exposures). */
  live: Pick<ExperimentCache, 'list' | 'revision'>;
  exposures: ExposureService;
  results: ResultService;
  feedback: FeedbackService;
  analysis: AnalysisService;
  timeseries: TimeseriesService;
  store: Pick<Store, 'ping'>;
  /** Bytes; bodies above it get 413. */
  bodyLimit?: number;
  /** A request (headers and body) must arrive within this many ms, else 408. */
  bodyTimeoutMs?: number;
  /** Requests slower than this are logged at warn. */
  slowRequestMs?: number;
  /** Origins browsers may call from (`*`: any); absent or empty: CORS off. */
  corsOrigins?: string[];
  /** Default: silent. */
  logger?: Logger;
  /** The root key (API_KEY): never written to a log, wherever a request carries it (ADR 0013). */
  rootKey?: string;
  /** This runtime's Prometheus metrics: every answer is counted, GET /metrics serves them. */
  metrics: Metrics;
  /** Per-key limits and failed-authentication throttling (ADR 0017); absent: none (unit tests). */
  rateLimits?: RateLimits;
}

/** The options Fastify applies to the HTTP server it builds; `serverFactory` must apply them itself. */
interface ServerTimeouts {
  http?: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

const MAX_PARAM_LENGTH = 1000;

/** An error answer written by the server's own handler, ahead of both transports; the connection closes. */
function answerAndClose(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = errorBody(message);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body);
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const authenticate = (presented: unknown) => deps.keys.authenticate(presented);
  const bodyLimit = deps.bodyLimit ?? 1024 * 1024;
  const bodyTimeoutMs = deps.bodyTimeoutMs ?? 30_000;
  const logger = deps.logger ?? pino({ level: 'silent' });
  const requestLog = createRequestLog(logger, {
    slowMs: deps.slowRequestMs ?? 1000,
    metrics: deps.metrics,
    secrets: deps.rootKey === undefined ? [] : [deps.rootKey],
  });
  const validatorCompiler = createValidatorCompiler();
  // Set once the routes exist, and unset when closing (Fastify then answers 503 so clients retry elsewhere).
  let fast: FastTransport | null = null;
  let closing = false;
  const app = Fastify({
    // The server Fastify would build (same timeouts), with the fast transport in front of its router.
    serverFactory: (handler, serverOptions) => {
      const options = serverOptions as unknown as ServerTimeouts;
      const server = createServer(
        {
          ...options.http,
          // A missing Host is answered below in this API's error shape, not with Node's empty 400.
          requireHostHeader: false,
          headersTimeout: bodyTimeoutMs,
          // How often the request deadline is checked (Node's default, 30 s, would let it slip that long).
          connectionsCheckingInterval: Math.min(1000, bodyTimeoutMs),
        },
        (req, res) => {
          // Closing: a request on a kept-alive connection is refused before any other check (even
          // without a key), with close, so a load balancer retries it on another instance. Not a
          // failure, so no request line: "shutting down" is logged once.
          if (closing) {
            answerAndClose(res, 503, 'the service is shutting down; retry on another instance', {
              'retry-after': '1',
            });
            return;
          }
          if (req.headers.host === undefined && req.httpVersion === '1.1') {
            answerAndClose(res, 400, 'the Host header is required in HTTP/1.1');
            requestLog.answered(req, undefined, 400, 0);
            return;
          }
          // A compressed body would be read as JSON text and refused as malformed, or worse, accepted:
          // say what is wrong instead (this API takes bodies uncompressed).
          const encoding = req.headers['content-encoding'];
          if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
            answerAndClose(
              res,
              415,
              `Content-Encoding '${encoding.slice(0, 40)}' is not supported: send the body uncompressed`,
            );
            requestLog.answered(req, undefined, 415, 0);
            return;
          }
          // An address refused after too many failed authentications: 429 before any key work.
          const refused = deps.rateLimits && refusedAddressAnswer(deps.rateLimits, req);
          if (refused) {
            answerAndClose(res, 429, refused.message, refused.headers);
            requestLog.answered(req, undefined, 429, 0);
            return;
          }
          // A chunked body's declared sizes are followed from here (the rest of this read is still in
          // the parser's buffer); the preParsing hook below answers 413 once they pass the limit.
          if (req.headers['transfer-encoding'] !== undefined) watchChunkedBody(req, bodyLimit);
          if (fast === null || !fast(req, res)) handler(req, res);
        },
      );
      // An Expect other than 100-continue: Node answers 417 with an empty body; this API's 4xx are JSON.
      server.on('checkExpectation', (req, res) => {
        const expect = String(req.headers.expect ?? '').slice(0, 40);
        answerAndClose(res, 417, `Expect '${expect}' is not supported (only 100-continue)`);
        requestLog.answered(req, undefined, 417, 0);
      });
      // CONNECT (a proxy tunnel): Node hands the socket over, or without a listener drops it unanswered.
      server.on('connect', (req: IncomingMessage, socket: Duplex) => {
        const body = errorBody('CONNECT is not supported');
        const headers = { ...SECURITY_HEADERS, allow: 'GET, HEAD, POST, PATCH, DELETE, OPTIONS' };
        socket.on('error', () => undefined);
        // Whatever the client sends after it is read and dropped; the socket closes once answered.
        socket.resume();
        socket.end(
          `HTTP/1.1 405 ${STATUS_CODES[405]}\r\nConnection: close\r\n` +
            'Content-Type: application/json; charset=utf-8\r\n' +
            Object.entries(headers)
              .map(([name, value]) => `${name}: ${value}\r\n`)
              .join('') +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          () => socket.destroy(),
        );
        requestLog.answered(req, undefined, 405, 0);
      });
      server.keepAliveTimeout = options.keepAliveTimeout;
      server.requestTimeout = options.requestTimeout;
      server.setTimeout(options.connectionTimeout);
      if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
      return server;
    },
    loggerInstance: logger as FastifyBaseLogger,
    // Answered above in this API's error shape, with Retry-After.
    return503OnClosing: false,
    // Request lines are written by the request log, the same for both transports (ADR 0013).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    requestTimeout: bodyTimeoutMs,
    requestIdHeader: false,
    genReqId: requestLog.id,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: createFrameworkErrorHandler(
      authenticate,
      deps.rateLimits &&
        ((request) => deps.rateLimits!.failedAuthentication(request.raw.socket.remoteAddress)),
    ),
    clientErrorHandler: createClientErrorHandler(bodyTimeoutMs, bodyLimit),
  });
  app.setValidatorCompiler(validatorCompiler);
  registerJsonBodies(app);
  registerErrorHandling(app, bodyLimit, requestLog);
  // Before auth: every answer carries the security headers, and a CORS preflight (which never carries
  // a key) is answered.
  app.addHook('onRequest', securityHeadersHook);
  // A chunked body declared larger than the limit is 413 (after the key check, as for a Content-Length
  // over it), as soon as the sizes say so: before reading, or through a stream that fails then, whatever
  // has arrived (the parser would otherwise wait for every declared byte).
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const watch = chunkWatch(request.raw);
    if (watch === undefined) return done(null, payload);
    if (watch.over) return done(bodyTooLarge(), payload);
    const body = new PassThrough();
    // Failed once the body is being read (the request may still wait for an admission slot).
    const fail = () => body.destroy(bodyTooLarge());
    watch.onOver = () => (body.readableFlowing === true ? fail() : body.once('resume', fail));
    body.on('error', () => undefined);
    payload.on('error', (err) => body.destroy(err));
    payload.pipe(body);
    done(null, body);
  });
  const corsOn = deps.corsOrigins !== undefined && deps.corsOrigins.length > 0;
  if (corsOn) await app.register(cors, corsOptions(deps.corsOrigins!));
  app.addHook('onRequest', createAuthHook(authenticate));
  if (deps.rateLimits !== undefined) {
    app.addHook('onRequest', createKeyLimitHook(deps.rateLimits));
    app.addHook('onSend', createFailedAuthHook(deps.rateLimits));
  }

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'agentsplit',
        version: '0.1.0',
        description: 'A/B testing for AI agents and prompt workflows: assign variants, log results.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
      security: [{ apiKey: [] }],
    },
    // Titled route schemas become named schemas (components.schemas), referenced from the paths; the
    // route schemas stay inline, so validation and serialization are untouched.
    transformObject: (document) =>
      'openapiObject' in document ? nameSchemas(document.openapiObject) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP });

  const routes = [
    ...healthRoutes(deps.store),
    ...experimentRoutes(deps.experiments),
    ...assignRoutes(deps.assign),
    ...resultRoutes(deps.results, deps.feedback),
    ...localEvaluationRoutes(deps.live, deps.exposures),
    ...analysisRoutes(deps.analysis),
    ...timeseriesRoutes(deps.timeseries),
    ...keyRoutes(deps.keys),
    ...metricsRoutes(deps.metrics),
  ].map((r) => compileRoute(r, validatorCompiler));
  registerRoutes(app, routes, deps.idempotency);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The dashboard (issue 16): static pages at /ui/ and GET / → /ui/; no key (auth.ts lets them through).
  await registerDashboard(app);

  fast = createFastTransport({
    routes: routes.filter((c) => c.route.fast === true),
    authenticate,
    bodyLimit,
    maxParamLength: MAX_PARAM_LENGTH,
    log: requestLog,
    onWriteError: (err) => logger.error({ err }, 'writing an answer failed'),
    corsEnabled: corsOn,
    rateLimits: deps.rateLimits,
  });
  app.addHook('preClose', (done) => {
    fast = null;
    closing = true;
    done();
  });
  return app;
}
