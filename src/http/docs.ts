// What Fastify still serves (ADR 0022): the API documentation (/docs, /openapi.json) and the dashboard's
// static files (/, /ui/), reached from the pipeline for public paths that no declared route matches.
// The declared routes are registered here for the OpenAPI document only: their schemas describe the
// API, their handlers are never reached (the pipeline serves those paths), and nothing is compiled.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { CompiledRoute } from './compile.js';
import { registerDashboard } from './dashboard.js';
import { errorAnswer, errorBody } from './errors.js';
import type { RequestLog } from './request-log.js';
import { nameSchemas } from './schemas.js';
import { DOCS_CSP, securityHeadersHook } from './security-headers.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export async function registerDocs(
  app: FastifyInstance,
  routes: CompiledRoute[],
  log: RequestLog,
  bodyLimit: number,
): Promise<void> {
  // Schemas here only document: nothing validates or serializes through Fastify.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('onRequest', securityHeadersHook);
  const failures = new WeakMap<object, unknown>();
  app.setErrorHandler((error, request, reply) => {
    const answer = errorAnswer(error, bodyLimit);
    if (answer.status >= 500) failures.set(request.raw, error);
    return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .type(JSON_TYPE)
      .send(errorBody(`no route ${request.method} ${request.url.split('?')[0]}`));
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    log.answered(
      request.raw,
      request.id,
      reply.statusCode,
      reply.elapsedTime,
      failures.get(request.raw),
      route,
    );
    done();
  });

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'agentsplit',
        version: '0.1.0',
        description: 'A/B testing for AI agents and prompt workflows: assign variants, log results.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          // What OpenFeature's OFREP providers and MCP clients send; every keyed route takes either.
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' },
        },
      },
      security: [{ apiKey: [] }],
    },
    // Titled route schemas become named schemas (components.schemas), referenced from the paths.
    transformObject: (document) =>
      'openapiObject' in document ? nameSchemas(document.openapiObject) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP });
  for (const { route } of routes) {
    app.route({
      method: route.method,
      url: route.url,
      schema: route.schema,
      handler: () => {
        throw new Error(`${route.method} ${route.url} is served by the pipeline`);
      },
    });
  }
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The dashboard (issue 16): static pages at /ui/ and GET / → /ui/; no key (public paths).
  await registerDashboard(app);
}
