// buildApp(deps): plugins, auth, routes, error mapping and the OpenAPI document; no env, no port.
import { randomBytes } from 'node:crypto';
import { createServer, type ServerOptions } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { analysisRoutes } from './http/analysis.js';
import { assignRoutes } from './http/assign.js';
import { createAuthHook, createKeyCheck } from './http/auth.js';
import { registerJsonBodies } from './http/body-parser.js';
import { createFrameworkErrorHandler, registerErrorHandling } from './http/errors.js';
import { experimentRoutes } from './http/experiments.js';
import { createFastPath, type FastPath } from './http/fast-path.js';
import { createFastRoutes } from './http/fast-routes.js';
import { healthRoutes } from './http/health.js';
import { resultRoutes } from './http/results.js';
import { createValidatorCompiler } from './http/validation.js';
import type { AnalysisService } from './services/analysis.js';
import type { Assign } from './services/assignments.js';
import type { ExperimentService } from './services/experiments.js';
import type { ResultService } from './services/results.js';
import type { Store } from './store/store.js';

export interface AppDeps {
  apiKey: string;
  experiments: ExperimentService;
  assign: Assign;
  results: ResultService;
  analysis: AnalysisService;
  store: Pick<Store, 'ping'>;
  /** Bytes; bodies above it get 413. */
  bodyLimit?: number;
  logger?: FastifyServerOptions['logger'];
}

/** The options Fastify applies to the HTTP server it builds; `serverFactory` must apply them itself. */
interface ServerTimeouts {
  http?: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

/** Levels at which Fastify logs every request. */
const REQUEST_LOG_LEVELS = new Set(['info', 'debug', 'trace']);

/** The apps whose server answers assign and log on the fast path (so tests can tell which path ran). */
export const appsWithFastPath = new WeakSet<FastifyInstance>();

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request ids: a random prefix per process and a counter (unique, and cheaper than a UUID each). */
function requestIds(): () => string {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const nextRequestId = requestIds();
  const keyMatches = createKeyCheck(deps.apiKey);
  const bodyLimit = deps.bodyLimit ?? 1024 * 1024;
  const validatorCompiler = createValidatorCompiler();
  // Set once the routes exist; until then (and when requests are logged) Fastify answers everything.
  let fastPath: FastPath | null = null;
  const app = Fastify({
    // The server Fastify would build (same timeouts), with the assign/log fast path in front of its router.
    serverFactory: (handler, serverOptions) => {
      const options = serverOptions as unknown as ServerTimeouts;
      const server = createServer(options.http ?? {}, (req, res) => {
        if (fastPath === null || !fastPath(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = options.keepAliveTimeout;
      server.requestTimeout = options.requestTimeout;
      server.setTimeout(options.connectionTimeout);
      if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
      return server;
    },
    logger: deps.logger ?? false,
    bodyLimit,
    requestIdHeader: false,
    // Reuse a caller's x-request-id when it is sane, so logs line up across services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
    },
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: createFrameworkErrorHandler(keyMatches),
  });
  app.setValidatorCompiler(validatorCompiler);
  registerJsonBodies(app);
  registerErrorHandling(app);
  app.addHook('onRequest', createAuthHook(deps.apiKey));

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
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes(deps.store));
  await app.register(experimentRoutes(deps.experiments));
  await app.register(assignRoutes(deps.assign));
  await app.register(resultRoutes(deps.results));
  await app.register(analysisRoutes(deps.analysis));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Fastify logs every request at info and below; the fast path logs none, so it serves only when
  // request logs are off (LOG_LEVEL warn or quieter) and the two paths leave the same traces.
  if (!REQUEST_LOG_LEVELS.has(app.log.level)) {
    fastPath = createFastPath({
      routes: createFastRoutes(deps, validatorCompiler),
      keyMatches,
      bodyLimit,
      onError: (err) => app.log.error({ err }, 'unexpected failure'),
    });
    appsWithFastPath.add(app);
    // Closing: Fastify answers 503 (Connection: close) to requests on kept-alive connections so
    // clients retry elsewhere and the server can finish; the fast path must not keep them alive.
    app.addHook('preClose', (done) => {
      fastPath = null;
      done();
    });
  }
  return app;
}
