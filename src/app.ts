// buildApp(deps): plugins, auth, routes, error mapping and the OpenAPI document; no env, no port.
import { randomBytes } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { analysisRoutes } from './http/analysis.js';
import { assignRoutes } from './http/assign.js';
import { createAuthHook, createKeyCheck } from './http/auth.js';
import { registerJsonBodies } from './http/body-parser.js';
import { createFrameworkErrorHandler, registerErrorHandling } from './http/errors.js';
import { experimentRoutes } from './http/experiments.js';
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

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request ids: a random prefix per process and a counter (unique, and cheaper than a UUID each). */
function requestIds(): () => string {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const nextRequestId = requestIds();
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    requestIdHeader: false,
    // Reuse a caller's x-request-id when it is sane, so logs line up across services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId();
    },
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: createFrameworkErrorHandler(createKeyCheck(deps.apiKey)),
  });
  app.setValidatorCompiler(createValidatorCompiler());
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
  return app;
}
